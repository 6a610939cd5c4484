import path from 'node:path';
import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'src/web',
  publicDir: path.resolve('src/web/public'),
  plugins: [react(), tailwindcss()],
  build: {
    outDir: path.resolve('dist/web'),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // Records the chunk graph for the page-weight test (scripts/prerender.ts moves it to dist/vite-manifest.json).
    manifest: true,
    // Every browser the site supports has modulepreload: no polyfill in the entry.
    modulePreload: { polyfill: false },
  },
  server: {
    proxy: {
      '/api': 'http://localhost:3000',
      '/auth/v1': 'http://localhost:3000',
    },
  },
});

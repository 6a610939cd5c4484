import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * Import boundaries: shared ← server and shared ← web; a feature never imports another feature; the web's
 * neutral modules (ui, site, session) import no feature. `no-restricted-imports` sees an import as
 * written, so a limit names the folders a relative import must not climb into (`../../server/x.js`
 * from src/web). A file gets one block: a later block's options for the rule replace an earlier one's.
 */
/** The features, the same three in src/server and src/web. */
const FEATURES = ['waitlist', 'auth', 'admin'];
const otherFeatures = (name) => FEATURES.filter((other) => other !== name);

const limit = (folders, message) => ({ regex: `^(\\.\\./)+(${folders.join('|')})/`, message });
const NOT_SERVER = limit(['server'], 'The web app never imports server code: share it through src/shared.');
const NOT_WEB = limit(['web'], 'The server never imports web code: share it through src/shared.');
/** Packages kept out on purpose, wherever the import is. */
const RESTRICTED_PACKAGES = [
  { name: 'react-router', message: 'The site routes with src/web/site/router.tsx (Link, useNavigate, useLocation): react-router was 12 KB of the landing page.' },
];
const boundary = (files, ...limits) => ({ files, rules: { 'no-restricted-imports': ['error', { paths: RESTRICTED_PACKAGES, patterns: limits }] } });

const importBoundaries = [
  boundary(['src/shared/**'], limit(['server', 'web'], 'src/shared is imported by the server and the web app, never the other way round.')),
  boundary(['src/web/**'], NOT_SERVER),
  boundary(['src/server/**'], NOT_WEB),
  boundary(
    ['src/web/ui/**', 'src/web/site/**', 'src/web/session/**'],
    NOT_SERVER,
    limit(['app', 'pages', ...FEATURES], 'src/web/ui, site and session are neutral: they import no feature, page or app module.'),
  ),
  ...FEATURES.map((name) =>
    boundary(
      [`src/web/${name}/**`],
      NOT_SERVER,
      limit(['app', 'pages', ...otherFeatures(name)], 'Web features never import each other or the app: share through src/web/ui, src/web/session or src/shared.'),
    ),
  ),
  ...FEATURES.map((name) =>
    boundary(
      [`src/server/${name}/**`],
      NOT_WEB,
      limit(otherFeatures(name), 'Server features never import each other: share through src/shared or an infrastructure module.'),
    ),
  ),
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'test-results/', 'playwright-report/', 'bench-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx,js,mjs}'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/web/**/*.tsx', 'src/web/**/*.ts'],
    plugins: { 'react-hooks': reactHooks },
    rules: { ...reactHooks.configs.recommended.rules },
  },
  {
    // Migrations and the migrator work on any schema version: Kysely<any> is Kysely's own idiom there.
    files: ['src/server/db/**', 'tests/server/migrations.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  ...importBoundaries,
);

import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * Import boundaries: shared ← server and shared ← web; a feature never imports another feature (on
 * the server, only the other's declared interface, its index.ts); the web's neutral modules (ui,
 * site, session) and the server's infrastructure import no feature. `no-restricted-imports` sees an
 * import as written, so a limit names the folders a relative import must not climb into
 * (`../../server/x.js` from src/web). A file gets one block: a later block's options for the rule
 * replace an earlier one's. The whole import graph (cycles too) is checked by dependency-cruiser
 * (.dependency-cruiser.mjs, `npm run lint:deps`), which takes the rooms below from this file.
 */
/** The web app's features. */
const WEB_FEATURES = ['waitlist', 'auth', 'admin', 'embed'];

/**
 * The server's feature rooms (src/server/<name>/): each owns its routes, rules and SQL. `export` is
 * the CSV export's room; until its modules move there (issue 27) they are in src/server/waitlist/.
 */
export const SERVER_FEATURES = ['signup', 'consent', 'admin', 'insights', 'live', 'mail', 'auth', 'export', 'records', 'api', 'embed', 'webhooks', 'challenge', 'lists'];

/**
 * The features whose index.ts is a declared interface, and which features may import it (nothing
 * else of that room): admin's filter checks and audited actions, consent's e-mails and suppression
 * hash, mail's app.mail types and auth's AdminPrincipal (which the export part of admin/routes.ts
 * uses until it moves to export/); records (the kept texts) renders consent's e-mail templates with
 * placeholders and records each send through app.mail; for the API (issue 32): admin's list page,
 * signup's adding of a signup, and export's tickets.
 */
export const SERVER_INTERFACES = {
  admin: ['insights', 'export', 'api', 'challenge'],
  consent: ['signup', 'admin', 'records', 'challenge'],
  mail: ['signup', 'consent', 'admin', 'auth', 'records', 'challenge'],
  auth: ['export'],
  signup: ['api'],
  export: ['api'],
  // The queue features raise webhook events through (app.webhooks) and the events' payloads.
  webhooks: ['signup', 'consent', 'admin', 'challenge'],
  challenge: ['signup'],
};

/** The server's neutral infrastructure (src/server/<name>/, and config.ts): it imports no feature. */
export const SERVER_INFRASTRUCTURE = ['db', 'http', 'crypto', 'rate-limit', 'pubsub', 'geolocation', 'audit', 'runtime', 'site', 'email-domains'];

const limit = (folders, message) => ({ regex: `^(\\.\\./)+(${folders.join('|')})/`, message });
/** Like limit, for one folder whose index.js (a declared interface) may be imported. */
const limitBesidesInterface = (folder, message) => ({ regex: `^(\\.\\./)+${folder}/(?!index\\.js$)`, message });
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
    limit(['app', 'pages', ...WEB_FEATURES], 'src/web/ui, site and session are neutral: they import no feature, page or app module.'),
  ),
  ...WEB_FEATURES.map((name) =>
    boundary(
      [`src/web/${name}/**`],
      NOT_SERVER,
      limit(['app', 'pages', ...WEB_FEATURES.filter((other) => other !== name)], 'Web features never import each other or the app: share through src/web/ui, src/web/session or src/shared.'),
    ),
  ),
  ...SERVER_FEATURES.map((name) =>
    boundary(
      [`src/server/${name}/**`],
      NOT_WEB,
      ...SERVER_FEATURES.filter((other) => other !== name).map((other) =>
        SERVER_INTERFACES[other]?.includes(name)
          ? limitBesidesInterface(other, `Import ${other} only through its declared interface, ${other}/index.js.`)
          : limit([other], `Server features never import each other (${name} may not import ${other}): share through src/shared, an infrastructure module or a declared interface (SERVER_INTERFACES).`),
      ),
    ),
  ),
  boundary(
    [...SERVER_INFRASTRUCTURE.map((name) => `src/server/${name}/**`), 'src/server/config.ts'],
    NOT_WEB,
    limit(SERVER_FEATURES, 'Infrastructure imports no feature: the feature passes what it needs in.'),
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
    files: ['src/server/db/**', 'tests/server/db/migrations.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  ...importBoundaries,
);

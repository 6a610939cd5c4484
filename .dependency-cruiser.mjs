/**
 * The import graph of src/, checked in CI by `npm run lint` (`npm run lint:deps`). The rooms are
 * eslint.config.js's (SERVER_FEATURES, SERVER_INTERFACES, SERVER_INFRASTRUCTURE), so both checks
 * name the same ones. Type-only imports count: a circle held together by one type is a circle.
 */
import { SERVER_FEATURES, SERVER_INFRASTRUCTURE, SERVER_INTERFACES } from './eslint.config.js';

const either = (names) => `(${names.join('|')})`;
const room = (name) => `^src/server/${name}/`;

/** A feature imports another only through the other's index.ts, and only if SERVER_INTERFACES lets it. */
const featureRules = SERVER_FEATURES.map((name) => {
  const others = SERVER_FEATURES.filter((other) => other !== name);
  const interfaces = others.filter((other) => SERVER_INTERFACES[other]?.includes(name));
  return {
    name: `feature-${name}`,
    comment: `src/server/${name} imports no other feature${interfaces.length > 0 ? ` except the interfaces ${interfaces.map((other) => `${other}/index.ts`).join(', ')}` : ''}.`,
    severity: 'error',
    from: { path: room(name) },
    to: {
      path: room(either(others)),
      ...(interfaces.length > 0 ? { pathNot: `^src/server/${either(interfaces)}/index\\.ts$` } : {}),
    },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module of src/ reaches itself again through its imports.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'infrastructure-imports-no-feature',
      comment: 'Infrastructure (and config.ts) sits below the features: the feature passes what it needs in.',
      severity: 'error',
      from: { path: [room(either(SERVER_INFRASTRUCTURE)), '^src/server/config\\.ts$'] },
      to: { path: room(either(SERVER_FEATURES)) },
    },
    ...featureRules,
    {
      name: 'shared-imports-neither-server-nor-web',
      comment: 'src/shared is what the browser and the server both import; it imports neither.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/(server|web)/' },
    },
    {
      name: 'server-and-web-apart',
      comment: 'The server and the web app share code only through src/shared.',
      severity: 'error',
      from: { path: '^src/(server|web)/' },
      to: { path: '^src/(server|web)/', pathNot: '^src/$1/' },
    },
    {
      name: 'resolvable',
      comment: 'Every relative import names a module that exists.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    // Packages' `exports` read as Node reads them (a package with only a `default` condition resolves too).
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};

// The layer rules of packages/*/src, checked by packages/platform/test/architecture.test.ts (part of
// `npm test`) and printed for people by `npm run deps`. Paths are relative to the repository root.
// Type-only imports count as dependencies (tsPreCompilationDeps), so `import type` from a layer a
// file may not use is a violation too.

/** @param {string} path a folder or file under packages/platform/src, e.g. `domain/` or `config\\.ts$` */
const platform = (path) => `^packages/platform/src/${path}`;

const DOMAIN = platform('domain/');
const CONFIG = [platform('config\\.ts$'), platform('config/')];
const STORAGE = platform('storage/');
// The storage interfaces the services and the webhook worker are written against: the files of
// storage/ports/, one port (or the rows it reads) per file.
const STORAGE_PORTS = [platform('storage/ports/')];
const SERVICES = platform('services/');
const WEBHOOKS = platform('webhooks/');
const HTTP = platform('http/');
const ANY_PLATFORM = platform('');

/** A layer of the platform that may depend only on `allowed` among the platform's own files. */
const layer = (name, from, allowed, comment) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { path: ANY_PLATFORM, pathNot: allowed },
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    layer('platform-domain', DOMAIN, [DOMAIN], 'domain/ is pure: it imports only domain/ (and node builtins and npm packages).'),
    layer('platform-config', CONFIG, [DOMAIN, ...CONFIG], 'config.ts and config/ import only domain/ and config/.'),
    layer('platform-storage', STORAGE, [DOMAIN, ...CONFIG, STORAGE], 'storage/ imports only domain/, config.ts and storage/.'),
    layer(
      'platform-services',
      SERVICES,
      [DOMAIN, ...CONFIG, SERVICES, ...STORAGE_PORTS],
      'services/ imports domain/, config.ts, services/ and, of storage/, only the ports (storage/ports/).',
    ),
    layer(
      'platform-webhooks',
      WEBHOOKS,
      [DOMAIN, ...CONFIG, SERVICES, WEBHOOKS, ...STORAGE_PORTS],
      'webhooks/ imports domain/, config.ts, services/, webhooks/ and, of storage/, only the ports.',
    ),
    layer(
      'platform-http',
      HTTP,
      [DOMAIN, ...CONFIG, SERVICES, WEBHOOKS, HTTP],
      'http/ imports domain/, config.ts, services/, webhooks/ and http/; never storage/.',
    ),
    {
      name: 'platform-composition-root',
      comment: 'platform.ts wires everything together; only index.ts (the public exports) imports it.',
      severity: 'error',
      from: { pathNot: platform('index\\.ts$') },
      to: { path: platform('platform\\.ts$') },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles in any package (type-only imports included).',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/' },
      to: { circular: true },
    },
    {
      name: 'no-cross-package-relative-import',
      comment: 'A package reaches another one through its package name, never through a relative path into its files.',
      severity: 'error',
      from: { path: '^packages/([^/]+)/' },
      to: { path: '^(packages|examples)/', pathNot: '^packages/$1/', dependencyTypes: ['local'] },
    },
    {
      name: 'cli-platform-entry-only',
      comment: 'packages/cli uses @storegate/platform through its package entry (src/index.ts) only, no deep imports.',
      severity: 'error',
      from: { path: '^packages/cli/src/' },
      to: { path: ANY_PLATFORM, pathNot: platform('index\\.ts$') },
    },
    {
      name: 'sdk-no-runtime-packages',
      comment:
        'The SDK has no dependencies: at run time its files import only each other and node builtins (see sdk-node-builtins). ' +
        'Type-only imports of a package are fine. The one exception is sdk-adapters-peer-only.',
      severity: 'error',
      from: { path: '^packages/sdk/src/', pathNot: '^packages/sdk/src/adapters/' },
      to: { pathNot: '^packages/sdk/src/', dependencyTypesNot: ['core'], preCompilationOnly: false },
    },
    {
      name: 'sdk-adapters-peer-only',
      comment:
        'The framework adapters (the ./express and ./fastify subpaths) may import, at run time, only the optional peer ' +
        'dependency they adapt (peerDependencies of packages/sdk/package.json), besides the SDK itself.',
      severity: 'error',
      from: { path: '^packages/sdk/src/adapters/' },
      to: { pathNot: '^packages/sdk/src/', dependencyTypesNot: ['npm-peer'], preCompilationOnly: false },
    },
    {
      name: 'sdk-node-builtins',
      comment: 'The core runs on any runtime with fetch and Web Crypto: node: modules only in src/node/ (the ./node subpath).',
      severity: 'error',
      from: { path: '^packages/sdk/src/', pathNot: '^packages/sdk/src/node/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves (otherwise the rules above cannot see where it goes).',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // 'specify': type-only imports are dependencies like any other, and are marked as such, so the
    // SDK rules can tell a runtime import of a package from an `import type`. (The mark is right for
    // package and builtin imports only: relative `.ts` imports are rewritten to `.js` by the compiler
    // (rewriteRelativeImportExtensions), so dependency-cruiser marks them all as type-only; no rule
    // here uses preCompilationOnly on a relative import.)
    tsPreCompilationDeps: 'specify',
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      // As tsconfig.json (customConditions) and vitest.config.ts resolve: workspace packages to their sources.
      conditionNames: ['@storegate/source', 'import', 'node', 'default', 'types'],
      extensions: ['.ts', '.mts', '.js', '.mjs', '.json'],
    },
    skipAnalysisNotInRules: true,
  },
};

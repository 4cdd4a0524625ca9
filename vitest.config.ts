import { defaultClientConditions, defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// `@storegate/source`: workspace packages resolve to their TypeScript sources (packages/sdk/package.json), so
// the example app and the e2e tests import `@storegate/app` exactly as an app would, without a build.
export default defineConfig({
  resolve: { conditions: ['@storegate/source', ...defaultClientConditions] },
  ssr: { resolve: { conditions: ['@storegate/source', ...defaultServerConditions], externalConditions: ['@storegate/source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'e2e/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most of the suite waits (on databases, sockets, child processes and a browser) rather than
    // computes, so more worker processes than cores keep a small machine busy. All of them live for
    // the whole run and each keeps its loaded modules from one test file to the next, which saves
    // loading the platform again for every file: each file builds its own platform, database
    // schema and clock, and what the sources keep at module level is caches and process-wide
    // figures (the process metrics), nothing a file could leave behind to change another's result.
    maxWorkers: 4,
    minWorkers: 4,
    isolate: false,
    // The cheapest password hash the platform allows, for the commands and servers tests start as
    // child processes (the in-process harness sets it in its own configuration): thousands of
    // accounts are created, and each hash at the default cost is a tenth of a second of CPU.
    env: { PASSWORD_SCRYPT_N: '1024' },
  },
});

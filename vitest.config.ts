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
  },
});

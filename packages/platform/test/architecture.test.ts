// The layer rules of .dependency-cruiser.cjs, checked over packages/*/src with dependency-cruiser's
// API (`npm run deps` prints the same list for people). Type-only imports count as dependencies.
// A second case cruises a small made-up tree, so a rule that stopped matching anything (a typo in
// a path pattern) fails here instead of passing silently.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const TSCONFIG = join(ROOT, 'tsconfig.json');

async function cruiseTree(baseDir: string, sources: string[]): Promise<ICruiseResult> {
  const options: ICruiseOptions = await extractDepcruiseOptions(CONFIG);
  const tsConfig = extractTSConfig(TSCONFIG);
  const result = await cruise(sources, { ...options, baseDir, tsConfig: { fileName: TSCONFIG } }, {}, { tsConfig });
  if (typeof result.output === 'string')
    throw new Error(`dependency-cruiser returned a report, not a result: ${result.output.slice(0, 200)}`);
  return result.output;
}

/** `rule: from → to`, or for a cycle `no-circular: a → b → … → a`. */
function describeViolation(v: IViolation): string {
  if (v.cycle && v.cycle.length > 0) return `${v.rule.name}: ${[v.from, ...v.cycle.map((step) => step.name)].join(' → ')}`;
  return `${v.rule.name}: ${v.from} → ${v.to}`;
}

function countsByRule(violations: IViolation[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of violations) counts[v.rule.name] = (counts[v.rule.name] ?? 0) + 1;
  return counts;
}

describe('architecture (.dependency-cruiser.cjs)', () => {
  it('packages/*/src keeps to the layer rules', async () => {
    const result = await cruiseTree(ROOT, ['packages/*/src']);
    const sources = result.modules.map((m) => m.source);
    // The cruise did reach every package (a wrong glob or base folder would pass vacuously).
    for (const entry of ['packages/platform/src/index.ts', 'packages/sdk/src/index.ts', 'packages/cli/src/main.ts'])
      expect(sources).toContain(entry);

    const violations = result.summary.violations;
    const lines = violations.map(describeViolation);
    const counts = Object.entries(countsByRule(violations)).map(([rule, n]) => `${rule}: ${n}`);
    const message = `${violations.length} dependency rule violation(s) (${counts.join(', ')}); \`npm run deps\` lists them:\n${lines.join('\n')}\n`;
    expect(lines.length, message).toBe(0);
  }, 120_000);

  describe('the rules catch what they are meant to catch', () => {
    let base = '';
    const files: Record<string, string> = {
      'packages/platform/package.json': '{ "name": "@storegate/platform", "type": "module", "exports": { ".": "./src/index.ts" } }',
      'packages/platform/src/index.ts': "export * from './platform.ts';\n",
      'packages/platform/src/platform.ts': "import { createRoutes } from './http/routes.ts';\nexport const platform = createRoutes;\n",
      'packages/platform/src/config.ts':
        "import { rule } from './domain/rule.ts';\nimport type { Port } from './storage/ports/port.ts';\nexport const config = (p: Port) => [rule, p];\n",
      'packages/platform/src/domain/rule.ts':
        "import type { Config } from '../services/service.ts';\nexport const rule = 1;\nexport type R = Config;\n",
      'packages/platform/src/storage/ports/port.ts': 'export interface Port { x: number }\n',
      'packages/platform/src/storage/sql.ts':
        "import type { Port } from './ports/port.ts';\nimport './missing.ts';\nexport const sql = (p: Port) => p.x;\n",
      'packages/platform/src/storage/migrate.ts': "import { worker } from '../webhooks/worker.ts';\nexport const migrate = worker;\n",
      'packages/platform/src/services/service.ts':
        "import type { Port } from '../storage/ports/port.ts';\nimport { sql } from '../storage/sql.ts';\nexport type Config = Port;\nexport const service = sql;\n",
      'packages/platform/src/webhooks/worker.ts': "import { platform } from '../platform.ts';\nexport const worker = platform;\n",
      'packages/platform/src/http/routes.ts':
        "import { sql } from '../storage/sql.ts';\nimport { worker } from '../webhooks/worker.ts';\nexport const createRoutes = () => [sql, worker];\n",
      'packages/sdk/package.json': '{ "name": "@storegate/app", "type": "module", "peerDependencies": { "express": ">=4" } }',
      'packages/sdk/src/index.ts': "import { a } from './a.ts';\nexport { a };\n",
      'packages/sdk/src/a.ts':
        "import { b } from './b.ts';\nimport { createHash } from 'node:crypto';\nexport type A = number;\nexport const a = () => [b, createHash];\n",
      'packages/sdk/src/b.ts':
        "import type { Redis } from 'ioredis';\nimport type { A } from './a.ts';\nexport const b = (r: Redis, n: A) => [r, n];\n",
      'packages/sdk/src/c.ts': "import Redis from 'ioredis';\nexport const c = new Redis();\n",
      'packages/sdk/src/node/fetch.ts': "import { request } from 'node:http';\nexport const fetch = request;\n",
      'packages/sdk/src/adapters/express.ts':
        "import express from 'express';\nimport Redis from 'ioredis';\nexport const router = [express.Router(), Redis];\n",
      'packages/cli/src/main.ts':
        "import { platform } from '@storegate/platform';\nimport { config } from '../../platform/src/config.ts';\nexport const main = [platform, config];\n",
    };
    beforeAll(() => {
      base = mkdtempSync(join(tmpdir(), 'storegate-architecture-'));
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(base, path)), { recursive: true });
        writeFileSync(join(base, path), text);
      }
      // npm packages from the repository's node_modules; the workspace package linked as npm links it.
      mkdirSync(join(base, 'node_modules/@storegate'), { recursive: true });
      for (const name of ['express', 'ioredis']) symlinkSync(join(ROOT, 'node_modules', name), join(base, 'node_modules', name));
      symlinkSync(join(base, 'packages/platform'), join(base, 'node_modules/@storegate/platform'));
    });
    afterAll(() => {
      if (base) rmSync(base, { recursive: true, force: true });
    });

    it('reports each kind of violation', async () => {
      const result = await cruiseTree(base, ['packages/*/src']);
      // npm packages resolve through the symlinks above to the repository's node_modules.
      const lines = result.summary.violations
        .filter((v) => !v.cycle)
        .map((v) => describeViolation(v).replace(/\S*node_modules\//, 'node_modules/'));
      expect(lines.sort()).toEqual(
        [
          'platform-domain: packages/platform/src/domain/rule.ts → packages/platform/src/services/service.ts',
          'platform-config: packages/platform/src/config.ts → packages/platform/src/storage/ports/port.ts',
          'platform-storage: packages/platform/src/storage/migrate.ts → packages/platform/src/webhooks/worker.ts',
          'platform-services: packages/platform/src/services/service.ts → packages/platform/src/storage/sql.ts',
          'platform-webhooks: packages/platform/src/webhooks/worker.ts → packages/platform/src/platform.ts',
          'platform-composition-root: packages/platform/src/webhooks/worker.ts → packages/platform/src/platform.ts',
          'platform-http: packages/platform/src/http/routes.ts → packages/platform/src/storage/sql.ts',
          'cli-platform-entry-only: packages/cli/src/main.ts → packages/platform/src/config.ts',
          'not-to-unresolvable: packages/platform/src/storage/sql.ts → ./missing.ts',
          'no-cross-package-relative-import: packages/cli/src/main.ts → packages/platform/src/config.ts',
          'sdk-node-builtins: packages/sdk/src/a.ts → crypto',
          'sdk-no-runtime-packages: packages/sdk/src/c.ts → node_modules/ioredis/built/index.js',
          'sdk-adapters-peer-only: packages/sdk/src/adapters/express.ts → node_modules/ioredis/built/index.js',
        ].sort(),
      );
      // Each cycle once, as the set of its modules; `b.ts` reaches `a.ts` only through `import type`.
      const cycles = result.summary.violations.filter((v) => v.cycle).map((v) => [v.from, ...(v.cycle ?? []).map((step) => step.name)]);
      expect(cycles.map((modules) => [...new Set(modules)].sort().join(' ')).sort()).toEqual([
        'packages/platform/src/http/routes.ts packages/platform/src/platform.ts packages/platform/src/webhooks/worker.ts',
        'packages/sdk/src/a.ts packages/sdk/src/b.ts',
      ]);
    }, 120_000);
  });
});

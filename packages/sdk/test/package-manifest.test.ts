// The published manifest: zero dependencies, optional peers, and an exports map whose every entry
// is built from a source file (checked without building); the workspace-only `@storegate/source` condition
// points at that file, so a fresh clone runs the example and the e2e tests without a build.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  dependencies?: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  exports: Record<string, string | Record<string, string>>;
  type: string;
  sideEffects: boolean;
};

describe('@storegate/app package.json', () => {
  it('has no runtime dependencies; drivers and frameworks are optional peers', () => {
    expect(Object.keys(pkg.dependencies ?? {})).toEqual([]);
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(['better-sqlite3', 'express', 'fastify', 'ioredis', 'pg']);
    for (const name of Object.keys(pkg.peerDependencies)) expect(pkg.peerDependenciesMeta[name]?.optional).toBe(true);
    expect([pkg.type, pkg.sideEffects]).toEqual(['module', false]);
  });

  it('every export points at dist files built from an existing source file', () => {
    expect(Object.keys(pkg.exports)).toEqual(
      expect.arrayContaining([
        '.',
        './session/sqlite',
        './session/postgres',
        './session/redis',
        './express',
        './fastify',
        './web',
        './node',
      ]),
    );
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (subpath === './package.json') continue;
      const { '@storegate/source': sourceFile, ...published } = target as Record<string, string>;
      expect(Object.keys(published)[0], subpath).toBe('types');
      for (const file of Object.values(published)) {
        const source = file.replace(/^\.\/dist\//, './src/').replace(/\.d\.ts$|\.js$/, '.ts');
        expect(existsSync(new URL(source, root)), `${subpath} → ${file}`).toBe(true);
        // The workspace's `@storegate/source` condition (examples, e2e, tests) names that same source file.
        expect(sourceFile, subpath).toBe(source);
      }
    }
  });

  it('the `@storegate/source` condition comes first, so `--conditions=@storegate/source` and TypeScript pick it over dist', () => {
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (subpath === './package.json') continue;
      expect(Object.keys(target as Record<string, string>)[0], subpath).toBe('@storegate/source');
    }
  });
});

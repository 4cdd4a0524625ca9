// How the `storegate` bin chooses between the compiled build and the TypeScript sources.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compiledEntry } from '../bin/entry.js';

const BUILT_AT = Date.UTC(2026, 0, 1);

describe('the bin runs dist/ only when a complete, current build exists', () => {
  let dir: string;
  let cli: string;
  let platform: string;
  const cliRoot = () => pathToFileURL(`${cli}/`);

  function source(path: string, mtimeMs: number): void {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, '// source\n');
    utimesSync(path, mtimeMs / 1000, mtimeMs / 1000);
  }
  function stamp(content: string): void {
    mkdirSync(join(cli, 'dist'), { recursive: true });
    writeFileSync(join(cli, 'dist/build-stamp.json'), content);
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'storegate-entry-'));
    cli = join(dir, 'cli');
    platform = join(dir, 'platform');
    source(join(cli, 'src/main.ts'), BUILT_AT - 60_000);
    source(join(platform, 'src/http/deep/route.ts'), BUILT_AT - 60_000);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs dist/main.js when the stamp is newer than every source of the CLI and the platform', () => {
    stamp(JSON.stringify({ builtAt: BUILT_AT }));
    expect(compiledEntry(cliRoot(), {}, platform)?.href).toBe(pathToFileURL(join(cli, 'dist/main.js')).href);
  });

  it('runs the sources without a build, or while a build is in progress (no stamp yet)', () => {
    expect(compiledEntry(cliRoot(), {}, platform)).toBeNull();
    mkdirSync(join(cli, 'dist'), { recursive: true });
    writeFileSync(join(cli, 'dist/main.js'), '');
    expect(compiledEntry(cliRoot(), {}, platform)).toBeNull();
  });

  it('runs the sources when any source file, however deep, changed after the build', () => {
    stamp(JSON.stringify({ builtAt: BUILT_AT }));
    source(join(platform, 'src/http/deep/route.ts'), BUILT_AT + 1000);
    expect(compiledEntry(cliRoot(), {}, platform)).toBeNull();
    source(join(platform, 'src/http/deep/route.ts'), BUILT_AT - 1000);
    source(join(cli, 'src/serve.command.ts'), BUILT_AT + 1000);
    expect(compiledEntry(cliRoot(), {}, platform)).toBeNull();
  });

  it('runs the sources when STOREGATE_SOURCE=1, even with a current build', () => {
    stamp(JSON.stringify({ builtAt: BUILT_AT }));
    expect(compiledEntry(cliRoot(), { STOREGATE_SOURCE: '1' }, platform)).toBeNull();
    expect(compiledEntry(cliRoot(), { STOREGATE_SOURCE: '0' }, platform)).not.toBeNull();
  });

  it('runs the sources when the stamp is unreadable', () => {
    stamp('{ not json');
    expect(compiledEntry(cliRoot(), {}, platform)).toBeNull();
    stamp(JSON.stringify({ builtAt: 'yesterday' }));
    expect(compiledEntry(cliRoot(), {}, platform)).toBeNull();
  });
});

// Chooses what the `storegate` bin runs: the compiled build when it is complete and current,
// otherwise nothing (the bin then runs the sources). Plain JavaScript: it must run before any
// TypeScript loader exists.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Newest modification time (ms) of any file under `dir`, or 0 when the folder does not exist. */
export function newestMtime(dir) {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

/**
 * The URL of dist/main.js when the CLI package at `cliRoot` (a URL ending in `/`) has a build
 * whose stamp is newer than every source of the CLI and of the platform it runs; null otherwise.
 * The build writes its stamp last, so a build in progress counts as absent.
 */
export function compiledEntry(cliRoot, env, platformRoot = platformRootOf(cliRoot)) {
  if (env.STOREGATE_SOURCE === '1') return null;
  const root = fileURLToPath(cliRoot);
  let builtAt;
  try {
    builtAt = JSON.parse(readFileSync(join(root, 'dist/build-stamp.json'), 'utf8')).builtAt;
  } catch {
    return null;
  }
  if (typeof builtAt !== 'number') return null;
  const sources = Math.max(newestMtime(join(root, 'src')), platformRoot ? newestMtime(join(platformRoot, 'src')) : 0);
  if (sources > builtAt) return null;
  return new URL('dist/main.js', cliRoot);
}

function platformRootOf(cliRoot) {
  try {
    return dirname(createRequire(cliRoot).resolve('@storegate/platform/package.json'));
  } catch {
    return null;
  }
}

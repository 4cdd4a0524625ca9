// `npm run build`: compiles the SDK, the platform and the CLI to JavaScript in each package's dist/.
// The `storegate` bin then runs packages/cli/dist/main.js with no TypeScript loader in the process.
//
// The build stamp (packages/cli/dist/build-stamp.json) is removed first and written last: the bin
// trusts dist/ only while a stamp exists that is newer than every source file, so a process that
// starts during a build (or after a source was edited) runs the sources through tsx instead of a
// half-written or stale dist/.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'packages/cli/dist/build-stamp.json');
// Sources edited from this moment on make the build stale.
const startedAt = Date.now();

rmSync(stamp, { force: true });

/** Files under src/ that are not TypeScript (stylesheets, browser scripts) are read at run time next to the code. */
function copyAssets(src, dist) {
  for (const entry of readdirSync(src, { withFileTypes: true })) {
    const from = join(src, entry.name);
    const to = join(dist, entry.name);
    if (entry.isDirectory()) copyAssets(from, to);
    else if (!entry.name.endsWith('.ts')) {
      mkdirSync(dist, { recursive: true });
      cpSync(from, to);
    }
  }
}

// The CLI's types come from the platform's declarations in dist/, so the order matters.
for (const pkg of ['packages/sdk', 'packages/platform', 'packages/cli']) {
  const dir = join(root, pkg);
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.build.json')], {
    stdio: 'inherit',
  });
  if (tsc.status !== 0) {
    console.error(`build failed in ${pkg}`);
    process.exit(tsc.status ?? 1);
  }
  copyAssets(join(dir, 'src'), join(dir, 'dist'));
  console.log(`built ${pkg}/dist`);
}

// Sanity check before stamping: the compiled entry point and its assets are where the bin looks.
statSync(join(root, 'packages/cli/dist/main.js'));
statSync(join(root, 'packages/platform/dist/http/views/app.css'));
writeFileSync(stamp, `${JSON.stringify({ builtAt: startedAt }, null, 2)}\n`);
console.log(`stamped ${relative(root, stamp)}`);

// `npm run screenshots`: refreshes the README's pictures on purpose. The browser tests always write
// their screenshots to e2e/artifacts/screenshots/ (ignored by git) so that an ordinary test run leaves
// the tree clean; this script runs those tests and then copies the fresh PNGs into docs/screenshots/,
// where they show up in `git status` to be reviewed and committed.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const artifacts = fileURLToPath(new URL('../e2e/artifacts/screenshots/', import.meta.url));
const docs = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const browserTests = ['e2e/install-flow.test.ts', 'e2e/store-admin-partner.test.ts', 'e2e/example-app-install.test.ts'];

const env = { ...process.env };
env.TEST_CHROMIUM ??= '/usr/bin/chromium';
if (!existsSync(env.TEST_CHROMIUM)) {
  // Without a browser the tests skip themselves and there would be nothing to copy.
  console.error(`no browser at ${env.TEST_CHROMIUM} (set TEST_CHROMIUM, or apt-get install chromium)`);
  process.exit(1);
}

// Start from an empty folder so that only pictures taken by this run can be copied.
rmSync(artifacts, { recursive: true, force: true });

const run = spawnSync('npx', ['vitest', 'run', ...browserTests], { cwd: root, stdio: 'inherit', env });
if (run.status !== 0) {
  console.error('the browser tests failed; docs/screenshots/ left as it was');
  process.exit(run.status ?? 1);
}

const fresh = existsSync(artifacts) ? readdirSync(artifacts).filter((name) => name.endsWith('.png')) : [];
mkdirSync(docs, { recursive: true });
const stale = readdirSync(docs).filter((name) => name.endsWith('.png') && !fresh.includes(name));
if (stale.length > 0) {
  // A picture the README shows that no test took any more: copying the rest would hide that.
  console.error(`no test wrote ${stale.join(', ')}; docs/screenshots/ left as it was`);
  process.exit(1);
}
for (const name of fresh) {
  copyFileSync(artifacts + name, docs + name);
  console.log(`docs/screenshots/${name}`);
}
console.log(`${fresh.length} screenshot(s) copied; review them with git diff --stat docs/screenshots/ before committing`);

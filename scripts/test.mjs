// `npm test`: runs the whole suite once. The PostgreSQL, Redis and browser halves run whenever
// their service or browser is present on this machine; with CI=true they are required.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { compiledEntry } from '../packages/cli/bin/entry.js';

const ci = process.env.CI === 'true' || process.env.CI === '1';

function answers(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 1500 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

const env = { ...process.env };
const skipped = [];
const missing = [];

env.TEST_PG_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
if (!(await answers('127.0.0.1', 5432))) {
  delete env.TEST_PG_URL;
  (ci ? missing : skipped).push('PostgreSQL (127.0.0.1:5432)');
}
env.TEST_REDIS_URL ??= 'redis://127.0.0.1:6379';
if (!(await answers('127.0.0.1', 6379))) {
  delete env.TEST_REDIS_URL;
  (ci ? missing : skipped).push('Redis (127.0.0.1:6379)');
}
env.TEST_CHROMIUM ??= '/usr/bin/chromium';
if (!existsSync(env.TEST_CHROMIUM)) {
  delete env.TEST_CHROMIUM;
  (ci ? missing : skipped).push('browser tests (no /usr/bin/chromium; apt-get install chromium)');
}

env.TEST_HAPROXY ??= '/usr/sbin/haproxy';
if (!existsSync(env.TEST_HAPROXY)) {
  delete env.TEST_HAPROXY;
  (ci ? missing : skipped).push('the cluster test (no /usr/sbin/haproxy; apt-get install haproxy)');
}

if (missing.length > 0) {
  console.error(`CI=true and these are required but not available: ${missing.join(', ')}`);
  process.exit(1);
}
if (skipped.length > 0) {
  console.warn(`\nNOTE: skipping the parts of the suite that need: ${skipped.join('; ')}\n`);
}

/** Runs a command to its end without holding the event loop, so two can run side by side. */
function run(command, args, stdio) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio, env });
    child.once('error', () => resolve(1));
    child.once('close', (code) => resolve(code ?? 1));
  });
}

// Lint and types first: either failing fails the suite like a failing test.
const checks = process.argv.length <= 2;
if (checks) {
  // Biome (biome.json): formatting and lint rules, `npm run format` fixes the formatting.
  const lint = spawnSync('npx', ['biome', 'check', '.'], { stdio: 'inherit', env });
  if (lint.status !== 0) {
    console.error('lint failed (npm run lint; npm run format fixes formatting)');
    process.exit(lint.status ?? 1);
  }
}
// The compiled build, made once here when this checkout has none that is current (dist/ is
// gitignored): every test that starts the `storegate` command, and there are hundreds of such
// starts, then loads JavaScript instead of putting the sources through tsx at each start, which
// took more than twice the CPU. The sources path keeps its own tests (STOREGATE_SOURCE=1).
// The typecheck and the build are each one compiler working on one core for half a minute, so on
// a machine with two cores they run side by side.
const needsBuild = compiledEntry(new URL('../packages/cli/', import.meta.url), {}) === null;
const [types, build] = await Promise.all([
  checks ? run('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit'], 'inherit') : 0,
  needsBuild ? run(process.execPath, [fileURLToPath(new URL('./build.mjs', import.meta.url))], ['ignore', 'ignore', 'inherit']) : 0,
]);
if (types !== 0) {
  console.error('typecheck failed');
  process.exit(types);
}
if (build !== 0) {
  console.error('npm run build failed');
  process.exit(build);
}
const result = spawnSync('npx', ['vitest', 'run', ...process.argv.slice(2)], { stdio: 'inherit', env });
if (skipped.length > 0) {
  console.warn(`\nNOTE: these parts were SKIPPED: ${skipped.join('; ')}`);
}
process.exit(result.status ?? 1);

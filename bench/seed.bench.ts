// npm run bench -- seed
// `storegate seed` as a user runs it (the CLI, a child process) on a fresh SQLite file: products per
// second. Target: >= 20,000 products/s.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? '200000');
const cli = new URL('../packages/cli/bin/storegate.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'storegate-seed-bench-'));
const database = join(dir, 'seed.db');
const run = (args: string[]) => {
  const res = spawnSync(process.execPath, [cli, ...args, '--database', database, '--json'], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`storegate ${args[0]} failed: ${res.stderr}`);
  return JSON.parse(res.stdout);
};
try {
  run(['stores', 'create', 'seeded', '--owner-email', 'o@seed.test', '--owner-password', 'seed-password']);
  const out = run(['seed', '--store', 'seeded', '--products', String(PRODUCTS)]);
  const rate = Math.round(out.products / out.seconds);
  console.log(
    `storegate seed: ${out.products.toLocaleString('en-US')} products in ${out.seconds.toFixed(2)} s = ${rate.toLocaleString('en-US')} products/s (target >= 20,000/s): ${rate >= 20_000 ? 'PASS' : 'FAIL'}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

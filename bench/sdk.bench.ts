// `npm run bench -- sdk`: the SDK's speed and size targets, each beside a baseline measured in the
// same run. The SDK touches no database: `--database` changes nothing here, and `both` prints the
// same rows twice.
//   - verifyWebhook on a 1 KB body vs a hand-written node:crypto createHmac + timingSafeEqual check
//     (target >= 0.7x);
//   - verifyQuery on a typical 5-parameter callback (target >= 200,000/s);
//   - `npm pack --dry-run --json` size of @storegate/app (target < 100 KB) and its dependencies (0).
import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { signQuery, signWebhook, verifyQuery, verifyWebhook } from '../packages/sdk/src/index.ts';
import { report } from './report.ts';

const sdkDir = new URL('../packages/sdk/', import.meta.url);

async function roundRate(fn: () => unknown, ms: number): Promise<number> {
  let ops = 0;
  const start = performance.now();
  const end = start + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 1000; i++) await fn();
    ops += 1000;
  }
  return ops / ((performance.now() - start) / 1000);
}

/**
 * Measures a baseline and a candidate in alternating rounds (so both see the same machine load,
 * which on a shared 2-CPU machine moves a lot) and keeps each one's best round.
 */
async function compare(labels: [string, string], baseline: () => unknown, candidate: () => unknown, rounds = 8): Promise<[number, number]> {
  for (const fn of [baseline, candidate]) await roundRate(fn, 200); // warm-up
  let best: [number, number] = [0, 0];
  for (let round = 0; round < rounds; round++) {
    best = [Math.max(best[0], await roundRate(baseline, 250)), Math.max(best[1], await roundRate(candidate, 250))];
  }
  for (const [i, label] of labels.entries())
    console.log(`  ${label.padEnd(58)} ${Math.round(best[i]!).toLocaleString('en-US').padStart(12)} ops/s`);
  return best;
}

const secret = 'shh-secret-for-the-benchmark';

// ---- verifyWebhook, 1 KB body ----
const payload = { id: 'ORDER_1', topic: 'orders/create', note: '' };
payload.note = 'x'.repeat(1024 - JSON.stringify(payload).length);
const body = Buffer.from(JSON.stringify(payload));
const signature = await signWebhook(body, secret);
const headers = {
  'content-type': 'application/json',
  'x-service-hmac-sha256': signature,
  'x-service-topic': 'orders/create',
  'x-service-shop-domain': 'demo.localhost',
  'x-service-webhook-id': 'wh-1',
};

console.log(`verifyWebhook, ${body.length}-byte body`);
const handWritten = () => {
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(headers['x-service-hmac-sha256'], 'base64');
  if (!(given.length === expected.length && timingSafeEqual(given, expected))) throw new Error('baseline failed');
};
const sdkWebhook = () => verifyWebhook({ rawBody: body, headers, secret });
const [baselineRate, webhookRate] = await compare(
  ['baseline: node:crypto createHmac + timingSafeEqual (sync)', '@storegate/app verifyWebhook (async, typed event)'],
  handWritten,
  sdkWebhook,
);
const ratio = webhookRate / baselineRate;
console.log(`  ratio verifyWebhook / baseline: ${ratio.toFixed(2)}x (target >= 0.70x) ${ratio >= 0.7 ? 'OK' : 'BELOW TARGET'}`);

// ---- verifyQuery, 5-parameter callback ----
const params = {
  code: 'sg_ac_4f1c2a9e8b7d6c5a',
  shop: 'demo.localhost',
  state: 'v1.eyJuIjoiYWJjIiwicyI6ImRlbW8ubG9jYWxob3N0IiwiZSI6MTcwMDAwMDYwMH0.c2lnbmF0dXJl',
  timestamp: '1700000000',
};
const query = `${new URLSearchParams(params).toString()}&hmac=${await signQuery(params, secret)}`;
console.log('\nverifyQuery, 5-parameter callback (code, shop, state, timestamp, hmac), raw query string');
const baselineQuery = () => {
  const sp = new URLSearchParams(query);
  const given = sp.get('hmac') ?? '';
  sp.delete('hmac');
  const canonical = [...sp]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const expected = createHmac('sha256', secret).update(canonical).digest();
  const g = Buffer.from(given, 'hex');
  if (!(g.length === expected.length && timingSafeEqual(g, expected))) throw new Error('baseline failed');
};
const [queryBaseline, queryRate] = await compare(
  ['baseline: URLSearchParams + sort + createHmac (sync)', '@storegate/app verifyQuery'],
  baselineQuery,
  () => verifyQuery(query, secret),
);
console.log(
  `  ratio verifyQuery / baseline: ${(queryRate / queryBaseline).toFixed(2)}x; target >= 200,000 ops/s ${queryRate >= 200_000 ? 'OK' : 'BELOW TARGET'}`,
);

// ---- package size and dependencies ----
console.log('\npackage @storegate/app');
const packed = JSON.parse(
  execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: sdkDir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }),
) as Array<{ size: number; unpackedSize: number; entryCount: number }>;
const pack = packed[0]!;
const pkg = JSON.parse(readFileSync(new URL('package.json', sdkDir), 'utf8')) as { dependencies?: Record<string, string> };
const deps = Object.keys(pkg.dependencies ?? {}).length;
console.log(
  `  npm pack: ${(pack.size / 1024).toFixed(1)} KB packed, ${(pack.unpackedSize / 1024).toFixed(1)} KB unpacked, ${pack.entryCount} files (target < 100 KB) ${pack.size < 100 * 1024 ? 'OK' : 'ABOVE TARGET'}`,
);
console.log(`  dependencies: ${deps} (must be 0) ${deps === 0 ? 'OK' : 'FAIL'}`);
if (pack.entryCount < 10) console.log('  note: dist/ looks missing; run `npm run build` first for a meaningful size');
report([
  { name: 'verifyWebhook 1 KB (vs createHmac check)', value: webhookRate, unit: 'ops/s', ratio, target: '≥ 0.7x', pass: ratio >= 0.7 },
  {
    name: 'verifyQuery 5 parameters',
    value: queryRate,
    unit: 'ops/s',
    ratio: queryRate / queryBaseline,
    target: '≥ 200,000/s',
    pass: queryRate >= 200_000,
  },
  { name: '@storegate/app packed size', value: pack.size / 1024, unit: 'KB', target: '< 100 KB', pass: pack.size < 100 * 1024 },
  { name: '@storegate/app dependencies', value: deps, unit: '', target: '0', pass: deps === 0 },
]);

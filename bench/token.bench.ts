// `npm run bench -- token [--database sqlite|postgres://…|both]`: token-endpoint throughput of
// storegate (every grant committed durably, on a fresh database of the kind asked for) against the
// reference Node.js authorization server oidc-provider v8 (in memory), with the same load
// generator in this process and each server in its own child process.
//
// Phases, per server:
//   refresh:  50 clients, each following its own rotating refresh-token chain over its own
//             keep-alive connection (send the current refresh token, wait, keep the new one, repeat);
//   code:     50 clients redeeming pre-minted authorization codes as fast as they are answered.
// Only answers that complete inside the measuring window count; every non-200 answer (warm-up
// included) is an error and makes the run invalid.
//
// Knobs (environment): BENCH_TOKEN_CLIENTS (50), BENCH_TOKEN_WARMUP_S (3), BENCH_TOKEN_MEASURE_S
// (10), BENCH_TOKEN_CODE_WARMUP_S (2), BENCH_TOKEN_CODE_MEASURE_S (6), BENCH_TOKEN_ONLY
// (storegate|reference), BENCH_TOKEN_CPU_PROF=<dir> (run the server children with --cpu-prof),
// BENCH_TOKEN_DIAG=db-timing (a diagnostic of the storegate child on SQLite; see its source),
// BENCH_TOKEN_RATE_LIMIT (off: the token endpoint's limits, which one client making every grant
// would hit at once; e.g. 100000/100000 counts every grant in both buckets without refusing).
//
// Targets: on SQLite, refresh grants >= 1.5x and code grants >= 1.2x the reference, storegate's
// refresh p99 < 25 ms; on PostgreSQL, refresh and code grants >= 0.7x SQLite's (the PG/SQLite
// column of `--database both`). Each phase also prints the CPU per grant measured from outside
// (bench/cpu.ts): the storegate process's and, on PostgreSQL, the database server's, apart.
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client } from 'undici';
import { type CpuMeter, type CpuSpent, cpuRows, formatCpu, postgresDatabaseName, startCpuMeter } from './cpu.ts';
import { createBenchDatabase } from './database.ts';
import { report, type ReportRow } from './report.ts';

const num = (name: string, dflt: number) => {
  const v = process.env[name];
  const n = v === undefined || v === '' ? dflt : Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}: expected a positive number, got "${v}"`);
  return n;
};
const CLIENTS = Math.floor(num('BENCH_TOKEN_CLIENTS', 50));
const REFRESH_WARMUP_MS = num('BENCH_TOKEN_WARMUP_S', 3) * 1000;
const REFRESH_MEASURE_MS = num('BENCH_TOKEN_MEASURE_S', 10) * 1000;
const CODE_WARMUP_MS = num('BENCH_TOKEN_CODE_WARMUP_S', 2) * 1000;
const CODE_MEASURE_MS = num('BENCH_TOKEN_CODE_MEASURE_S', 6) * 1000;
const ONLY = process.env.BENCH_TOKEN_ONLY;
const CPU_PROF_DIR = process.env.BENCH_TOKEN_CPU_PROF;
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const TARGET_P99_MS = 25;
const TARGET_REFRESH_RATIO = 1.5;
const TARGET_CODE_RATIO = 1.2;

// ---------------------------------------------------------------------------------------------
// Server children

interface Ready {
  type: 'ready';
  port: number;
  path: string;
  host: string | undefined;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  info: Record<string, unknown>;
}
interface ServerStats {
  wallMs: number;
  userMs: number;
  systemMs: number;
  elu: number;
  rssMb: number;
  serverErrors?: number;
  grantErrors?: number;
  lastGrantError?: string;
  lruEntries?: number;
  /** BENCH_TOKEN_DIAG=db-timing: time inside SQLite by statement kind over the window. */
  db?: Record<string, { calls: number; ms: number }>;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of children) child.kill('SIGKILL');
    process.exit(130);
  });
}

class ServerChild {
  readonly output: string[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  /** The PostgreSQL database this server uses (its server's CPU is measured too); none on SQLite. */
  postgresDatabase: string | undefined;

  private constructor(
    readonly label: string,
    private readonly child: ChildProcess,
    readonly ready: Ready,
  ) {
    child.on('message', (raw) => {
      const msg = raw as { id?: number; error?: string };
      const waiter = msg.id === undefined ? undefined : this.pending.get(msg.id);
      if (!waiter) return;
      this.pending.delete(msg.id!);
      if (msg.error) waiter.reject(new Error(`${label}: ${msg.error}`));
      else waiter.resolve(msg as Record<string, unknown>);
    });
  }

  static start(label: string, script: string, env: Record<string, string> = {}): Promise<ServerChild> {
    const execArgv = ['--import', 'tsx'];
    if (CPU_PROF_DIR) execArgv.push('--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}/${label}`);
    const child = fork(fileURLToPath(new URL(script, import.meta.url)), [], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      execArgv,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    children.add(child);
    const output: string[] = [];
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '' && output.length < 200) output.push(line);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.on('exit', () => children.delete(child));
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`${label} server exited (${code}) before it was ready:\n${output.join('\n')}`));
      child.once('exit', onExit);
      child.once('message', (msg) => {
        child.off('exit', onExit);
        const server = new ServerChild(label, child, msg as Ready);
        server.output.push(...output);
        output.length = 0;
        child.stdout!.off('data', collect).on('data', (c: Buffer) => server.collect(c));
        child.stderr!.off('data', collect).on('data', (c: Buffer) => server.collect(c));
        resolve(server);
      });
    });
  }

  private collect(chunk: Buffer): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '' && this.output.length < 200) this.output.push(line);
  }

  private ask(msg: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ ...msg, id });
    });
  }

  async codes(n: number): Promise<string[]> {
    return (await this.ask({ cmd: 'codes', n })).codes as string[];
  }

  /** Starts measuring, from outside, this server's CPU and its PostgreSQL server's. */
  cpuMeter(): CpuMeter {
    return startCpuMeter({ platformPid: this.child.pid, postgresDatabase: this.postgresDatabase });
  }

  async stats(): Promise<ServerStats> {
    return (await this.ask({ cmd: 'stats' })).stats as ServerStats;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) return resolve();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      this.child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.child.send({ cmd: 'exit' });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Load generator

interface PhaseResult {
  count: number;
  windowMs: number;
  rate: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  errorSamples: string[];
  exhausted: boolean;
  server: ServerStats | undefined;
  /** CPU over the window, read from outside: the server's and, on PostgreSQL, the database server's. */
  cpu: CpuSpent | undefined;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

class TokenClient {
  private readonly conns: Client[];
  private readonly headers: Record<string, string>;
  constructor(readonly server: ServerChild) {
    const { port, host } = server.ready;
    this.conns = Array.from(
      { length: CLIENTS },
      () => new Client(`http://127.0.0.1:${port}`, { pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 }),
    );
    this.headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (host) this.headers.host = host;
  }

  refreshBody(refreshToken: string): string {
    const r = this.server.ready;
    return new URLSearchParams({
      client_id: r.clientId,
      client_secret: r.clientSecret,
      refresh_token: refreshToken,
      grant_type: 'refresh_token',
      redirect_uri: r.redirectUri,
    }).toString();
  }

  codeBody(code: string): string {
    const r = this.server.ready;
    return new URLSearchParams({
      client_id: r.clientId,
      client_secret: r.clientSecret,
      code,
      grant_type: 'authorization_code',
      redirect_uri: r.redirectUri,
    }).toString();
  }

  /** One POST to the token endpoint on connection `i`; resolves with the status and the body text. */
  async post(i: number, body: string): Promise<{ status: number; text: string }> {
    try {
      const res = await this.conns[i]!.request({ path: this.server.ready.path, method: 'POST', headers: this.headers, body });
      return { status: res.statusCode, text: await res.body.text() };
    } catch (err) {
      return { status: -1, text: String((err as Error)?.message ?? err) };
    }
  }

  /**
   * Runs CLIENTS workers; worker i repeatedly takes a body from next(i) (undefined: nothing left)
   * and posts it, until the window ends. Returns figures over the completions inside the window.
   */
  async phase(opts: {
    warmupMs: number;
    measureMs: number;
    next: (i: number) => string | undefined;
    onOk: (i: number, json: { access_token?: string; refresh_token?: string }) => void;
    stopWorkerOnError: boolean;
  }): Promise<PhaseResult> {
    const start = performance.now();
    const warmEnd = start + opts.warmupMs;
    let end = warmEnd + opts.measureMs;
    let lat = new Float64Array(1 << 16);
    let count = 0;
    let errors = 0;
    const errorSamples: string[] = [];
    let exhausted = false;
    let statsReset: Promise<unknown> | undefined;
    let meter: CpuMeter | undefined;
    const resetTimer = setTimeout(() => {
      meter = this.server.cpuMeter();
      statsReset = this.server.stats();
    }, opts.warmupMs);
    const worker = async (i: number) => {
      for (;;) {
        if (performance.now() >= end) return;
        const body = opts.next(i);
        if (body === undefined) {
          if (!exhausted) {
            exhausted = true;
            end = Math.min(end, performance.now());
          }
          return;
        }
        const t0 = performance.now();
        const { status, text } = await this.post(i, body);
        const t1 = performance.now();
        let ok = status === 200;
        let json: { access_token?: string; refresh_token?: string } = {};
        if (ok) {
          try {
            json = JSON.parse(text);
          } catch {
            ok = false;
          }
          if (typeof json.access_token !== 'string' || typeof json.refresh_token !== 'string') ok = false;
        }
        if (!ok) {
          errors++;
          if (errorSamples.length < 5) errorSamples.push(`${status} ${text.slice(0, 200)}`);
          if (opts.stopWorkerOnError) return;
          continue;
        }
        opts.onOk(i, json);
        if (t1 >= warmEnd && t1 <= end) {
          if (count === lat.length) {
            const bigger = new Float64Array(lat.length * 2);
            bigger.set(lat);
            lat = bigger;
          }
          lat[count++] = t1 - t0;
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, i) => worker(i)));
    clearTimeout(resetTimer);
    const cpu = meter?.stop();
    let server: ServerStats | undefined;
    if (statsReset) {
      await statsReset;
      server = await this.server.stats();
    }
    const windowMs = Math.max(0, end - warmEnd);
    const sorted = lat.slice(0, count).sort();
    return {
      count,
      windowMs,
      rate: windowMs > 0 ? (count / windowMs) * 1000 : 0,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: count > 0 ? sorted[count - 1]! : NaN,
      errors,
      errorSamples,
      exhausted,
      server,
      cpu,
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.conns.map((c) => c.close()));
  }
}

// ---------------------------------------------------------------------------------------------
// One server: set-up, refresh phase, code phase

interface ServerResult {
  label: string;
  refresh: PhaseResult;
  code: PhaseResult;
  setupErrors: string[];
  notices: string[];
  info: Record<string, unknown>;
}

async function benchServer(label: string, script: string, env: Record<string, string> = {}): Promise<ServerResult> {
  const server = await ServerChild.start(label, script, env);
  const url = env.BENCH_TOKEN_DATABASE;
  server.postgresDatabase = url?.startsWith('postgres') ? postgresDatabaseName(url) : undefined;
  const tc = new TokenClient(server);
  const setupErrors: string[] = [];
  try {
    // Each client starts its own chain by redeeming one code (this also opens its connection).
    const initial = await server.codes(CLIENTS);
    const chains: string[] = new Array(CLIENTS);
    await Promise.all(
      initial.map(async (code, i) => {
        const { status, text } = await tc.post(i, tc.codeBody(code));
        const json = status === 200 ? (JSON.parse(text) as { refresh_token?: string }) : {};
        if (typeof json.refresh_token !== 'string') setupErrors.push(`initial code exchange: ${status} ${text.slice(0, 200)}`);
        chains[i] = json.refresh_token ?? '';
      }),
    );
    if (setupErrors.length > 0) throw new Error(`${label}: ${setupErrors.join('\n')}`);

    const refresh = await tc.phase({
      warmupMs: REFRESH_WARMUP_MS,
      measureMs: REFRESH_MEASURE_MS,
      next: (i) => tc.refreshBody(chains[i]!),
      onOk: (i, json) => {
        chains[i] = json.refresh_token!;
      },
      stopWorkerOnError: true, // a broken chain cannot continue
    });

    // Codes live 60 s: mint them right before this phase, enough for 1.5x the refresh rate.
    const phaseS = (CODE_WARMUP_MS + CODE_MEASURE_MS) / 1000;
    const wanted = Math.min(150_000, Math.max(5_000, Math.ceil(refresh.rate * phaseS * 1.5) + 2_000));
    const codes = await server.codes(wanted);
    let nextCode = 0;
    const code = await tc.phase({
      warmupMs: CODE_WARMUP_MS,
      measureMs: CODE_MEASURE_MS,
      next: () => (nextCode < codes.length ? tc.codeBody(codes[nextCode++]!) : undefined),
      onOk: () => {},
      stopWorkerOnError: false,
    });
    return { label, refresh, code, setupErrors, notices: server.output, info: { ...server.ready.info, codesMinted: codes.length } };
  } finally {
    await tc.close();
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');

function line(name: string, r: PhaseResult): string {
  let s = `  ${name.padEnd(15)} ${f0(r.rate).padStart(6)} /s   p50 ${f1(r.p50).padStart(5)} ms   p99 ${f1(r.p99).padStart(5)} ms   max ${f1(r.max).padStart(6)} ms   n=${r.count} in ${f2(r.windowMs / 1000)} s   errors ${r.errors}`;
  if (r.exhausted) s += '   (codes ran out: window shortened)';
  if (r.server) {
    const cpuMs = r.server.userMs + r.server.systemMs;
    // Server CPU per answered request over the window (warm-up excluded), and its event-loop use.
    s += `\n  ${''.padEnd(15)} server: ${f0((cpuMs / r.server.wallMs) * 100)}% CPU (user ${f0(r.server.userMs)} ms, sys ${f0(r.server.systemMs)} ms), event loop ${f0(r.server.elu * 100)}% busy, ~${f0((cpuMs * 1000) / Math.max(1, r.count))} µs CPU/request, rss ${f0(r.server.rssMb)} MB`;
  }
  if (r.cpu) s += `\n  ${''.padEnd(15)} measured from outside: ${formatCpu(r.cpu, r.count, 'grant')}`;
  if (r.server?.db) {
    const entries = Object.entries(r.server.db);
    const totalMs = entries.reduce((a, [, t]) => a + t.ms, 0);
    s += `\n  ${''.padEnd(15)} db-timing: ${f0((totalMs / r.server.wallMs) * 100)}% of the window inside SQLite calls, ~${f0((totalMs * 1000) / Math.max(1, r.count))} µs/request:`;
    for (const [kind, t] of entries)
      s += `\n  ${''.padEnd(17)} ${kind.padEnd(28)} ${f0((t.ms * 1000) / Math.max(1, r.count)).padStart(5)} µs/request  (${f1(t.calls / Math.max(1, r.count))} calls/request, ${f0((t.ms * 1000) / Math.max(1, t.calls))} µs/call)`;
  }
  for (const e of r.errorSamples) s += `\n    error sample: ${e}`;
  return s;
}

console.log(
  `node ${process.version}, ${availableParallelism()} CPUs; ${CLIENTS} clients over keep-alive (one undici connection each, no pipelining); load generator in this process, each server in its own child process`,
);
console.log(
  `load average at start: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (includes any benchmark that just ended; other processes on these 2 cores make the figures noisy)`,
);
console.log(
  `refresh: ${REFRESH_WARMUP_MS / 1000} s warm-up + ${REFRESH_MEASURE_MS / 1000} s measured, each client on its own rotating chain; code exchange: ${CODE_WARMUP_MS / 1000} s + ${CODE_MEASURE_MS / 1000} s, codes minted just before`,
);

const results: Record<'storegate' | 'reference', ServerResult | undefined> = { storegate: undefined, reference: undefined };
if (ONLY !== 'reference') {
  const database = await createBenchDatabase('token');
  let r: ServerResult;
  try {
    r = await benchServer('storegate', './servers/storegate-server.ts', { BENCH_TOKEN_DATABASE: database.url });
  } finally {
    await database.drop();
  }
  results.storegate = r;
  console.log(`\nstoregate (${describeDurability(r.info)})`);
  if (r.info.diag) console.log(`  DIAGNOSTIC RUN (BENCH_TOKEN_DIAG=${r.info.diag}): not the benchmark, cannot pass the target`);
  console.log(line('refresh grants', r.refresh));
  console.log(line('code exchanges', r.code));
  for (const n of r.notices.slice(0, 10)) console.log(`  [child] ${n}`);
}
if (ONLY !== 'storegate') {
  const r = await benchServer('reference', './servers/oidc-server.ts');
  results.reference = r;
  console.log(
    `\nreference: oidc-provider ${r.info.version ?? '8'} (rotating refresh tokens, opaque access tokens, no ID token, default in-memory adapter: nothing durable)`,
  );
  console.log(line('refresh grants', r.refresh));
  console.log(line('code exchanges', r.code));
  if (r.code.server?.lruEntries)
    console.log(
      `  note: for the code phase the in-memory adapter's QuickLRU was enlarged from 1,000 to ${f0(r.code.server.lruEntries)} entries so that pre-minted codes are not evicted`,
    );
  const notices = [...new Set(r.notices)].filter((n) => !/^\s/.test(n));
  for (const n of notices.slice(0, 10)) console.log(`  [oidc-provider] ${n}`);
}

const sg = results.storegate;
const ref = results.reference;
if (sg && ref) {
  const refreshRatio = sg.refresh.rate / ref.refresh.rate;
  const codeRatio = sg.code.rate / ref.code.rate;
  const errors = sg.refresh.errors + sg.code.errors + ref.refresh.errors + ref.code.errors;
  const valid = errors === 0 && !sg.info.diag && isDurable(sg.info);
  const onSqlite = sg.info.dialect === 'sqlite';
  console.log(
    `\nratio storegate/reference: refresh ${f2(refreshRatio)}x (${f0(sg.refresh.rate)} vs ${f0(ref.refresh.rate)} /s), code exchange ${f2(codeRatio)}x (${f0(sg.code.rate)} vs ${f0(ref.code.rate)} /s)`,
  );
  const why =
    errors > 0
      ? `INVALID RUN: ${errors} non-200 answers`
      : sg.info.diag
        ? `diagnostic run (${sg.info.diag})`
        : !isDurable(sg.info)
          ? 'commits not durable'
          : '';
  if (onSqlite) {
    const pass = valid && refreshRatio >= TARGET_REFRESH_RATIO && codeRatio >= TARGET_CODE_RATIO && sg.refresh.p99 < TARGET_P99_MS;
    console.log(
      `target (SQLite, every grant committed durably): refresh >= ${TARGET_REFRESH_RATIO}x, code >= ${TARGET_CODE_RATIO}x the reference, refresh p99 < ${TARGET_P99_MS} ms: ${pass ? 'PASS' : 'FAIL'} (${why || `refresh ${f2(refreshRatio)}x, code ${f2(codeRatio)}x, refresh p99 ${f1(sg.refresh.p99)} ms`})`,
    );
  } else {
    console.log(
      `target (PostgreSQL): refresh and code grants >= 0.7x SQLite's in the same run: see the PG/SQLite column of \`npm run bench -- token --database both\`${why ? ` (${why})` : ''}`,
    );
  }
  // Same row names on both databases, so `--database both` lines them up; on PostgreSQL the
  // refresh target is against SQLite, which that table shows.
  const rows: ReportRow[] = [
    {
      name: 'refresh grants/s (ratio: oidc-provider)',
      value: sg.refresh.rate,
      unit: '/s',
      ratio: refreshRatio,
      target: onSqlite ? `>= ${TARGET_REFRESH_RATIO}x` : '>= 0.7x SQLite',
      pass: onSqlite ? valid && refreshRatio >= TARGET_REFRESH_RATIO : undefined,
    },
    {
      name: 'refresh p99',
      value: sg.refresh.p99,
      unit: 'ms',
      target: onSqlite ? `< ${TARGET_P99_MS} ms` : undefined,
      pass: onSqlite ? valid && sg.refresh.p99 < TARGET_P99_MS : undefined,
    },
    {
      name: 'code grants/s (ratio: oidc-provider)',
      value: sg.code.rate,
      unit: '/s',
      ratio: codeRatio,
      target: onSqlite ? `>= ${TARGET_CODE_RATIO}x` : '>= 0.7x SQLite',
      pass: onSqlite ? valid && codeRatio >= TARGET_CODE_RATIO : undefined,
    },
    { name: 'code p99', value: sg.code.p99, unit: 'ms' },
    ...(sg.refresh.cpu ? cpuRows(sg.refresh.cpu, sg.refresh.count, 'refresh grant', !onSqlite) : []),
    ...(sg.code.cpu ? cpuRows(sg.code.cpu, sg.code.count, 'code grant', !onSqlite) : []),
  ];
  report(rows);
  if (errors > 0) process.exitCode = 1;
} else {
  console.log('\n(only one server measured: no ratio)');
}

/** Whether every grant the storegate child answered was committed durably first. */
function isDurable(info: Record<string, unknown>): boolean {
  if (info.dialect === 'sqlite') return info.synchronous === 2 || info.synchronous === 3;
  return info.synchronous_commit !== 'off' && info.fsync === 'on';
}

function describeDurability(info: Record<string, unknown>): string {
  const verdict = isDurable(info) ? 'every grant is committed durably, fsync, before the answer' : 'commits are NOT fsynced: not durable';
  if (info.dialect !== 'sqlite') return `PostgreSQL synchronous_commit=${info.synchronous_commit}, fsync=${info.fsync}: ${verdict}`;
  const sync =
    ({ 0: 'OFF', 1: 'NORMAL', 2: 'FULL', 3: 'EXTRA' } as Record<number, string>)[info.synchronous as number] ?? String(info.synchronous);
  return `SQLite journal_mode=${info.journal_mode}, synchronous=${sync}: ${verdict}`;
}

// CPU time per request, measured from outside the processes that do the work: the platform's
// process (any child, compiled or through tsx, no message to it needed) and, on PostgreSQL, the
// server processes that serve the benchmark's own database. A rate moves with whatever else runs
// on a shared machine; the CPU each side spends on one request moves far less, and splitting the
// two shows the platform's own part whatever the machine.
//
// Read from /proc (Linux): a process's utime + stime. The PostgreSQL side sums the backends (and
// autovacuum workers) whose process title names the benchmark's database, which is unique to the
// run (see database.ts), so other databases on the same server (tests, other benchmarks) are not
// counted. Processes shared by every database (WAL writer, checkpointer) are left out: their work
// cannot be attributed to one database. A server on another machine has no such processes here,
// and its figure is then undefined (printed as n/a).
import { readdirSync, readFileSync } from 'node:fs';
import type { ReportRow } from './report.ts';

// Linux reports utime and stime in clock ticks of 1/100 s on every architecture Node runs on.
const TICK_US = 10_000;

/** CPU time (user + system, µs) a process has used so far, or undefined when it cannot be read. */
export function processCpuMicros(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return undefined;
  }
}

/** The database name in a postgres:// URL (the benchmark's own, created for the run). */
export function postgresDatabaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

function serverPidsOf(database: string): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let title: string;
    try {
      title = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    // A backend's title: "postgres: [cluster: ]user database host(port) state".
    if (title.startsWith('postgres: ') && title.replaceAll('\0', ' ').split(' ').includes(database)) pids.push(Number(entry));
  }
  return pids;
}

export interface CpuSpent {
  /** The platform process's CPU time over the window, µs (undefined when it could not be read). */
  platformUs: number | undefined;
  /** The PostgreSQL processes serving the run's database, µs; undefined on SQLite or a remote server. */
  serverUs: number | undefined;
}

export interface CpuMeter {
  /** Ends the window and returns what each side spent in it. */
  stop(): CpuSpent;
}

/**
 * Starts a window over the platform process `platformPid` (several pids are summed, for a platform
 * of more than one process) and, when `postgresDatabase` is given, the server processes serving
 * that database. Backends come and go with pools, so they are looked for every `intervalMs`; one
 * that ends between two looks loses at most that interval of its time.
 */
export function startCpuMeter(options: { platformPid?: number | number[]; postgresDatabase?: string; intervalMs?: number }): CpuMeter {
  const platformPids = options.platformPid === undefined ? [] : [options.platformPid].flat();
  const platformStart = platformPids.map((pid) => processCpuMicros(pid));
  // For each server process: the CPU it had when first seen in the window (0 when it started
  // inside the window) and the last figure read.
  const server = new Map<number, { first: number; last: number }>();
  const database = options.postgresDatabase;
  let timer: NodeJS.Timeout | undefined;
  const look = (starting: boolean) => {
    if (database === undefined) return;
    for (const pid of serverPidsOf(database)) {
      const now = processCpuMicros(pid);
      if (now === undefined) continue;
      const seen = server.get(pid);
      if (seen) seen.last = now;
      else server.set(pid, { first: starting ? now : 0, last: now });
    }
  };
  look(true);
  if (database !== undefined) {
    timer = setInterval(() => look(false), options.intervalMs ?? 200);
    timer.unref();
  }
  return {
    stop() {
      if (timer) clearInterval(timer);
      look(false);
      let platformUs: number | undefined = platformPids.length > 0 ? 0 : undefined;
      platformPids.forEach((pid, i) => {
        const start = platformStart[i];
        const end = processCpuMicros(pid);
        platformUs = platformUs === undefined || start === undefined || end === undefined ? undefined : platformUs + end - start;
      });
      let serverUs: number | undefined;
      if (database !== undefined && server.size > 0) {
        serverUs = 0;
        for (const { first, last } of server.values()) serverUs += last - first;
      }
      return { platformUs, serverUs };
    },
  };
}

/**
 * The two report rows of a window: platform CPU per `unit` and, on PostgreSQL, the server's, each
 * over `count` units of work (a request, a grant, a delivery, 1,000 rows…).
 */
export function cpuRows(spent: CpuSpent, count: number, unit: string, postgres: boolean): ReportRow[] {
  const per = (us: number | undefined) => (us === undefined || count <= 0 ? Number.NaN : us / count);
  const rows: ReportRow[] = [{ name: `platform CPU per ${unit}`, value: per(spent.platformUs), unit: 'µs' }];
  if (postgres) rows.push({ name: `PostgreSQL server CPU per ${unit}`, value: per(spent.serverUs), unit: 'µs' });
  return rows;
}

/** One line for a benchmark's own output: "platform 120 µs + PostgreSQL 300 µs CPU per page". */
export function formatCpu(spent: CpuSpent, count: number, unit: string): string {
  const per = (us: number | undefined) => (us === undefined || count <= 0 ? 'n/a' : `${(us / count).toFixed(1)} µs`);
  const server = spent.serverUs === undefined ? '' : ` + PostgreSQL ${per(spent.serverUs)}`;
  return `platform ${per(spent.platformUs)}${server} CPU per ${unit}`;
}

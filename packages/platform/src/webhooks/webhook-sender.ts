// One HTTP attempt of a webhook delivery: POST over kept-alive connections (one undici Pool per
// origin), a whole-request deadline, no redirects followed, at most the first 1 KB of the answer
// kept. The attempt talks to undici's dispatch interface directly: no response stream, no abort
// signal, no header object is built per request, which is most of what a request costs beyond the
// socket. In production every connection goes through a DNS lookup that refuses non-public
// addresses, so a name that changes its answer after the check still cannot reach an internal host.
import { createRequire } from 'node:module';
import { isIP, type LookupFunction } from 'node:net';
import type { Dispatcher, Pool } from 'undici';
import { isNonPublicAddress } from '../domain/ssrf.ts';
import { type Resolver, resolveAll } from '../services/public-address.ts';
import { SsrfRefusedError } from '../domain/errors.ts';

export const RESPONSE_KEEP_BYTES = 1024;
/** Bytes of an answer read (and thrown away) to keep the connection reusable; more closes it. */
const RESPONSE_DRAIN_BYTES = 64 * 1024;
/** An origin's connections are closed after this long without a request. */
const IDLE_ORIGIN_MS = 120_000;
/** Parsed addresses kept; the cache is emptied whole when it grows past this. */
const MAX_ADDRESSES = 10_000;

// undici (its fetch, WebSocket and HTTP parser come with it: several MiB resident) is loaded by the
// first attempt, not at start-up: a node whose worker has sent nothing never holds it.
const require = createRequire(import.meta.url);

export interface SendResult {
  status: number | null;
  retryAfter: string | undefined;
  responseBody: string | null;
  error: string | null;
  latencyMs: number;
}

/**
 * A `net.connect` lookup that fails for any name resolving to a non-public IP. It runs when the
 * socket is opened, so the address checked is the address connected to: a name whose answer
 * changes between the earlier checks and the connection still cannot reach an internal host.
 */
export function publicOnlyLookup(resolve: Resolver = resolveAll): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (ips) => {
        if (ips.length === 0 || ips.some((ip) => isNonPublicAddress(ip))) {
          callback(new SsrfRefusedError(`${hostname} resolves to a non-public address`), []);
          return;
        }
        const addresses = ips.map((address) => ({ address, family: isIP(address) }));
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}

export interface WebhookSenderOptions {
  timeoutMs: number;
  perOrigin: number;
  /** Connect only to public addresses (production). */
  publicOnly: boolean;
  /** Name resolution behind the public-only connect (default: the system resolver). */
  resolve?: Resolver;
}

/** Headers as undici takes them without building an object: name, value, name, value… */
export type FlatHeaders = string[];

interface Origin {
  pool: Pool;
  inflight: number;
  lastUsed: number;
}

export class WebhookSender {
  private readonly origins = new Map<string, Origin>();
  private readonly addresses = new Map<string, { origin: string; path: string }>();
  private readonly sweeper: ReturnType<typeof setInterval>;
  private closing = false;

  constructor(private readonly options: WebhookSenderOptions) {
    this.sweeper = setInterval(() => this.closeIdle(), IDLE_ORIGIN_MS / 2);
    this.sweeper.unref();
  }

  send(address: string, headers: FlatHeaders | Record<string, string>, body: string | Buffer): Promise<SendResult> {
    const target = this.target(address);
    const origin = this.origin(target.origin);
    origin.inflight++;
    origin.lastUsed = performance.now();
    return new Promise<SendResult>((resolve) => {
      const attempt = new Attempt(this.options.timeoutMs, (result) => {
        origin.inflight--;
        resolve(result);
      });
      try {
        origin.pool.dispatch(
          {
            origin: target.origin,
            path: target.path,
            method: 'POST',
            headers: Array.isArray(headers) ? headers : Object.entries(headers).flat(),
            body,
          },
          attempt,
        );
      } catch (err) {
        attempt.onError(err as Error);
      }
    });
  }

  close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    const pools = [...this.origins.values()].map((o) => o.pool);
    this.origins.clear();
    return Promise.all(pools.map((p) => (p.closed || p.destroyed ? undefined : p.close()))).then(() => undefined);
  }

  /** Cuts every request in flight (each then ends as a failed send). */
  destroy(): Promise<void> {
    return Promise.all([...this.origins.values()].map((o) => (o.pool.destroyed ? undefined : o.pool.destroy()))).then(() => undefined);
  }

  private target(address: string): { origin: string; path: string } {
    let t = this.addresses.get(address);
    if (!t) {
      const url = new URL(address);
      if (this.addresses.size >= MAX_ADDRESSES) this.addresses.clear();
      t = { origin: url.origin, path: `${url.pathname}${url.search}` };
      this.addresses.set(address, t);
    }
    return t;
  }

  private origin(origin: string): Origin {
    let o = this.origins.get(origin);
    if (!o || o.pool.closed || o.pool.destroyed) {
      const { timeoutMs, perOrigin, publicOnly, resolve } = this.options;
      const { Pool } = require('undici') as typeof import('undici');
      const pool = new Pool(origin, {
        connections: perOrigin,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 600_000,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        connect: { timeout: timeoutMs, ...(publicOnly ? { lookup: publicOnlyLookup(resolve) } : {}) },
      });
      o = { pool, inflight: 0, lastUsed: performance.now() };
      if (!this.closing) this.origins.set(origin, o);
    }
    return o;
  }

  /** Closes the connections of origins that have had no request for a while. */
  private closeIdle(): void {
    const before = performance.now() - IDLE_ORIGIN_MS;
    for (const [key, o] of this.origins) {
      if (o.inflight === 0 && o.lastUsed < before) {
        this.origins.delete(key);
        void o.pool.close();
      }
    }
  }
}

/** One request's handler: keeps the status, Retry-After and the first bytes of the answer. */
class Attempt implements Dispatcher.DispatchHandlers {
  private readonly started = performance.now();
  private readonly timer: ReturnType<typeof setTimeout>;
  private abort: ((err?: Error) => void) | undefined;
  private settled = false;
  private timedOut = false;
  private status: number | null = null;
  private retryAfter: string | undefined;
  private kept: Buffer[] = [];
  private keptBytes = 0;
  private total = 0;

  constructor(
    private readonly timeoutMs: number,
    private readonly done: (result: SendResult) => void,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.abort?.(new Error('deadline'));
      // Still waiting for a connection: the attempt ends now; the request is cut when it connects.
      this.fail(new Error('deadline'));
    }, timeoutMs);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.settled) abort(new Error('deadline'));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null): boolean {
    this.status = statusCode;
    if (rawHeaders) {
      for (let i = 0; i < rawHeaders.length; i += 2) {
        const name = rawHeaders[i]!;
        if (name.length === 11 && name.toString().toLowerCase() === 'retry-after') {
          this.retryAfter ??= rawHeaders[i + 1]!.toString();
        }
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.total += chunk.length;
    if (this.keptBytes < RESPONSE_KEEP_BYTES) {
      const part = chunk.subarray(0, RESPONSE_KEEP_BYTES - this.keptBytes);
      this.kept.push(part);
      this.keptBytes += part.length;
    }
    if (this.total > RESPONSE_DRAIN_BYTES) {
      // The answer counts as received; the rest of it is not worth the connection.
      this.succeed();
      this.abort?.(new Error('response too long'));
      return false;
    }
    return true;
  }

  onComplete(): void {
    this.succeed();
  }

  onError(err: Error): void {
    this.fail(err);
  }

  private succeed(): void {
    if (this.settled) return;
    this.finish({
      status: this.status,
      retryAfter: this.retryAfter,
      responseBody: this.keptBytes > 0 ? Buffer.concat(this.kept).toString('utf8') : null,
      error: null,
      latencyMs: this.latency(),
    });
  }

  private fail(err: Error): void {
    if (this.settled) return;
    this.finish({
      status: null,
      retryAfter: undefined,
      responseBody: null,
      error: describeError(err, this.timedOut, this.timeoutMs),
      latencyMs: this.latency(),
    });
  }

  private finish(result: SendResult): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.kept = [];
    this.done(result);
  }

  private latency(): number {
    return Math.round(performance.now() - this.started);
  }
}

function describeError(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timed out after ${timeoutMs} ms`;
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err instanceof SsrfRefusedError || e.cause instanceof SsrfRefusedError)
    return `refused: ${(e.cause as Error | undefined)?.message ?? e.message}`;
  const code = e.code ?? e.cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset by the receiver';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `timed out after ${timeoutMs} ms`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the address could not be resolved';
    default:
      return `request failed: ${(e.message ?? String(err)).slice(0, 200)}`;
  }
}

// One HTTP attempt of a webhook delivery: POST with undici over kept-alive connections, a whole-
// request deadline, no redirects followed, at most the first 1 KB of the answer kept. In
// production every connection goes through a DNS lookup that refuses non-public addresses, so a
// name that changes its answer after the check still cannot reach an internal host.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent } from 'undici';
import { isNonPublicAddress } from '../domain/ssrf.ts';

export const RESPONSE_KEEP_BYTES = 1024;
/** Bytes of an answer read (and thrown away) to keep the connection reusable; more closes it. */
const RESPONSE_DRAIN_BYTES = 64 * 1024;

export interface SendResult {
  status: number | null;
  retryAfter: string | undefined;
  responseBody: string | null;
  error: string | null;
  latencyMs: number;
}

export class SsrfRefusedError extends Error {
  readonly code = 'ESSRFREFUSED';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that fails for any name resolving to a private, loopback or link-local IP. */
export function publicOnlyLookup(hostname: string, options: { all?: boolean } | number | undefined, callback: LookupCallback): void {
  dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
    if (err) return callback(err, []);
    if (addresses.length === 0 || addresses.some((a) => isNonPublicAddress(a.address))) {
      return callback(new SsrfRefusedError(`${hostname} resolves to a non-public address`), []);
    }
    if (typeof options === 'object' && options?.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: { timeoutMs: number; perOrigin: number; publicOnly: boolean }) {
    this.agent = new Agent({
      connections: options.perOrigin,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      maxRedirections: 0,
      connect: { timeout: options.timeoutMs, ...(options.publicOnly ? { lookup: publicOnlyLookup as never } : {}) },
    });
  }

  async send(address: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const url = new URL(address);
    const started = performance.now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
    const latency = () => Math.round(performance.now() - started);
    try {
      const res = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        body,
        signal: controller.signal,
      });
      const kept: Buffer[] = [];
      let keptBytes = 0;
      let total = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        total += chunk.length;
        if (keptBytes < RESPONSE_KEEP_BYTES) {
          const part = chunk.subarray(0, RESPONSE_KEEP_BYTES - keptBytes);
          kept.push(part);
          keptBytes += part.length;
        }
        if (total > RESPONSE_DRAIN_BYTES) {
          res.body.destroy();
          break;
        }
      }
      const retryAfter = res.headers['retry-after'];
      return {
        status: res.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        responseBody: keptBytes > 0 ? Buffer.concat(kept).toString('utf8') : null,
        error: null,
        latencyMs: latency(),
      };
    } catch (err) {
      return {
        status: null,
        retryAfter: undefined,
        responseBody: null,
        error: describeError(err, controller.signal.aborted, this.options.timeoutMs),
        latencyMs: latency(),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
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

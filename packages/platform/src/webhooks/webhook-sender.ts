// One HTTP attempt of a webhook delivery: POST with undici over kept-alive connections, a whole-
// request deadline, no redirects followed, at most the first 1 KB of the answer kept. In
// production every connection goes through a DNS lookup that refuses non-public addresses, so a
// name that changes its answer after the check still cannot reach an internal host.
import { isIP, type LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { isNonPublicAddress } from '../domain/ssrf.ts';
import { type Resolver, resolveAll } from '../services/public-address.ts';

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

export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: WebhookSenderOptions) {
    this.agent = new Agent({
      connections: options.perOrigin,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      maxRedirections: 0,
      connect: { timeout: options.timeoutMs, ...(options.publicOnly ? { lookup: publicOnlyLookup(options.resolve) } : {}) },
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
    return this.agent.closed || this.agent.destroyed ? Promise.resolve() : this.agent.close();
  }

  /** Cuts every request in flight (each then ends as a failed send). */
  destroy(): Promise<void> {
    return this.agent.destroyed ? Promise.resolve() : this.agent.destroy();
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

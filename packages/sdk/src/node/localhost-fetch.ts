// `@storegate/app/node`: Node-only helpers. The development platform serves each store at
// `http://{store}.localhost:8080`; browsers resolve `*.localhost` to loopback, Node does not
// (ENOTFOUND), and `fetch` ignores a `Host` header. `localhostFetch` is a `fetch` that sends
// requests for `localhost` and `*.localhost` to the loopback address with the right `Host`, and
// every other request to the global `fetch`.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Options of {@link localhostFetch}. */
export interface LocalhostFetchOptions {
  /** Where `*.localhost` goes (default `127.0.0.1`). */
  address?: string;
  /** `fetch` for every other host (default: the global one). */
  fetch?: typeof fetch;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function isLocalhost(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

/**
 * A `fetch` that reaches `*.localhost` hosts on the loopback address, keeping the `Host` header, so
 * that Node apps can talk to a development platform at `http://{store}.localhost:8080`.
 *
 * @example
 * ```ts
 * import { localhostFetch } from '@storegate/app/node';
 * const app = createApp({ ...config, storeDomain: 'localhost', fetch: localhostFetch() });
 * ```
 */
export function localhostFetch(options: LocalhostFetchOptions = {}): typeof fetch {
  const address = options.address ?? '127.0.0.1';
  const family = address.includes(':') ? 6 : 4;
  const fallback = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const lookup = (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    if (!isLocalhost(hostname)) {
      dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
        if (error || lookupOptions.all) callback(error, addresses);
        else callback(null, addresses[0]?.address ?? '', addresses[0]?.family);
      });
      return;
    }
    if (lookupOptions.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  return (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (!isLocalhost(url.hostname)) return fallback(input, init);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return await new Promise<Response>((resolve, reject) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(url, { method: request.method, headers, lookup, signal: init?.signal ?? undefined }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v);
          }
          const status = res.statusCode ?? 502;
          const nullBody = status === 204 || status === 304 || request.method === 'HEAD';
          resolve(
            new Response(nullBody ? null : Buffer.concat(chunks), {
              status,
              statusText: res.statusMessage ?? '',
              headers: responseHeaders,
            }),
          );
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }) as typeof fetch;
}

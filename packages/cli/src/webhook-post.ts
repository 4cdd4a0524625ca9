// One POST for `webhooks trigger`, over node:http(s) so that the request carries exactly the
// headers a delivery does (fetch would add Accept, Accept-Language, Sec-Fetch-Mode...). Names
// under `.localhost` go to the loopback address: Node's resolver does not know them, browsers do.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

/** The first 1 KB of the answer is kept, as the delivery log keeps it. */
const KEEP_BYTES = 1024;

const localhostLookup: LookupFunction = (hostname, options, callback) => {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    const address: LookupAddress = { address: '127.0.0.1', family: 4 };
    if (options.all) callback(null, [address]);
    else callback(null, address.address, address.family);
    return;
  }
  dnsLookup(hostname, options, callback as (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void);
};

export function postOnce(
  address: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  const url = new URL(address);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) }, lookup: localhostLookup },
      (res) => {
        const kept: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < KEEP_BYTES) kept.push(chunk.subarray(0, KEEP_BYTES - size));
          size += chunk.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(kept).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

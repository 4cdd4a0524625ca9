// A local webhook receiver for tests (node:http on 127.0.0.1): records every request with its raw
// headers and body; what it answers is decided per request by a handler the test sets.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: Record<string, string>;
  /** Header names exactly as sent. */
  rawNames: string[];
  body: string;
  at: number;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, received: Received) => void;

export class Receiver {
  readonly received: Received[] = [];
  handler: Handler = (_req, res) => res.end('ok');
  private server!: Server;
  port = 0;

  static async start(): Promise<Receiver> {
    const r = new Receiver();
    r.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
        const rawNames = req.rawHeaders.filter((_, i) => i % 2 === 0);
        const rec = { path: req.url ?? '', headers, rawNames, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        r.received.push(rec);
        r.handler(req, res, rec);
      });
    });
    r.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  on(path: string): Received[] {
    return this.received.filter((x) => x.path === path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

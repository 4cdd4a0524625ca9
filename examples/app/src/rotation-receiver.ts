// A receiver that keeps accepting the platform's webhooks and App-URL requests while the app's
// client secret is rotated. STOREGATE_CLIENT_SECRET takes a comma-separated list, the new secret
// first: deploy `new,old`, press "Finish rotation" (or `storegate apps rotate-secret <id> --finish`),
// then deploy `new` alone. Run it next to a platform:
//
//   STOREGATE_CLIENT_ID=<client_id> STOREGATE_CLIENT_SECRET=<new>,<old> \
//     node --conditions=@storegate/source --import tsx src/rotation-receiver.ts
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { createApp, type StoregateApp } from '@storegate/app';

/** `new,old` → `['new', 'old']`; blanks around the commas are ignored. */
export function secretList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function rotationApp(clientId: string, secrets: readonly string[]): StoregateApp {
  // Any listed secret verifies; the first one is the one the app itself signs and authenticates with.
  return createApp({ clientId, clientSecret: secrets, scopes: ['read_products'], redirectUri: 'http://localhost:3001/auth/callback' });
}

/** Answers one request: 200 when its signature verifies with one of the secrets, else 401 naming why. */
export async function answer(
  app: StoregateApp,
  request: { method: string; url: string; headers: Record<string, string | string[] | undefined>; rawBody: Uint8Array },
): Promise<{ status: number; body: string }> {
  try {
    if (request.method === 'POST' && request.url.startsWith('/webhooks')) {
      const event = await app.verifyWebhook({ rawBody: request.rawBody, headers: request.headers });
      return { status: 200, body: `verified ${event.topic ?? 'webhook'} from ${event.shop ?? '?'} (${event.scheme})` };
    }
    if (request.method === 'GET') {
      const install = await app.verifyInstallRequest(new URL(request.url, 'http://localhost').search);
      return { status: 200, body: `verified the App-URL request of ${install.shop}` };
    }
    return { status: 404, body: 'not found' };
  } catch (err) {
    return { status: 401, body: err instanceof Error ? err.message : String(err) };
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secrets = secretList(process.env.STOREGATE_CLIENT_SECRET);
  const clientId = process.env.STOREGATE_CLIENT_ID ?? '';
  if (!clientId || secrets.length === 0) {
    process.stderr.write('STOREGATE_CLIENT_ID and STOREGATE_CLIENT_SECRET (new,old) are required\n');
    process.exit(2);
  }
  const app = rotationApp(clientId, secrets);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const out = await answer(app, {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
      });
      process.stdout.write(`${out.status} ${out.body}\n`);
      res.writeHead(out.status, { 'content-type': 'text/plain' }).end(out.body);
    });
  });
  server.listen(Number(process.env.PORT ?? 3001), '127.0.0.1', () => {
    process.stdout.write(`rotation receiver on http://127.0.0.1:${process.env.PORT ?? 3001} with ${secrets.length} secret(s)\n`);
  });
}

// Child process for bench/token.bench.ts: the reference authorization server, oidc-provider v8,
// configured as issue 2 asks: rotating refresh tokens, opaque access tokens, no ID token (the
// `openid` scope is never granted), its default in-memory adapter. Same IPC protocol as
// storegate-server.ts: {type:'ready', ...}, {id, cmd:'codes', n}, {id, cmd:'stats'}, {cmd:'exit'}.
//
// Codes are minted through the provider's own models (Grant + AuthorizationCode), exactly what its
// authorization endpoint stores after consent, so that no browser interaction is needed.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import Provider from 'oidc-provider';
// The default adapter keeps everything in one QuickLRU of 1,000 entries (up to 2,000 with its old
// generation). That is kept as is for the refresh phase (the working set is ~150 entries). For the
// code phase, thousands of codes must exist before they are redeemed, so the same adapter is given a
// larger QuickLRU through its own `setStorage` export; nothing else changes.
import { setStorage } from 'oidc-provider/lib/adapters/memory_adapter.js';
import QuickLRU from 'quick-lru';

type Request = { id: number; cmd: 'codes'; n: number } | { id: number; cmd: 'stats' } | { id?: number; cmd: 'exit' };

const send = (msg: unknown) => process.send!(msg);
const REDIRECT = 'http://localhost:9/cb';
const CLIENT_ID = 'bench-client';
const CLIENT_SECRET = randomBytes(32).toString('base64url');
const ACCOUNT = 'bench-account';
const SCOPE = 'read_products offline_access';
const DEFAULT_LRU_ENTRIES = 1000;
const VERSION = (createRequire(import.meta.url)('oidc-provider/package.json') as { version: string }).version;

const provider = new Provider('http://127.0.0.1', {
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [REDIRECT],
      scope: SCOPE,
    },
  ],
  scopes: ['openid', 'offline_access', 'read_products'],
  rotateRefreshToken: true,
  issueRefreshToken: async () => true,
  // Access tokens are opaque: no resource indicators, so no JWT access-token format is ever chosen.
  features: { devInteractions: { enabled: false }, resourceIndicators: { enabled: false } },
  async findAccount(_ctx: unknown, sub: string) {
    return {
      accountId: sub,
      async claims() {
        return { sub };
      },
    };
  },
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 60,
    RefreshToken: 90 * 86400,
    Grant: 90 * 86400,
    IdToken: 3600,
    Interaction: 3600,
    Session: 86400,
  },
  cookies: { keys: [randomBytes(32).toString('hex')] },
} as never);

let serverErrors = 0;
let grantErrors = 0;
let lastGrantError = '';
provider.on('server_error', (_ctx: unknown, err: Error) => {
  serverErrors++;
  console.error(`server_error: ${err?.stack ?? err}`);
});
provider.on('grant.error', (_ctx: unknown, err: Error) => {
  grantErrors++;
  lastGrantError = `${err?.name}: ${err?.message} ${(err as { error_description?: string }).error_description ?? ''}`;
});

const client = await provider.Client.find(CLIENT_ID);
if (!client) throw new Error('static client not found');

let grantId: string | undefined;
let lruEntries = DEFAULT_LRU_ENTRIES;

async function newGrant(): Promise<string> {
  const grant = new provider.Grant({ accountId: ACCOUNT, clientId: CLIENT_ID });
  grant.addOIDCScope(SCOPE);
  return grant.save();
}

async function mintCodes(n: number): Promise<string[]> {
  // Each redeemed code adds an access and a refresh token: make room for all of them (see above).
  const needed = 4 * n + 10_000;
  if (needed > 2 * lruEntries) {
    lruEntries = needed;
    setStorage(new QuickLRU({ maxSize: lruEntries }));
    grantId = undefined;
  }
  grantId ??= await newGrant();
  const codes: string[] = [];
  for (let i = 0; i < n; i++) {
    const code = new provider.AuthorizationCode({
      accountId: ACCOUNT,
      grantId,
      client,
      scope: SCOPE,
      redirectUri: REDIRECT,
    });
    codes.push(await code.save());
  }
  return codes;
}

let lastCpu = process.cpuUsage();
let lastElu = performance.eventLoopUtilization();
let lastAt = performance.now();
function stats() {
  const cpu = process.cpuUsage(lastCpu);
  const elu = performance.eventLoopUtilization(lastElu);
  const now = performance.now();
  const out = {
    wallMs: now - lastAt,
    userMs: cpu.user / 1000,
    systemMs: cpu.system / 1000,
    elu: elu.utilization,
    rssMb: process.memoryUsage().rss / 2 ** 20,
    serverErrors,
    grantErrors,
    lastGrantError,
    lruEntries,
  };
  lastCpu = process.cpuUsage();
  lastElu = performance.eventLoopUtilization();
  lastAt = now;
  return out;
}

const server = createServer(provider.callback());
function shutdown(): void {
  server.close();
  server.closeAllConnections();
  process.exit(0);
}

process.on('message', (raw) => {
  const msg = raw as Request;
  if (msg.cmd === 'exit') return shutdown();
  if (msg.cmd === 'codes') {
    mintCodes(msg.n).then(
      (codes) => send({ id: msg.id, codes }),
      (err: Error) => send({ id: msg.id, error: String(err?.stack ?? err) }),
    );
  } else if (msg.cmd === 'stats') {
    send({ id: msg.id, stats: stats() });
  }
});
process.on('disconnect', shutdown);

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  send({
    type: 'ready',
    port,
    path: '/token',
    host: undefined,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: REDIRECT,
    info: { version: VERSION, adapter: 'default in-memory (QuickLRU)' },
  });
});

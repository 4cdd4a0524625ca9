// A resource server beside storegate, as an operator runs one: its own HTTP API on loopback that
// takes an app's access token as `Authorization: Bearer` and asks the real `storegate serve`
// process whether the token is active (RFC 7662), with a credential made by
// `storegate resource-servers create`. The token comes from a real install (merchant consent, code
// exchange); once the app revokes it, the resource server refuses it on the next request, and once
// the operator deletes the credential, the resource server can no longer ask.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentAsMerchant } from './merchant-consent.ts';
import { cli, request, startServer, type RunningServer } from './server-process.ts';

const MERCHANT = { email: 'owner@rs.test', password: 'resource-server-password' };

interface Introspection {
  active: boolean;
  scope?: string;
  client_id?: string;
  store?: string;
}

describe('a resource server beside storegate checks app tokens through introspection', () => {
  let server: RunningServer;
  let resourceServer: http.Server;
  let rsPort = 0;
  let app: { client_id: string; client_secret: string };
  let credential: { client_id: string; client_secret: string };
  const storeHost = () => `rs.localhost:${server.port}`;

  beforeAll(async () => {
    server = await startServer({
      prepare: (database) => {
        cli(database, ['stores', 'create', 'rs', '--owner-email', MERCHANT.email, '--owner-password', MERCHANT.password]);
        app = cli(database, [
          'apps',
          'create',
          '--name',
          'Gateway client',
          '--app-url',
          'http://127.0.0.1:9/app',
          '--redirect-uri',
          'http://127.0.0.1:9/callback',
          '--scopes',
          'read_products',
        ]);
        credential = cli(database, ['resource-servers', 'create', '--name', 'Reports API']);
      },
    });
    // The resource server: answers GET /reports when storegate says the token is active and holds read_products.
    resourceServer = http.createServer(async (req, res) => {
      const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!bearer) return void res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
      const basic = Buffer.from(`${credential.client_id}:${credential.client_secret}`).toString('base64');
      const answer = await request(
        server.port,
        storeHost(),
        'POST',
        '/admin/oauth/introspect',
        new URLSearchParams({ token: bearer }).toString(),
        {
          authorization: `Basic ${basic}`,
        },
      );
      if (answer.status !== 200) return void res.writeHead(503).end(`introspection answered ${answer.status}`);
      const info = JSON.parse(answer.body) as Introspection;
      if (!info.active) return void res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
      if (!info.scope?.split(' ').includes('read_products')) return void res.writeHead(403).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ store: info.store, client_id: info.client_id }));
    });
    await new Promise<void>((resolve) => resourceServer.listen(0, '127.0.0.1', resolve));
    rsPort = (resourceServer.address() as AddressInfo).port;
  }, 60_000);

  afterAll(async () => {
    await new Promise((resolve) => resourceServer?.close(resolve));
    await server?.stop();
  });

  const reports = (token: string) =>
    request(rsPort, `127.0.0.1:${rsPort}`, 'GET', '/reports', undefined, { authorization: `Bearer ${token}` });

  it('accepts a live token, refuses it once the app revoked it, and cannot ask once its credential is deleted', async () => {
    const authorize = new URL(`http://${storeHost()}/admin/oauth/authorize`);
    authorize.search = new URLSearchParams({
      client_id: app.client_id,
      scope: 'read_products',
      redirect_uri: 'http://127.0.0.1:9/callback',
      response_type: 'code',
      state: 'rs-1',
    }).toString();
    const callback = await consentAsMerchant(server.port, authorize.toString(), MERCHANT);
    const token = await request(
      server.port,
      storeHost(),
      'POST',
      '/admin/oauth/token',
      new URLSearchParams({
        client_id: app.client_id,
        client_secret: app.client_secret,
        code: callback.searchParams.get('code')!,
        grant_type: 'authorization_code',
        redirect_uri: 'http://127.0.0.1:9/callback',
      }).toString(),
    );
    expect(token.status, token.body).toBe(200);
    const accessToken = JSON.parse(token.body).access_token as string;

    const ok = await reports(accessToken);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ store: 'rs', client_id: app.client_id });
    expect((await reports('sg_at_not-a-real-token')).status).toBe(401);
    // Asking did not count as a use: the token still calls the Admin API as its first call.
    expect(
      (await request(server.port, storeHost(), 'GET', '/openapi/2026-01/products', undefined, { 'access-token': accessToken })).status,
    ).toBe(200);

    const revoked = await request(
      server.port,
      storeHost(),
      'POST',
      '/admin/oauth/revoke',
      new URLSearchParams({ token: accessToken, client_id: app.client_id, client_secret: app.client_secret }).toString(),
    );
    expect(revoked.status).toBe(200);
    expect((await reports(accessToken)).status).toBe(401);

    const deleted = cli(server.database, ['resource-servers', 'delete', credential.client_id]);
    expect(deleted).toMatchObject({ client_id: credential.client_id });
    const refused = await reports(accessToken);
    expect(refused.status).toBe(503);
    expect(refused.body).toBe('introspection answered 401');
  });
});

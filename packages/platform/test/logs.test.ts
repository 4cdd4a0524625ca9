// Logs never contain a token, a code, a client secret or a password, through a whole flow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consent,
  createFixture,
  createTestPlatform,
  exchange,
  formBody,
  refreshRequest,
  tokenRequest,
  type TestPlatform,
} from './harness.ts';

describe('logs', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform('sqlite', { logLevel: 'trace' });
  });
  afterAll(async () => t.close());

  it('hold no secret of a full install, exchange, refresh, revoke and failed attempts', async () => {
    const f = await createFixture(t);
    const redirect = await consent(t, f);
    const code = redirect.searchParams.get('code')!;
    const pair = await exchange(t, f, code);
    const next = (await refreshRequest(t, f, pair.refresh_token)).json();
    await tokenRequest(t, f, {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      code,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    });
    await tokenRequest(t, f, {
      client_id: f.clientId,
      client_secret: `${f.clientSecret}x`,
      refresh_token: next.refresh_token,
      grant_type: 'refresh_token',
    });
    await t.app.inject({
      method: 'POST',
      url: '/admin/oauth/token',
      headers: {
        host: f.host,
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${f.clientId}:${f.clientSecret}`).toString('base64')}`,
      },
      payload: formBody({ grant_type: 'refresh_token', refresh_token: next.refresh_token }),
    });
    await t.app.inject({
      method: 'POST',
      url: '/admin/oauth/revoke',
      headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' },
      payload: formBody({ client_id: f.clientId, client_secret: f.clientSecret, token: next.access_token }),
    });

    const all = t.logs.join('\n');
    expect(all.length).toBeGreaterThan(1000);
    expect(all).toContain('/admin/oauth/token');
    const secrets = [
      code,
      pair.access_token,
      pair.refresh_token,
      next.access_token,
      next.refresh_token,
      f.clientSecret,
      f.password,
      redirect.searchParams.get('hmac')!,
    ];
    for (const s of secrets) expect(all).not.toContain(s);
    expect(all).not.toMatch(/sg_(at|rt|ac|cs|pt|ss)_[A-Za-z0-9_-]{20}/);
  });
});

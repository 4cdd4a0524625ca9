import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { redactingLogger, type Logger } from '../src/logging/redacting-logger.ts';
import { memorySessionStorage } from '../src/session/memory-session-storage.ts';
import { fixedRandom, frozenClock, recordingSleep } from './support/fake-fetch.ts';
import { fakePlatform } from './support/fake-platform.ts';

const SECRET = 'very-secret-client-secret';
const SHOP = 'demo.localhost';

function capture() {
  const lines: string[] = [];
  const record = (level: string) => (message: string, details?: Record<string, unknown>) =>
    void lines.push(`${level} ${message} ${JSON.stringify(details ?? {})}`);
  const logger: Logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
  return { logger, lines };
}

describe('logging hook', () => {
  it('never receives a token, code or secret during a full flow, failures included', async () => {
    const { logger, lines } = capture();
    const clock = frozenClock(1_700_000_000_000);
    const platform = fakePlatform({
      clientId: 'cid',
      clientSecret: SECRET,
      redirectUri: 'https://app.example/cb',
      now: clock.now,
      accessTokenLifetime: 120,
    });
    const sessionStorage = memorySessionStorage();
    const app = createApp({
      clientId: 'cid',
      clientSecret: SECRET,
      scopes: 'read_products',
      redirectUri: 'https://app.example/cb',
      fetch: platform.fetch,
      clock,
      sleep: recordingSleep().sleep,
      randomBytes: fixedRandom(),
      sessionStorage,
      logger,
    });
    const seen = new Set<string>([SECRET]);

    // Refused callbacks first (bad hmac, stale state), then a good install.
    const { state, cookie } = await app.auth.begin({ shop: SHOP });
    const stateCookie = cookie.split(';')[0];
    const forged = (await platform.redirectQuery(SHOP, state)).replace('demo', 'evil');
    await expect(app.auth.callback(forged, { stateCookie })).rejects.toBeDefined();
    const query = await platform.redirectQuery(SHOP, state);
    seen.add(new URLSearchParams(query).get('code')!);
    const session = await app.auth.callback(query, { stateCookie });
    seen.add(session.accessToken).add(session.refreshToken!);

    // Refresh ahead of expiry, then a 401 → forced refresh → retry.
    clock.advance(100);
    const refreshed = await app.getAccessToken(SHOP);
    seen.add(refreshed);
    platform.expireAccessToken(refreshed);
    await app.client(SHOP).get('products');
    const latest = (await sessionStorage.get(SHOP))!;
    seen.add(latest.accessToken).add(latest.refreshToken!);

    // A refused refresh (invalid_grant) logs too.
    await sessionStorage.set({ ...latest, refreshToken: 'sg_rt_revoked_token', expiresAt: 0 });
    seen.add('sg_rt_revoked_token');
    await expect(app.getAccessToken(SHOP)).rejects.toMatchObject({ code: 'REAUTHORIZATION_REQUIRED' });

    expect(lines.length).toBeGreaterThan(5);
    expect(lines.some((l) => l.includes('access token refreshed'))).toBe(true);
    expect(lines.some((l) => l.includes('401'))).toBe(true);
    const all = lines.join('\n');
    for (const secret of seen) expect(all).not.toContain(secret);
    expect(all).not.toMatch(/sg_(at|rt|ac)_/);
  });

  it('redacts known secrets, token-shaped strings, sensitive keys and query secrets', () => {
    const { logger, lines } = capture();
    const log = redactingLogger(logger, ['s3cr3t-value']);
    log.addSecret('opaque-token-without-prefix');
    log.info('using s3cr3t-value and opaque-token-without-prefix', {
      accessToken: 'x',
      nested: { refresh_token: 'y', url: 'https://a/cb?code=abc&shop=demo.localhost&hmac=ff', list: ['sg_at_12345'] },
      error: new Error('token sg_rt_999 failed'),
      shop: 'demo.localhost',
    });
    const line = lines[0]!;
    for (const s of ['s3cr3t-value', 'opaque-token-without-prefix', '"x"', '"y"', 'code=abc', 'hmac=ff', 'sg_at_12345', 'sg_rt_999'])
      expect(line).not.toContain(s);
    expect(line).toContain('shop=demo.localhost');
    expect(line).toContain('"shop":"demo.localhost"');
  });

  it('a throwing logger does not break the SDK', () => {
    const log = redactingLogger({
      info: () => {
        throw new Error('logger down');
      },
    });
    expect(() => log.info('hello')).not.toThrow();
  });
});

// Launch-token verification against test-vectors/launch-tokens.json (tokens made with Python's
// hmac/base64/json, not with this code), through the standalone function and through the app.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { LaunchTokenError } from '../src/errors.ts';
import { redactingLogger, type Logger } from '../src/logging/redacting-logger.ts';
import { verifyLaunchToken } from '../src/oauth/launch-token.ts';
import { fakeFetch, json } from './support/fake-fetch.ts';

interface Vector {
  name: string;
  token: string;
  secrets: string[];
  now: number;
  expected: string;
  claim?: string;
}
const vectors = JSON.parse(readFileSync(new URL('../../../test-vectors/launch-tokens.json', import.meta.url), 'utf8')) as {
  client_id: string;
  store_domain: string;
  api_origin: string;
  skew_seconds: number;
  valid_claims: Record<string, unknown>;
  valid_shop: string;
  cases: Vector[];
};

const expectedIssuer = (shop: string) => vectors.api_origin.replace('{shop}', shop);

describe('launch tokens (test-vectors/launch-tokens.json)', () => {
  it('covers valid tokens and every error code', () => {
    const verdicts = new Set(vectors.cases.map((v) => v.expected));
    expect([...verdicts].sort()).toEqual(
      [
        'valid',
        'LAUNCH_TOKEN_MALFORMED',
        'LAUNCH_TOKEN_ALGORITHM_REFUSED',
        'LAUNCH_TOKEN_SIGNATURE_INVALID',
        'LAUNCH_TOKEN_EXPIRED',
        'LAUNCH_TOKEN_NOT_YET_VALID',
        'LAUNCH_TOKEN_AUDIENCE_MISMATCH',
        'LAUNCH_TOKEN_ISSUER_INVALID',
        'LAUNCH_TOKEN_CLAIM_MISSING',
      ].sort(),
    );
  });

  for (const v of vectors.cases) {
    it(`${v.name}: ${v.expected}`, async () => {
      const verifying = verifyLaunchToken(v.token, {
        clientId: vectors.client_id,
        secret: v.secrets,
        storeDomain: vectors.store_domain,
        now: () => v.now * 1000,
        expectedIssuer,
      });
      if (v.expected === 'valid') {
        const verified = await verifying;
        expect(verified.shop).toBe(vectors.valid_shop);
        expect(verified.userId).toBe(vectors.valid_claims['sub']);
        expect(verified.claims).toEqual(vectors.valid_claims);
        return;
      }
      const error = await verifying.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LaunchTokenError);
      expect(error).toMatchObject({ code: v.expected, ...(v.claim ? { claim: v.claim } : {}) });
      // The message names what is wrong, never the token or a secret.
      const message = (error as Error).message;
      if (v.token.length > 10) expect(message).not.toContain(v.token.split('.')[2] || v.token);
      for (const secret of v.secrets) expect(message).not.toContain(secret);
    });
  }

  it('the app verifies with its current and previous secret, its client id, store domain, API origin and clock', async () => {
    const [current, previous] = vectors.cases[0]!.secrets as [string, string];
    const make = (clientSecret: string | string[], now: number) =>
      createApp({
        clientId: vectors.client_id,
        clientSecret,
        scopes: 'read_products',
        redirectUri: 'http://localhost:3000/auth/callback',
        storeDomain: vectors.store_domain,
        apiOrigin: vectors.api_origin,
        clock: { now: () => now * 1000 },
        fetch: fakeFetch(() => json({})).fetch,
      });
    for (const v of vectors.cases) {
      const secrets = v.secrets.length === 2 ? [current, previous] : current;
      const outcome = await make(secrets, v.now)
        .verifyLaunchToken(v.token)
        .then(
          (r) => ({ code: 'valid', shop: r.shop }),
          (e: { code: string }) => ({ code: e.code, shop: undefined }),
        );
      expect(outcome.code, v.name).toBe(v.expected);
      if (v.expected === 'valid') expect(outcome.shop).toBe(vectors.valid_shop);
    }
  });

  it('without an expected issuer, any store base URL of the domain is accepted (the port is the API origin check)', async () => {
    const otherPort = vectors.cases.find((v) => v.name === 'iss on another port than the API origin')!;
    const verified = await verifyLaunchToken(otherPort.token, {
      clientId: vectors.client_id,
      secret: otherPort.secrets,
      storeDomain: vectors.store_domain,
      now: () => otherPort.now * 1000,
    });
    expect(verified.claims.iss).toBe('http://demo.localhost:9090');
  });

  it('refuses a non-string and an over-long token as malformed', async () => {
    const options = { clientId: vectors.client_id, secret: 's', storeDomain: 'localhost' };
    await expect(verifyLaunchToken(undefined, options)).rejects.toMatchObject({ code: 'LAUNCH_TOKEN_MALFORMED' });
    await expect(verifyLaunchToken(42, options)).rejects.toMatchObject({ code: 'LAUNCH_TOKEN_MALFORMED' });
    await expect(verifyLaunchToken(`eyJ${'a'.repeat(5000)}.b.c`, options)).rejects.toMatchObject({ code: 'LAUNCH_TOKEN_MALFORMED' });
  });

  it('the redacting logger hides launch tokens by shape and in id_token / subject_token query parameters', () => {
    const lines: string[] = [];
    const logger: Logger = { info: (m, d) => void lines.push(`${m} ${JSON.stringify(d ?? {})}`) };
    const log = redactingLogger(logger);
    const token = vectors.cases[0]!.token;
    log.info(`opened /?shop=demo.localhost&id_token=abc.def.ghi&x=1 with ${token}`, { note: `token ${token}` });
    log.info('posted ?grant_type=x&subject_token=zzz');
    expect(lines.join('\n')).not.toContain(token);
    expect(lines.join('\n')).not.toContain('abc.def.ghi');
    expect(lines.join('\n')).not.toContain('zzz');
  });
});

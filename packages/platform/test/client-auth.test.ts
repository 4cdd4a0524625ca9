// Client authentication at the token endpoint as a judgement of the app row (verifyClient), and the
// check the token endpoint's grants run, built from what the request presented.
import { describe, expect, it } from 'vitest';
import { type ClientApp, verifyClient } from '../src/domain/client-auth.ts';
import { InvalidClient, InvalidGrant, InvalidRequest } from '../src/domain/errors.ts';
import { ClientAuth } from '../src/services/client-auth.ts';
import type { AppRow } from '../src/storage/ports/rows.ts';

const NOW = Date.UTC(2026, 10, 22);
/** Sealing for the test: a visible wrapper, so a test can tell what was opened. */
const seal = (plain: string) => `sealed(${plain})`;
const opened: string[] = [];
const open = (sealed: string) => {
  opened.push(sealed);
  const m = /^sealed\((.*)\)$/.exec(sealed);
  if (!m) throw new Error('not sealed by this test');
  return m[1]!;
};

const app: ClientApp & { id: number } = {
  id: 7,
  client_secret_enc: seal('current-secret'),
  previous_secret_enc: null,
  previous_secret_expires_at: null,
  redirect_uri: 'https://app.example.test/callback',
};
const rotated = { ...app, previous_secret_enc: seal('previous-secret'), previous_secret_expires_at: NOW + 1000 };

function refusal(verdict: ReturnType<typeof verifyClient>): unknown {
  if (verdict.ok) throw new Error('the client was accepted');
  return verdict.error;
}

describe('verifyClient', () => {
  it('accepts the current secret and answers with the very row it judged', () => {
    const verdict = verifyClient(app, { secret: 'current-secret' }, NOW, open);
    expect(verdict).toEqual({ ok: true, app });
    expect(verdict.ok && verdict.app).toBe(app);
  });

  it('refuses an unknown client and a wrong secret alike, as invalid_client with the same description', () => {
    opened.length = 0;
    const unknown = refusal(verifyClient(undefined, { secret: 'current-secret' }, NOW, open));
    expect(opened).toEqual([]);
    const sameLength = refusal(verifyClient(app, { secret: 'current-secreT' }, NOW, open));
    // Of another length: refused, not thrown by the constant-time comparison.
    const shorter = refusal(verifyClient(app, { secret: 'current' }, NOW, open));
    const empty = refusal(verifyClient(app, { secret: '' }, NOW, open));
    for (const error of [unknown, sameLength, shorter, empty]) {
      expect(error).toBeInstanceOf(InvalidClient);
      expect(error).toMatchObject({ error: 'invalid_client', statusCode: 401, description: 'client authentication failed' });
    }
  });

  it('accepts the previous secret only until its grace period after a rotation ends', () => {
    expect(verifyClient(rotated, { secret: 'previous-secret' }, NOW, open).ok).toBe(true);
    expect(verifyClient(rotated, { secret: 'previous-secret' }, NOW + 999, open).ok).toBe(true);
    expect(refusal(verifyClient(rotated, { secret: 'previous-secret' }, NOW + 1000, open))).toBeInstanceOf(InvalidClient);
    expect(refusal(verifyClient(rotated, { secret: 'previous-secret' }, NOW + 5000, open))).toBeInstanceOf(InvalidClient);
    // A previous secret without an end is not honoured at all.
    const endless = { ...rotated, previous_secret_expires_at: null };
    expect(refusal(verifyClient(endless, { secret: 'previous-secret' }, NOW, open))).toBeInstanceOf(InvalidClient);
    // The current secret still works throughout.
    expect(verifyClient(rotated, { secret: 'current-secret' }, NOW + 5000, open).ok).toBe(true);
    // After its grace period the previous secret is not even opened.
    opened.length = 0;
    verifyClient(rotated, { secret: 'wrong' }, NOW + 1000, open);
    expect(opened).toEqual([rotated.client_secret_enc]);
  });

  it('judges the redirect URI only for an authenticated client', () => {
    expect(verifyClient(app, { secret: 'current-secret', redirectUri: app.redirect_uri }, NOW, open).ok).toBe(true);
    const moved = refusal(verifyClient(app, { secret: 'current-secret', redirectUri: 'https://evil.example.test/cb' }, NOW, open));
    expect(moved).toBeInstanceOf(InvalidGrant);
    expect(moved).toMatchObject({ error: 'invalid_grant', description: 'redirect_uri does not match the registered redirect URL' });
    const stranger = refusal(verifyClient(app, { secret: 'guess', redirectUri: 'https://evil.example.test/cb' }, NOW, open));
    expect(stranger).toBeInstanceOf(InvalidClient);
  });
});

describe('ClientAuth.presented', () => {
  const auth = new ClientAuth({ open }, () => NOW);
  const row = { ...app, client_id: 'client-7' } as unknown as AppRow;

  it('refuses missing credentials at once, before any app is read', () => {
    expect(() => auth.presented(undefined, 'current-secret')).toThrow(new InvalidClient('client_id is required'));
    expect(() => auth.presented('client-7', undefined)).toThrow(new InvalidClient('client_secret is required'));
    expect(() => auth.presented('', '')).toThrow(new InvalidClient('client_id is required'));
  });

  it('looks up no client_id longer than any app has', () => {
    expect(auth.presented('client-7', 'x').lookupId).toBe('client-7');
    expect(auth.presented('c'.repeat(101), 'x').lookupId).toBeUndefined();
  });

  it('answers the request: the client first, then its redirect URI, then what the request lacks', () => {
    const lacking = new InvalidRequest('code is required');
    const check = (secret: string, redirectUri?: string) => () =>
      auth.presented('client-7', secret, { redirectUri, refusal: lacking }).check(row);
    expect(() => auth.presented('client-7', 'current-secret', { refusal: lacking }).check(undefined)).toThrow(InvalidClient);
    expect(check('guess', 'https://evil.example.test/cb')).toThrow(InvalidClient);
    expect(check('current-secret', 'https://evil.example.test/cb')).toThrow(InvalidGrant);
    expect(check('current-secret', app.redirect_uri)).toThrow(lacking);
    expect(auth.presented('client-7', 'current-secret', { redirectUri: app.redirect_uri }).check(row)).toBe(row);
  });
});

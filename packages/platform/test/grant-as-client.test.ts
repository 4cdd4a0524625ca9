// The service's side of a grant: the client judged on an app row storage read, the grant run on
// that approved row only, and judged again on the row storage hands back when the app changed.
import { describe, expect, it } from 'vitest';
import { type ClientCheck, type ClientGrant, grantAsClient } from '../src/services/client-auth.ts';
import type { AppRow } from '../src/storage/ports/rows.ts';
import type { GrantClient, GrantOutcome } from '../src/storage/ports/tokens.ts';

function appRow(secret: string): AppRow {
  return {
    id: 7,
    client_id: 'client-7',
    partner_id: 1,
    name: 'App 7',
    app_url: 'https://app.example.test/',
    redirect_uri: 'https://app.example.test/callback',
    scopes: 'read_products',
    client_secret_enc: secret,
    previous_secret_enc: null,
    previous_secret_expires_at: null,
    privacy_webhook_url: null,
    authorization_iss: 0,
    managed_install: 0,
    webhook_signature_ed25519: 0,
  };
}

/** Accepts the app while it holds `secret`. */
const client = (secret: string): ClientCheck => ({
  lookupId: 'client-7',
  check: (app) => {
    if (!app || app.client_secret_enc !== secret) throw new Error('client refused');
    return app;
  },
});

/**
 * A store whose app is `rows[0]` for the first grant call, `rows[1]` for the next... (the last one
 * from then on), with `copy` kept from before; records every call it answers.
 */
function store(copy: AppRow | undefined, ...rows: (AppRow | undefined)[]) {
  const calls: GrantClient[] = [];
  const grant: ClientGrant<string> = {
    known: () => copy,
    run: async (c): Promise<GrantOutcome<string>> => {
      const now = rows[Math.min(calls.length, rows.length - 1)];
      calls.push(c);
      if (now && c.approved === now) return { ran: true, app: now, granted: 'granted' };
      return { ran: false, app: now };
    },
  };
  return { grant, calls };
}

describe('grantAsClient', () => {
  it('without a copy: reads the app, then runs the grant approved on the row read', async () => {
    const row = appRow('s1');
    const { grant, calls } = store(undefined, row);
    expect(await grantAsClient(client('s1'), grant)).toEqual({ app: row, granted: 'granted' });
    expect(calls).toEqual([{ lookupId: 'client-7' }, { lookupId: 'client-7', approved: row }]);
  });

  it('a copy the client passes on, still current: the grant alone, approved on the copy', async () => {
    const row = appRow('s1');
    const { grant, calls } = store(row, row);
    expect(await grantAsClient(client('s1'), grant)).toEqual({ app: row, granted: 'granted' });
    expect(calls).toEqual([{ lookupId: 'client-7', approved: row }]);
  });

  it('a copy that refuses the client is judged again as the app is now: refused there too, no grant runs', async () => {
    const row = appRow('s1');
    const { grant, calls } = store(row, row);
    await expect(grantAsClient(client('wrong'), grant)).rejects.toThrow('client refused');
    expect(calls).toEqual([{ lookupId: 'client-7' }]);
  });

  it('a copy that refuses a secret changed since: the app read now takes it, the grant runs on that row', async () => {
    const old = appRow('s1');
    const now = appRow('s2');
    const { grant, calls } = store(old, now);
    expect(await grantAsClient(client('s2'), grant)).toEqual({ app: now, granted: 'granted' });
    expect(calls).toEqual([{ lookupId: 'client-7' }, { lookupId: 'client-7', approved: now }]);
  });

  it('the app changed under the grant: judged on the row handed back, and a refusal there is final', async () => {
    const old = appRow('s1');
    const now = appRow('s2');
    const { grant, calls } = store(old, now);
    await expect(grantAsClient(client('s1'), grant)).rejects.toThrow('client refused');
    expect(calls).toEqual([{ lookupId: 'client-7', approved: old }]);
  });

  it('the app changed again under every attempt: the grant gives up after a few, having run nothing', async () => {
    const rows = Array.from({ length: 10 }, () => appRow('s1'));
    const { grant, calls } = store(appRow('s1'), ...rows);
    await expect(grantAsClient(client('s1'), grant)).rejects.toThrow('the app changed under every attempt of the grant');
    expect(calls).toHaveLength(4);
    expect(calls.every((c) => c.approved !== undefined)).toBe(true);
  });

  it('no client_id worth a lookup, or no app under it: refused without any grant', async () => {
    const { grant, calls } = store(undefined, undefined);
    await expect(grantAsClient({ ...client('s1'), lookupId: undefined }, grant)).rejects.toThrow('client refused');
    expect(calls).toEqual([]);
    await expect(grantAsClient(client('s1'), grant)).rejects.toThrow('client refused');
    expect(calls).toEqual([{ lookupId: 'client-7' }]);
  });
});

import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nodeHmacEngine, webCryptoHmacEngine } from '../src/crypto/hmac.ts';
import { canonicalQuery, queryPairs, signQuery, verifyQuery } from '../src/signature/query-signature.ts';

const vectors = JSON.parse(readFileSync(new URL('../../../test-vectors/signatures.json', import.meta.url), 'utf8')) as {
  query_hmac: Array<{ secret: string; query: string; canonical: string; hmac: string }>;
};

const escaping = JSON.parse(readFileSync(new URL('../../../test-vectors/query-escaping.json', import.meta.url), 'utf8')) as {
  query_hmac: Array<{ note: string; secret: string; query: string; canonical: string; hmac: string }>;
};

describe('query hmac known answers (shared/vectors/signatures.json)', () => {
  for (const v of vectors.query_hmac) {
    it(`canonicalises and signs ${v.query.slice(0, 40)}…`, async () => {
      expect(canonicalQuery(v.query)).toBe(v.canonical);
      expect(await signQuery(v.query, v.secret)).toBe(v.hmac);
      await expect(verifyQuery(`${v.query}&hmac=${v.hmac}`, v.secret)).resolves.toBeTypeOf('object');
      await expect(verifyQuery(`hmac=${v.hmac}&${v.query}`, v.secret)).resolves.toBeTypeOf('object');
    });
    it(`both HMAC engines agree on ${v.query.slice(0, 30)}…`, async () => {
      const node = nodeHmacEngine();
      expect(node).toBeDefined();
      expect(await node!.sign(v.secret, [v.canonical], 'hex')).toBe(v.hmac);
      expect(await webCryptoHmacEngine().sign(v.secret, [v.canonical], 'hex')).toBe(v.hmac);
    });
  }

  it('accepts URLSearchParams, a record, a full URL and a path', async () => {
    const v = vectors.query_hmac[2]!;
    const raw = `${v.query}&hmac=${v.hmac}`;
    await expect(verifyQuery(new URLSearchParams(raw), v.secret)).resolves.toMatchObject({ code: 'c' });
    await expect(verifyQuery(Object.fromEntries(new URLSearchParams(raw)), v.secret)).resolves.toMatchObject({
      redirect: 'https://a.b/c?x=1 2',
    });
    await expect(verifyQuery(`https://app.example/cb?${raw}`, v.secret)).resolves.toMatchObject({ code: 'c' });
    await expect(verifyQuery(`/cb?${raw}`, v.secret)).resolves.toMatchObject({ code: 'c' });
    await expect(verifyQuery(`?${raw}`, v.secret)).resolves.toMatchObject({ code: 'c' });
  });
});

describe('escaping before joining (test-vectors/query-escaping.json)', () => {
  for (const v of escaping.query_hmac) {
    it(v.note, async () => {
      expect(canonicalQuery(v.query)).toBe(v.canonical);
      expect(await signQuery(v.query, v.secret)).toBe(v.hmac);
      await expect(verifyQuery(`${v.query}&hmac=${v.hmac}`, v.secret)).resolves.toBeTypeOf('object');
      expect(await webCryptoHmacEngine().sign(v.secret, [v.canonical], 'hex')).toBe(v.hmac);
    });
  }

  it('a redirect whose state holds & and = cannot be re-split into a launch for another shop', async () => {
    const secret = 'shh-secret';
    const redirect = { code: 'c', shop: 'bravo.localhost', state: 'x&shop=alpha.localhost', timestamp: '1700000000' };
    const hmac = await signQuery(redirect, secret);
    await expect(verifyQuery({ ...redirect, hmac }, secret)).resolves.toMatchObject({ shop: 'bravo.localhost' });
    const resplit = { code: 'c&shop=bravo.localhost&state=x', shop: 'alpha.localhost', timestamp: '1700000000', hmac };
    await expect(verifyQuery(resplit, secret)).rejects.toMatchObject({ code: 'HMAC_INVALID' });
    // A signature made the old way (joined raw) verifies neither.
    const { createHmac } = await import('node:crypto');
    const legacy = createHmac('sha256', secret)
      .update('code=c&shop=bravo.localhost&state=x&shop=alpha.localhost&timestamp=1700000000')
      .digest('hex');
    await expect(verifyQuery({ ...resplit, hmac: legacy }, secret)).rejects.toMatchObject({ code: 'HMAC_INVALID' });
  });

  it('the joined string names one set of parameters only: it reads back as exactly the parameters signed', () => {
    const unescapeEntry = (text: string) =>
      text.replace(/%(25|26|3D)/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    const readBack = (canonical: string): Record<string, string> => {
      const out: Record<string, string> = {};
      if (canonical === '') return out;
      for (const entry of canonical.split('&')) {
        const eq = entry.indexOf('=');
        out[unescapeEntry(entry.slice(0, eq))] = unescapeEntry(entry.slice(eq + 1));
      }
      return out;
    };
    const tricky = fc.string({ unit: fc.constantFrom('a', 'b', '&', '=', '%', '2', '5', '6', '3', 'D', ',', ' '), maxLength: 10 });
    fc.assert(
      fc.property(
        fc.dictionary(
          tricky.filter((n) => n !== 'hmac'),
          tricky,
          { maxKeys: 5 },
        ),
        (params) => {
          expect(readBack(canonicalQuery(params))).toEqual({ ...params });
        },
      ),
      { numRuns: 300, seed: 20261126 },
    );
  });
});

describe('canonical form', () => {
  it('joins repeated names with commas in the order sent, sorted by name (stable)', () => {
    expect(canonicalQuery('b=2&ids=3&a=1&ids=1&ids=2')).toBe('a=1&b=2&ids=3,1,2');
    expect(canonicalQuery({ ids: ['3', '1'], a: '1' })).toBe('a=1&ids=3,1');
    expect(canonicalQuery(new URLSearchParams('ids=3&ids=1&a=1'))).toBe('a=1&ids=3,1');
  });
  it('decodes + as space, percent escapes, and keeps malformed escapes as sent', () => {
    expect(queryPairs('a=x+y&b=%41%zz&c')).toEqual([
      ['a', 'x y'],
      ['b', '%41%zz'],
      ['c', ''],
    ]);
  });
  it('drops only the hmac parameter', () => {
    expect(canonicalQuery('hmac=1&hmacx=2&a=3')).toBe('a=3&hmacx=2');
  });
});

describe('verifyQuery failures', () => {
  const secret = 'shh-secret';
  it('HMAC_MISSING when there is no hmac', async () => {
    await expect(verifyQuery('shop=a.localhost', secret)).rejects.toMatchObject({ code: 'HMAC_MISSING' });
  });
  it('HMAC_INVALID for a wrong, malformed or doubled hmac', async () => {
    const hmac = await signQuery('shop=a.localhost', secret);
    await expect(verifyQuery(`shop=b.localhost&hmac=${hmac}`, secret)).rejects.toMatchObject({ code: 'HMAC_INVALID' });
    await expect(verifyQuery('shop=a.localhost&hmac=zz', secret)).rejects.toMatchObject({ code: 'HMAC_INVALID' });
    await expect(verifyQuery(`shop=a.localhost&hmac=${hmac}&hmac=${hmac}`, secret)).rejects.toMatchObject({ code: 'HMAC_INVALID' });
  });
  it('accepts an upper-case hex digest', async () => {
    const hmac = await signQuery('shop=a.localhost', secret);
    await expect(verifyQuery(`shop=a.localhost&hmac=${hmac.toUpperCase()}`, secret)).resolves.toEqual({ shop: 'a.localhost' });
  });
  it('accepts any of several secrets (rotation)', async () => {
    const hmac = await signQuery('shop=a.localhost', 'old-secret');
    await expect(verifyQuery(`shop=a.localhost&hmac=${hmac}`, ['new-secret', 'old-secret'])).resolves.toEqual({ shop: 'a.localhost' });
    await expect(verifyQuery(`shop=a.localhost&hmac=${hmac}`, ['new-secret'])).rejects.toMatchObject({ code: 'HMAC_INVALID' });
  });
  it('checks the timestamp tolerance against the injected clock', async () => {
    const q = 'shop=a.localhost&timestamp=1700000000';
    const signed = `${q}&hmac=${await signQuery(q, secret)}`;
    const at = (s: number) => () => s * 1000;
    await expect(verifyQuery(signed, secret, { timestampToleranceSeconds: 300, now: at(1700000299) })).resolves.toMatchObject({
      timestamp: '1700000000',
    });
    await expect(verifyQuery(signed, secret, { timestampToleranceSeconds: 300, now: at(1699999701) })).resolves.toBeDefined();
    await expect(verifyQuery(signed, secret, { timestampToleranceSeconds: 300, now: at(1700000301) })).rejects.toMatchObject({
      code: 'TIMESTAMP_OUT_OF_RANGE',
    });
    const noTs = `shop=a.localhost&hmac=${await signQuery('shop=a.localhost', secret)}`;
    await expect(verifyQuery(noTs, secret, { timestampToleranceSeconds: 300, now: at(1700000000) })).rejects.toMatchObject({
      code: 'TIMESTAMP_MISSING',
    });
  });
});

describe('properties', () => {
  const name = fc.stringMatching(/^[a-z_]{1,8}$/).filter((n) => n !== 'hmac');
  const params = fc.dictionary(name, fc.string({ maxLength: 20 }), { minKeys: 1, maxKeys: 6 });
  const encode = (p: Record<string, string>) =>
    Object.entries(p)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .join('&');

  it('sign then verify always succeeds (raw string, URLSearchParams, record)', async () => {
    await fc.assert(
      fc.asyncProperty(params, fc.string({ minLength: 1, maxLength: 30 }), async (p, secret) => {
        const hmac = await signQuery(p, secret);
        await verifyQuery(`${encode(p)}&hmac=${hmac}`, secret);
        await verifyQuery(new URLSearchParams({ ...p, hmac }), secret);
        await verifyQuery({ ...p, hmac }, secret);
      }),
      { numRuns: 150 },
    );
  });

  it('any change to a value fails', async () => {
    await fc.assert(
      fc.asyncProperty(params, fc.nat(), fc.string({ maxLength: 20 }), async (p, pick, replacement) => {
        const keys = Object.keys(p);
        const key = keys[pick % keys.length]!;
        fc.pre(p[key] !== replacement);
        const hmac = await signQuery(p, 'secret');
        await expect(verifyQuery({ ...p, [key]: replacement, hmac }, 'secret')).rejects.toMatchObject({ code: 'HMAC_INVALID' });
      }),
      { numRuns: 150 },
    );
  });

  it('any change to a name fails', async () => {
    const plain = fc.dictionary(name, fc.stringMatching(/^[^&=]{0,12}$/), { minKeys: 1, maxKeys: 6 });
    await fc.assert(
      fc.asyncProperty(plain, fc.nat(), name, async (p, pick, renamed) => {
        const keys = Object.keys(p);
        const key = keys[pick % keys.length]!;
        fc.pre(!(renamed in p));
        const hmac = await signQuery(p, 'secret');
        const changed: Record<string, string> = { ...p, hmac };
        changed[renamed] = changed[key]!;
        delete changed[key];
        await expect(verifyQuery(changed, 'secret')).rejects.toMatchObject({ code: 'HMAC_INVALID' });
      }),
      { numRuns: 150 },
    );
  });

  it('any change to one character of the hmac fails', async () => {
    await fc.assert(
      fc.asyncProperty(params, fc.nat({ max: 63 }), async (p, index) => {
        const hmac = await signQuery(p, 'secret');
        const flipped = hmac.slice(0, index) + (hmac[index] === '0' ? '1' : '0') + hmac.slice(index + 1);
        await expect(verifyQuery({ ...p, hmac: flipped }, 'secret')).rejects.toMatchObject({ code: 'HMAC_INVALID' });
      }),
      { numRuns: 100 },
    );
  });
});

// Pure parts: signatures (known-answer vectors), hostnames, scopes, tokens, grant lifecycles.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkCode, decideRefresh, decideReplay, pkceChallenge } from '../src/domain/grants.ts';
import { ScopeParseError, UnsafeSignedValueError } from '../src/domain/errors.ts';
import { canonicalQuery, signQuery, signedQueryString, verifyQueryString } from '../src/domain/query-signature.ts';
import {
  ALL_SCOPES,
  allows,
  covers,
  describeScope,
  formatScopes,
  isServed,
  parseScopes,
  splitScope,
  supportedScopes,
} from '../src/domain/scopes.ts';
import { RESOURCE_DEFS } from '../src/domain/resources.ts';
import { SecretBox } from '../src/domain/secret-box.ts';
import { isValidShopHostname, isValidStoreName, routeHost } from '../src/domain/store-host.ts';
import { deriveSuccessorPair, hashToken, looksLike, newFamilyId, newToken } from '../src/domain/tokens.ts';
import { pooledRandomBytes } from '../src/domain/random.ts';
import { hashPassword, PasswordHasher, verifyPassword } from '../src/domain/password.ts';
import { loadConfig, rawConfigFromEnv } from '../src/config.ts';
import { checkWebhookAddress, isNonPublicAddress } from '../src/domain/ssrf.ts';

const vectors = JSON.parse(readFileSync(new URL('../../../test-vectors/signatures.json', import.meta.url), 'utf8'));
const escaping = JSON.parse(readFileSync(new URL('../../../test-vectors/query-escaping.json', import.meta.url), 'utf8')) as {
  query_hmac: Array<{ note: string; secret: string; query: string; canonical: string; hmac: string }>;
};

describe('query signature (seed §5.4)', () => {
  for (const v of vectors.query_hmac) {
    it(`reproduces ${v.hmac.slice(0, 12)}…`, () => {
      const params = new URLSearchParams(v.query);
      expect(canonicalQuery(params.entries())).toBe(v.canonical);
      expect(signQuery(Object.fromEntries(params), v.secret)).toBe(v.hmac);
      expect(verifyQueryString(`${v.query}&hmac=${v.hmac}`, v.secret)).toBe(true);
    });
  }
  it('rejects a changed value, a wrong secret and a malformed hmac', () => {
    const v = vectors.query_hmac[0];
    expect(verifyQueryString(`${v.query.replace('STATE123', 'STATE124')}&hmac=${v.hmac}`, v.secret)).toBe(false);
    expect(verifyQueryString(`${v.query}&hmac=${v.hmac}`, 'other')).toBe(false);
    expect(verifyQueryString(`${v.query}&hmac=zz`, v.secret)).toBe(false);
    expect(verifyQueryString(v.query, v.secret)).toBe(false);
  });
  it('signs what it sends: signedQueryString verifies', () => {
    const qs = signedQueryString({ shop: 'demo.localhost', timestamp: '1700000000', state: 'Az09-._~' }, 's3');
    expect(verifyQueryString(qs, 's3')).toBe(true);
  });
  for (const v of escaping.query_hmac) {
    it(`escapes %, & (and = in names) before joining: ${v.note}`, () => {
      expect(canonicalQuery(new URLSearchParams(v.query).entries())).toBe(v.canonical);
      expect(verifyQueryString(`${v.query}&hmac=${v.hmac}`, v.secret)).toBe(true);
    });
  }
  it('a signed string cannot be re-split: a state holding & and = does not sign a launch for another shop', () => {
    const [redirect, resplit] = escaping.query_hmac;
    expect(verifyQueryString(`${resplit!.query}&hmac=${redirect!.hmac}`, redirect!.secret)).toBe(false);
    // Joined raw, both would have been the one string below, and one hmac would have verified both.
    const raw = 'code=c&shop=bravo.localhost&state=x&shop=alpha.localhost&timestamp=1700000000';
    expect(canonicalQuery(new URLSearchParams(redirect!.query).entries())).not.toBe(raw);
    expect(canonicalQuery(new URLSearchParams(resplit!.query).entries())).not.toBe(raw);
  });
  it('never signs a name or value holding % or &, or a name holding =', () => {
    const unsafe: Record<string, string>[] = [{ state: 'a&shop=b' }, { state: '100%' }, { 'a=b': 'c' }, { 'a&b': 'c' }, { 'a%': 'c' }];
    for (const params of unsafe)
      expect(() => signedQueryString({ shop: 'demo.localhost', ...params }, 's3')).toThrow(UnsafeSignedValueError);
    expect(signedQueryString({ shop: 'demo.localhost', redirect: 'https://a.b/c?x=1' }, 's3')).toContain('hmac=');
  });
});

describe('hosts (seed §5.3, PRODUCT.md §2)', () => {
  it('accepts store names of letters, digits, hyphens with a letter or digit first', () => {
    for (const ok of ['demo', 'a', '9shop', 'my-shop', 'x'.repeat(63)]) expect(isValidStoreName(ok)).toBe(true);
    for (const bad of ['', '-shop', 'Shop', 'my_shop', 'a.b', 'x'.repeat(64), 'shöp']) expect(isValidStoreName(bad)).toBe(false);
  });
  it('routes the Host header', () => {
    expect(routeHost('demo.localhost:8080', 'localhost')).toEqual({ kind: 'store', storeName: 'demo' });
    expect(routeHost('DEMO.localhost', 'localhost')).toEqual({ kind: 'store', storeName: 'demo' });
    expect(routeHost('localhost:8080', 'localhost')).toEqual({ kind: 'platform' });
    for (const bad of [
      undefined,
      '',
      'a.b.localhost',
      'evil.com',
      'demo.localhost.evil.com',
      'de_mo.localhost',
      'demo.localhost:abc',
      '-x.localhost',
      'x'.repeat(400),
    ]) {
      expect(routeHost(bad, 'localhost').kind).toBe('invalid');
    }
  });
  it('checks shop hostnames the way apps must', () => {
    expect(isValidShopHostname('demo.myshoplaza.com', 'myshoplaza.com')).toBe(true);
    expect(isValidShopHostname('demo.myshoplaza.com.evil.com', 'myshoplaza.com')).toBe(false);
    expect(isValidShopHostname('demoXmyshoplazaXcom', 'myshoplaza.com')).toBe(false);
    expect(isValidShopHostname('-demo.myshoplaza.com', 'myshoplaza.com')).toBe(false);
  });
});

describe('scopes (PRODUCT.md §4)', () => {
  it('parses spaces and commas, aliases, duplicates', () => {
    expect(parseScopes(' read_products, write_order  read_product ')).toEqual(['read_products', 'write_orders']);
    expect(parseScopes('')).toEqual([]);
    expect(formatScopes(['write_orders', 'read_products'])).toBe('read_products,write_orders');
  });
  it('refuses unknown scopes', () => {
    for (const bad of ['read_everything', 'delete_products', 'read', 'READ_PRODUCTS', 'read_products;drop'])
      expect(() => parseScopes(bad)).toThrow(ScopeParseError);
  });
  it('refuses resource names that are properties of every object (read_constructor, write___proto__, …)', () => {
    for (const bad of ['read_constructor', 'write___proto__', 'read_toString', 'read_hasOwnProperty', 'write_valueOf', 'read___proto__'])
      expect(() => parseScopes(bad), bad).toThrow(ScopeParseError);
  });
  it('write implies read', () => {
    expect(allows(['write_products'], 'read', 'products')).toBe(true);
    expect(allows(['read_products'], 'write', 'products')).toBe(false);
    expect(covers(['write_products', 'read_orders'], ['read_products', 'read_orders'])).toBe(true);
    expect(covers(['read_products'], ['write_products'])).toBe(false);
  });
  it('consent words promise only what the Admin API allows: delete only where the resource has a DELETE route', () => {
    for (const def of RESOURCE_DEFS) {
      const write = describeScope(`write_${def.name}`);
      expect(write, def.name).toMatch(new RegExp(`^See, create(,| and) change.* your ${def.name}$`));
      expect(/delete/.test(write), `write_${def.name}: ${write}`).toBe(def.canDelete);
      expect(describeScope(`read_${def.name}`)).toBe(`See your ${def.name}`);
    }
    expect(describeScope('write_orders')).toBe('See, create and change your orders');
    for (const s of ALL_SCOPES) expect(describeScope(s), s).toMatch(/^See/);
  });
});

describe('the platform family’s scope vocabulary', () => {
  const FAMILY = [
    'customer',
    'order',
    'product',
    'collection',
    'script_tags',
    'content',
    'app_proxy',
    'data',
    'html_tags',
    'shop',
    'comments',
    'price_rules',
    'shop_navigation',
    'search_api',
    'gift_cards',
    'themes',
    'payment_info',
    'inventory',
    'finance',
    'cart_transform',
  ];
  it('accepts every published scope, singular and plural, in one canonical form', () => {
    const published = FAMILY.flatMap((r) => [`read_${r}`, `write_${r}`]);
    const parsed = parseScopes(published.join(' '));
    expect(parsed).toHaveLength(40);
    expect(parsed).toEqual(supportedScopes());
    expect([...ALL_SCOPES].sort()).toEqual(parsed);
    for (const [a, b] of [
      ['read_product', 'read_products'],
      ['write_collection', 'write_collections'],
      ['read_script_tag', 'read_script_tags'],
      ['write_theme', 'write_themes'],
      ['read_gift_card', 'read_gift_cards'],
      ['write_cart_transforms', 'write_cart_transform'],
      ['read_price_rule', 'read_price_rules'],
    ] as const)
      expect(parseScopes(a), a).toEqual(parseScopes(b));
    expect(parseScopes('write_cart_transform read_themes write_themes write_shop')).toEqual([
      'read_themes',
      'write_cart_transform',
      'write_shop',
      'write_themes',
    ]);
    for (const bad of ['read_shops_navigation', 'read_theme_', 'read__themes', 'write_shop_', 'read_shop navigation_x', 'read_contents'])
      expect(() => parseScopes(bad), bad).toThrow(ScopeParseError);
  });
  it('keeps resources with underscores apart: write_shop covers read_shop, not read_shop_navigation', () => {
    expect(splitScope('write_shop_navigation')).toEqual(['write', 'shop_navigation']);
    expect(covers(['write_shop'], ['read_shop'])).toBe(true);
    expect(covers(['write_shop'], ['read_shop_navigation'])).toBe(false);
    expect(covers(['write_script_tags'], ['read_script_tags'])).toBe(true);
    expect(allows(['read_themes'], 'write', 'themes')).toBe(false);
  });
  it('tells the merchant in plain words that an unserved scope grants nothing, and that write_shop changes nothing', () => {
    for (const s of ALL_SCOPES) {
      const [, resource] = splitScope(s);
      if (!isServed(resource)) expect(describeScope(s), s).toMatch(/no such feature yet: grants nothing/);
      else expect(describeScope(s), s).not.toMatch(/grants nothing/);
    }
    expect(describeScope('write_themes')).toMatch(/^See and change your themes/);
    expect(describeScope('write_shop')).toMatch(/cannot change your store/);
    expect(isServed('products')).toBe(true);
    expect(isServed('cart_transform')).toBe(false);
  });
});

describe('webhook address rules (addresses as strings only; nothing is resolved or connected to)', () => {
  const publicAddresses = [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '100.63.255.255', // just below carrier-grade NAT
    '100.128.0.0', // just above it
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '198.17.255.255',
    '223.255.255.255', // the last unicast address before multicast
    '::ffff:8.8.8.8', // IPv4-mapped, judged as the IPv4 address it carries
    '::ffff:808:808',
    '::FFFF:1.1.1.1',
    '64:ff9b::8.8.8.8', // NAT64 to a public IPv4 address
    '64:ff9b::808:808',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4001:830::200e',
  ];
  const nonPublicAddresses: [string, string][] = [
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this network'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', '6to4 relay anycast'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'IPv6 unspecified'],
    ['::1', 'IPv6 loopback'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:a00:1', 'IPv4-mapped private, hex form'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['::ffff:100.64.0.1', 'IPv4-mapped carrier-grade NAT'],
    ['::ffff:0.0.0.0', 'IPv4-mapped unspecified'],
    ['::ffff:255.255.255.255', 'IPv4-mapped broadcast'],
    ['0:0:0:0:0:ffff:c0a8:101', 'IPv4-mapped private, written out'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated) loopback'],
    ['::8.8.8.8', 'IPv4-compatible (deprecated)'],
    ['::ffff:0:8.8.8.8', 'IPv4-translated'],
    ['64:ff9b::10.0.0.1', 'NAT64 of a private address'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of link-local'],
    ['64:ff9b::6440:1', 'NAT64 of carrier-grade NAT'],
    ['64:ff9b:1::8.8.8.8', 'local-use NAT64'],
    ['100::1', 'discard-only'],
    ['2001::1', 'Teredo'],
    ['2001:2::1', 'benchmarking'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2002:a00:1::1', '6to4'],
    ['fc00::1', 'unique local'],
    ['fd12:3456:789a::1', 'unique local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'site-local (deprecated)'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['', 'not an address'],
    ['example.com', 'not an address'],
    ['1.2.3', 'not an address'],
  ];
  it.each(publicAddresses)('%s is public', (ip) => expect(isNonPublicAddress(ip)).toBe(false));
  it.each(nonPublicAddresses)('%s is not public (%s)', (ip) => expect(isNonPublicAddress(ip)).toBe(true));

  const productionAddresses: [string, string | undefined][] = [
    ['https://8.8.8.8/hook', undefined],
    ['https://93.184.216.34:8443/hook', undefined],
    ['https://[2606:4700:4700::1111]/hook', undefined],
    ['https://[::ffff:8.8.8.8]/hook', undefined],
    ['https://hooks.example.com/hook', undefined],
    ['https://10.0.0.5/hook', 'must not point at a private, loopback or link-local address'],
    ['https://0x0a000005/hook', 'must not point at a private, loopback or link-local address'],
    ['https://100.64.1.1/hook', 'must not point at a private, loopback or link-local address'],
    ['https://255.255.255.255/hook', 'must not point at a private, loopback or link-local address'],
    ['https://[::ffff:10.0.0.5]/hook', 'must not point at a private, loopback or link-local address'],
    ['https://[64:ff9b::a00:5]/hook', 'must not point at a private, loopback or link-local address'],
    ['https://[fd00::5]/hook', 'must not point at a private, loopback or link-local address'],
    ['https://[::ffff:127.0.0.1]/hook', 'must not point at a private, loopback or link-local address'],
    ['https://127.0.0.1/hook', 'must not point at this machine'],
    ['https://2130706433/hook', 'must not point at this machine'],
    ['https://[::1]/hook', 'must not point at this machine'],
  ];
  it.each(productionAddresses)('production: %s → %s', (address, refusal) => {
    expect(checkWebhookAddress(address, 'production')).toBe(refusal);
  });
});

describe('tokens', () => {
  it('are prefixed, URL-safe, 256-bit and hashed with SHA-256', () => {
    const t = newToken('access');
    expect(t).toMatch(/^sg_at_[A-Za-z0-9_-]{43}$/);
    expect(looksLike('access', t)).toBe(true);
    expect(looksLike('refresh', t)).toBe(false);
    expect(hashToken('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
    expect(newToken('access')).not.toBe(t);
  });
  it('derives the same successor pair for the same refresh token, another for another', () => {
    const key = Buffer.alloc(32, 7);
    const a = deriveSuccessorPair(key, 'sg_rt_one');
    expect(deriveSuccessorPair(key, 'sg_rt_one')).toEqual(a);
    expect(deriveSuccessorPair(key, 'sg_rt_two').refreshToken).not.toBe(a.refreshToken);
    expect(deriveSuccessorPair(Buffer.alloc(32, 8), 'sg_rt_one').accessToken).not.toBe(a.accessToken);
    expect(looksLike('access', a.accessToken) && looksLike('refresh', a.refreshToken)).toBe(true);
  });
  it('pooled random bytes: right lengths, never the same slice twice, across refills and large requests', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const b = pooledRandomBytes(32);
      expect(b.length).toBe(32);
      seen.add(b.toString('hex'));
    }
    expect(seen.size).toBe(1000);
    const a = pooledRandomBytes(10);
    a.fill(0);
    expect(pooledRandomBytes(10).equals(Buffer.alloc(10))).toBe(false);
    expect(pooledRandomBytes(10_000).length).toBe(10_000);
  });
  it('family ids sort by creation time and are unique', () => {
    const ids = [newFamilyId(1_700_000_000_000), newFamilyId(1_700_000_000_001), newFamilyId(1_800_000_000_000)];
    expect([...ids].sort()).toEqual(ids);
    expect(newFamilyId(5)).not.toBe(newFamilyId(5));
  });
  it('secret box round-trips and detects tampering', () => {
    const box = new SecretBox(Buffer.alloc(32, 1));
    const sealed = box.seal('sg_cs_secret');
    expect(sealed).not.toContain('sg_cs_secret');
    expect(box.open(sealed)).toBe('sg_cs_secret');
    // Tamper with the decoded bytes, not the text. Swapping a base64url character for a fixed one
    // left the value unchanged whenever that character was already there (and a final character's
    // padding bits can absorb a swap too), so the box opened it and the test failed about 1 run in 60.
    // Flipping one bit of a decoded byte always changes what is opened, whatever random IV this run
    // drew. Sealed = "v1." + base64url(IV 12 bytes | GCM tag 16 bytes | ciphertext).
    const flipBit = (value: string, index: number) => {
      const raw = Buffer.from(value.slice(3), 'base64url');
      raw[index] = raw[index]! ^ 0x01;
      return `v1.${raw.toString('base64url')}`;
    };
    const rawLength = Buffer.from(sealed.slice(3), 'base64url').length;
    for (const index of [rawLength - 1, 12]) {
      // the last ciphertext byte, then the first tag byte
      const flipped = flipBit(sealed, index);
      expect(flipped).not.toBe(sealed);
      expect(() => box.open(flipped)).toThrow();
    }
    expect(() => new SecretBox(Buffer.alloc(31)).seal('x')).toThrow();
  });
  it('hashes passwords with scrypt and verifies them', async () => {
    const h = await hashPassword('demo-password');
    expect(h).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword('demo-password', h)).toBe(true);
    expect(await verifyPassword('demo-passworD', h)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
  });
  it('hashes at the configured cost, and a hash keeps verifying after the cost changed', async () => {
    const cheap = new PasswordHasher(1024);
    const h = await cheap.hash('demo-password');
    expect(h).toMatch(/^scrypt\$1024\$8\$1\$/);
    const dearer = new PasswordHasher();
    expect(dearer.scryptN).toBe(32768);
    expect(await dearer.verify('demo-password', h)).toBe(true);
    expect(await dearer.verify('demo-passworD', h)).toBe(false);
    expect(await cheap.dummyHash()).toMatch(/^scrypt\$1024\$/);
    expect(await cheap.dummyHash()).toBe(await cheap.dummyHash());
  });
  it('takes the cost of new password hashes from --password-scrypt-n, refusing what is not a sane power of two', () => {
    const key = 'ab'.repeat(32);
    expect(loadConfig({}).passwordScryptN).toBe(32768);
    expect(loadConfig({ passwordScryptN: '1024' }).passwordScryptN).toBe(1024);
    expect(loadConfig({ passwordScryptN: 65536 }).passwordScryptN).toBe(65536);
    expect(loadConfig(rawConfigFromEnv({ PASSWORD_SCRYPT_N: '2048' })).passwordScryptN).toBe(2048);
    for (const bad of ['1000', '512', '2097152', 'abc', '-1024', '1024.0', '0x400'])
      expect(() => loadConfig({ passwordScryptN: bad }), bad).toThrow(/--password-scrypt-n: expected a power of two/);
    const production = { mode: 'production', masterKey: key, publicScheme: 'https', storeDomain: 'shops.example' };
    expect(loadConfig({ ...production }).passwordScryptN).toBe(32768);
    expect(() => loadConfig({ ...production, passwordScryptN: '16384' })).toThrow(/production mode needs at least 32768/);
  });
});

describe('code lifecycle (injected clock)', () => {
  const row = { app_id: 1, redirect_uri: 'http://a/cb', code_challenge: null, expires_at: 1_060_000, used_at: null };
  const req = { appId: 1, redirectUri: 'http://a/cb', codeVerifier: undefined, now: 1_000_000 };
  it('accepts a fresh code', () => expect(checkCode(row, req)).toEqual({ ok: true }));
  it('refuses at and after expiry', () => {
    expect(checkCode(row, { ...req, now: 1_060_000 })).toMatchObject({ ok: false, reason: expect.stringContaining('expired') });
  });
  it('flags a used code as a replay', () => expect(checkCode({ ...row, used_at: 1 }, req)).toMatchObject({ ok: false, replay: true }));
  it("refuses another client's code and a different redirect_uri", () => {
    expect(checkCode(row, { ...req, appId: 2 })).toMatchObject({ ok: false });
    expect(checkCode(row, { ...req, redirectUri: 'http://a/cb2' })).toMatchObject({ ok: false });
    expect(checkCode(undefined, req)).toMatchObject({ ok: false });
  });
  it('checks PKCE S256', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    expect(pkceChallenge(verifier)).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
    const withPkce = { ...row, code_challenge: pkceChallenge(verifier) };
    expect(checkCode(withPkce, { ...req, codeVerifier: verifier })).toEqual({ ok: true });
    expect(checkCode(withPkce, { ...req, codeVerifier: 'wrong' })).toMatchObject({ ok: false });
    expect(checkCode(withPkce, req)).toMatchObject({ ok: false });
  });
  // RFC 7636 section 4.1: 43 to 128 characters of A-Z a-z 0-9 - . _ ~. Each verifier here hashes to
  // the stored challenge, so only its form can make it fail.
  const verifierCases: [string, string, boolean][] = [
    ['43 characters', 'a'.repeat(43), true],
    ['128 characters of every allowed kind', `${'AZaz09-._~'.repeat(12)}abcdefgh`, true],
    ['42 characters', 'a'.repeat(42), false],
    ['129 characters', 'a'.repeat(129), false],
    ['one character', 'x', false],
    ['a plus sign', `${'a'.repeat(42)}+`, false],
    ['a slash', `${'a'.repeat(42)}/`, false],
    ['base64 padding', `${'a'.repeat(42)}=`, false],
    ['a space', `${'a'.repeat(21)} ${'a'.repeat(21)}`, false],
    ['a non-ASCII letter', `${'a'.repeat(42)}é`, false],
    ['a line break', `${'a'.repeat(42)}\n`, false],
  ];
  for (const [name, verifier, ok] of verifierCases) {
    it(`PKCE verifier with ${name} is ${ok ? 'accepted' : 'refused'} even when it hashes to the challenge`, () => {
      const withPkce = { ...row, code_challenge: pkceChallenge(verifier) };
      expect(checkCode(withPkce, { ...req, codeVerifier: verifier })).toMatchObject({ ok });
    });
  }
});

describe('refresh lifecycle (injected clock)', () => {
  const row = { app_id: 1, expires_at: 2_000_000, rotated_at: null, revoked_at: null };
  const req = { appId: 1, now: 1_000_000 };
  const unused = { revoked_at: null, rotated_at: null, access_used_at: null, access_revoked_at: null };
  it('rotates a fresh token', () => expect(decideRefresh(row, req)).toEqual({ action: 'rotate' }));
  it('sends a rotated token to its successor, however long ago it rotated', () => {
    expect(decideRefresh({ ...row, rotated_at: 1 }, req)).toEqual({ action: 'check-successor' });
  });
  it('refuses expired, revoked, unknown and foreign tokens', () => {
    expect(decideRefresh({ ...row, expires_at: 1_000_000 }, req)).toMatchObject({ action: 'reject' });
    expect(decideRefresh({ ...row, revoked_at: 5 }, req)).toMatchObject({ action: 'reject' });
    expect(decideRefresh(undefined, req)).toMatchObject({ action: 'reject' });
    expect(decideRefresh(row, { ...req, appId: 2 })).toMatchObject({ action: 'reject' });
  });
  it('serves an unused successor again while the old token lives', () => {
    expect(decideReplay(row, unused, 1_999_999)).toEqual({ action: 'replay-successor' });
    expect(decideReplay(row, unused, 2_000_000)).toEqual({ action: 'reject', reason: 'refresh token has expired' });
  });
  it('revokes the family once either successor token was used (or its access token revoked), even after expiry', () => {
    for (const used of [{ rotated_at: 5 }, { access_used_at: 5 }, { access_revoked_at: 5 }]) {
      expect(decideReplay(row, { ...unused, ...used }, 1_000_000)).toMatchObject({ action: 'revoke-family' });
      expect(decideReplay(row, { ...unused, ...used }, 3_000_000)).toMatchObject({ action: 'revoke-family' });
    }
  });
  it('refuses a revoked or missing successor without revoking anything', () => {
    expect(decideReplay(row, { ...unused, revoked_at: 5, access_used_at: 5 }, 1_000_000)).toMatchObject({ action: 'reject' });
    expect(decideReplay(row, undefined, 1_000_000)).toMatchObject({ action: 'reject' });
  });
});

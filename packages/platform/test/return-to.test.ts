// The address a browser goes back to after logging in (store admin and partner dashboard): hostile
// return_to values (control characters, backslashes, encoded forms, other schemes) never send the
// browser off the site and never make the login answer 500; ordinary admin paths still work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, Jar, createFixture, createTestPlatform, csrfFrom, type Fixture, type TestPlatform } from './harness.ts';
import { PLATFORM_HOST, createPartner, decode, get, post } from './web-pages.ts';

/** Values as the server receives them (after the query or form encoding is undone). */
const HOSTILE: readonly string[] = [
  '/\t/evil.example',
  '/\t/evil.example/admin',
  '\t//evil.example',
  ' //evil.example',
  '/\n/evil.example',
  '/\r\n/evil.example',
  '/\r/evil.example',
  '/\u0000/evil.example',
  '\u0000//evil.example',
  '/\u000B/evil.example',
  '/\u000C/evil.example',
  '/\u001F/evil.example',
  '/admin\u0000',
  '/admin/\u000Bx',
  '/partner\u0000',
  '/admin\r\nSet-Cookie: x=1',
  '//evil.example',
  '///evil.example',
  '/\\evil.example',
  '/\\/evil.example',
  '\\\\evil.example',
  '\\/evil.example',
  '/\t\\evil.example',
  '/%09/evil.example',
  '/%2F/evil.example',
  '/%5Cevil.example',
  '%2F%2Fevil.example',
  'https:evil.example',
  'https:/evil.example',
  'http:evil.example',
  'https://evil.example/',
  'http://evil.example/admin',
  'HTTPS://EVIL.EXAMPLE/partner',
  'javascript:alert(1)',
  'data:text/html,hi',
  'http://shop.localhost:8080@evil.example/admin',
  '/admin/../../evil',
  '/partner/../evil',
  '/\u3000/evil.example',
  'x'.repeat(5000),
];

/** A Location the browser resolves against `origin` and stays on it, under `area`. */
function expectOnSite(location: unknown, origin: string, area: string, value: string): void {
  expect(typeof location, JSON.stringify(value)).toBe('string');
  const loc = String(location);
  // Nothing the header could not carry, and nothing a browser would strip before resolving.
  expect(loc, JSON.stringify(value)).toMatch(/^[\x21-\x7e]+$/);
  const url = new URL(loc, origin);
  expect(url.origin, JSON.stringify(value)).toBe(origin);
  expect(url.pathname === area || url.pathname.startsWith(`${area}/`), `${JSON.stringify(value)} -> ${loc}`).toBe(true);
}

describe.each(DIALECTS)('return_to after login (%s)', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
    f = await createFixture(t, { storeName: 'shop' });
  });
  afterAll(async () => t?.close());

  const storeOrigin = 'http://shop.localhost:8080';
  const platformOrigin = `http://${PLATFORM_HOST}`;

  it('store admin: every hostile return_to stays on the store, on the form, after the POST and when already logged in', async () => {
    const jar = new Jar();
    const page = await get(t, f.host, '/admin/login', jar);
    const csrf = csrfFrom(page.body);
    for (const value of HOSTILE) {
      const form = await get(t, f.host, `/admin/login?return_to=${encodeURIComponent(value)}`, new Jar());
      expect(form.statusCode, JSON.stringify(value)).toBe(200);
      const hidden = /name="return_to" value="([^"]*)"/.exec(form.body)?.[1];
      expectOnSite(decode(hidden ?? ''), storeOrigin, '/admin', value);

      const res = await post(t, f.host, '/admin/login', jar, { _csrf: csrf, email: f.email, password: f.password, return_to: value });
      expect(res.statusCode, JSON.stringify(value)).toBe(303);
      expectOnSite(res.headers.location, storeOrigin, '/admin', value);

      // Logged in now: the form page sends the browser straight to return_to.
      const again = await get(t, f.host, `/admin/login?return_to=${encodeURIComponent(value)}`, jar);
      expect(again.statusCode, JSON.stringify(value)).toBe(303);
      expectOnSite(again.headers.location, storeOrigin, '/admin', value);
    }
  });

  it('partner dashboard: every hostile return_to stays on the dashboard', async () => {
    const p = await createPartner(t, 1);
    const jar = new Jar();
    const page = await get(t, PLATFORM_HOST, '/partner/login', jar);
    const csrf = csrfFrom(page.body);
    for (const value of HOSTILE) {
      const form = await get(t, PLATFORM_HOST, `/partner/login?return_to=${encodeURIComponent(value)}`, new Jar());
      expect(form.statusCode, JSON.stringify(value)).toBe(200);
      const hidden = /name="return_to" value="([^"]*)"/.exec(form.body)?.[1];
      expectOnSite(decode(hidden ?? ''), platformOrigin, '/partner', value);

      const res = await post(t, PLATFORM_HOST, '/partner/login', jar, {
        _csrf: csrf,
        email: p.email,
        password: p.password,
        return_to: value,
      });
      expect(res.statusCode, JSON.stringify(value)).toBe(303);
      expectOnSite(res.headers.location, platformOrigin, '/partner', value);

      const again = await get(t, PLATFORM_HOST, `/partner/login?return_to=${encodeURIComponent(value)}`, jar);
      expect(again.statusCode, JSON.stringify(value)).toBe(303);
      expectOnSite(again.headers.location, platformOrigin, '/partner', value);
    }
  });

  it('ordinary paths of the admin and the dashboard are followed as given', async () => {
    const cases: [string, string, string][] = [
      [f.host, '/admin', '/admin'],
      [f.host, '/admin/products?after=abc&limit=5', '/admin/products?after=abc&limit=5'],
      [f.host, '/admin/oauth/authorize?client_id=x&scope=read_products', '/admin/oauth/authorize?client_id=x&scope=read_products'],
      [f.host, `${storeOrigin}/admin/orders`, '/admin/orders'],
      [PLATFORM_HOST, '/partner', '/partner'],
      [PLATFORM_HOST, '/partner/apps/new', '/partner/apps/new'],
      [PLATFORM_HOST, '/partner/apps/abc/deliveries?status=failed', '/partner/apps/abc/deliveries?status=failed'],
    ];
    for (const [host, value, expected] of cases) {
      const form = await get(
        t,
        host,
        `${host === PLATFORM_HOST ? '/partner' : '/admin'}/login?return_to=${encodeURIComponent(value)}`,
        new Jar(),
      );
      expect(decode(/name="return_to" value="([^"]*)"/.exec(form.body)?.[1] ?? ''), value).toBe(expected);
    }
  });
});

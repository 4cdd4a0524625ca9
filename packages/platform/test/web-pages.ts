// Helpers for the store admin and partner dashboard tests: page checks (security headers, size,
// labels, button names), CSRF probes that must change nothing, and a partner login over inject().
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { Jar, csrfFrom, formBody, type TestPlatform } from './harness.ts';

export const PLATFORM_HOST = 'localhost:8080';

/** PRODUCT.md §8 headers, the 50 KB budget, a label for every input and a name for every button. */
export function expectGoodPage(res: LightMyRequestResponse): void {
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toContain('text/html');
  const csp = String(res.headers['content-security-policy']);
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(Buffer.byteLength(res.body)).toBeLessThan(50 * 1024);
  expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)/);
  for (const m of res.body.matchAll(/<(input|select|textarea)\b([^>]*)>/g)) {
    const attrs = m[2]!;
    if (/type="hidden"/.test(attrs)) continue;
    const id = /\bid="([^"]+)"/.exec(attrs)?.[1];
    expect(id, `${m[0]} has an id`).toBeTruthy();
    expect(res.body, `label for ${id}`).toContain(`<label for="${id}">`);
  }
  for (const m of res.body.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/g)) {
    expect(m[2]!.replace(/<[^>]+>/g, '').trim() || /aria-label="[^"]+"/.test(m[1]!), `button ${m[0]} has a name`).toBeTruthy();
  }
}

export async function get(t: TestPlatform, host: string, url: string, jar: Jar): Promise<LightMyRequestResponse> {
  const res = await t.app.inject({ method: 'GET', url, headers: { host, cookie: jar.header(), accept: 'text/html' } });
  jar.take(res);
  return res;
}

export async function post(
  t: TestPlatform,
  host: string,
  url: string,
  jar: Jar,
  fields: Record<string, string | readonly string[]>,
): Promise<LightMyRequestResponse> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const x of typeof v === 'string' ? [v] : v) body.append(k, x);
  const res = await t.app.inject({
    method: 'POST',
    url,
    headers: { host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: body.toString(),
  });
  jar.take(res);
  return res;
}

/**
 * A form POST without a CSRF token and with a wrong one: both 403, and `state()` (a read of the
 * database) is the same before and after.
 */
export async function expectCsrfRefused(
  t: TestPlatform,
  host: string,
  url: string,
  jar: Jar,
  fields: Record<string, string | readonly string[]>,
  state: () => Promise<unknown>,
): Promise<void> {
  const before = await state();
  const { _csrf: _ignored, ...rest } = fields;
  const missing = await post(t, host, url, jar, rest);
  expect(missing.statusCode).toBe(403);
  const wrong = await post(t, host, url, jar, { ...rest, _csrf: 'AAAA-wrong-token' });
  expect(wrong.statusCode).toBe(403);
  // A token from another browser (another CSRF secret) is refused too.
  const otherJar = new Jar();
  const other = await get(t, host, host === PLATFORM_HOST ? '/partner/login' : '/admin/login', otherJar);
  const foreign = await post(t, host, url, jar, { ...rest, _csrf: csrfFrom(other.body) });
  expect(foreign.statusCode).toBe(403);
  expect(await state()).toEqual(before);
}

export async function createPartner(t: TestPlatform, n: number): Promise<{ id: number; email: string; password: string }> {
  const email = `partner${n}-${Math.random().toString(36).slice(2, 8)}@example.test`;
  const password = 'partner password 1';
  const row = await t.services.accounts.createPartner({ email, password });
  return { id: row.id, email, password };
}

export async function partnerLogin(t: TestPlatform, p: { email: string; password: string }, jar = new Jar()): Promise<Jar> {
  const page = await get(t, PLATFORM_HOST, '/partner/login', jar);
  const res = await post(t, PLATFORM_HOST, '/partner/login', jar, {
    _csrf: csrfFrom(page.body),
    email: p.email,
    password: p.password,
    return_to: '/partner',
  });
  if (res.statusCode !== 303 || res.headers.location !== '/partner')
    throw new Error(`partner login failed: ${res.statusCode} ${res.headers.location}`);
  return jar;
}

export function decode(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The value of a read-only secret field on a page. */
export function secretValue(body: string, id: string): string | undefined {
  const m = new RegExp(`id="${id}" type="text" readonly value="([^"]*)"`).exec(body);
  return m ? decode(m[1]!) : undefined;
}

// A merchant's browser without a browser: logs in to the store admin and presses "Install app" on
// the consent page over plain HTTP (cookies and the CSRF token from the HTML forms), against the real
// `storegate serve` child process. Returns where the platform redirects the merchant.
import { request } from './server-process.ts';

/** Keeps name=value pairs from Set-Cookie headers. */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  take(setCookie: string | string[] | undefined): void {
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq < 1) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age\s*=\s*(0|-\d+)\s*$/i.test(a));
      if (value === '' || expired) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

function decodeEntities(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function csrfFrom(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error(`no CSRF token in page: ${html.slice(0, 300)}`);
  return m[1]!;
}

/**
 * Opens `authorizeUrl` as the logged-out merchant, logs in, consents, and returns the URL the
 * platform redirects to (the app's redirect URI with code, shop, state, timestamp, hmac).
 */
export async function consentAsMerchant(
  port: number,
  authorizeUrl: string,
  merchant: { email: string; password: string },
  jar = new CookieJar(),
): Promise<URL> {
  const target = new URL(authorizeUrl);
  const host = target.host;
  const pathAndQuery = `${target.pathname}${target.search}`;
  const get = async (path: string) => {
    const res = await request(port, host, 'GET', path, undefined, { cookie: jar.header() });
    jar.take(res.headers['set-cookie']);
    return res;
  };
  const post = async (path: string, fields: Record<string, string>) => {
    const res = await request(port, host, 'POST', path, new URLSearchParams(fields).toString(), { cookie: jar.header() });
    jar.take(res.headers['set-cookie']);
    return res;
  };

  let page = await get(pathAndQuery);
  if (page.status === 302 || page.status === 303) {
    // Not logged in: the login page, which sends the merchant back to the consent page.
    const loginPath = new URL(page.headers.location!, target).pathname + new URL(page.headers.location!, target).search;
    const login = await get(loginPath);
    if (login.status !== 200) throw new Error(`login page: ${login.status}`);
    const returnTo = /name="return_to" value="([^"]*)"/.exec(login.body)?.[1];
    const loggedIn = await post('/admin/login', {
      _csrf: csrfFrom(login.body),
      email: merchant.email,
      password: merchant.password,
      return_to: decodeEntities(returnTo ?? pathAndQuery),
    });
    if (loggedIn.status !== 303) throw new Error(`login: ${loggedIn.status} ${loggedIn.body.slice(0, 200)}`);
    page = await get(pathAndQuery);
  }
  if (page.status === 303) return new URL(page.headers.location!); // every scope already granted: no consent page
  if (page.status !== 200) throw new Error(`consent page: ${page.status} ${page.body.slice(0, 300)}`);
  const fields: Record<string, string> = {};
  for (const m of page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = decodeEntities(m[2]!);
  const decided = await post('/admin/oauth/authorize', { ...fields, decision: 'install' });
  if (decided.status !== 303) throw new Error(`consent: ${decided.status} ${decided.body.slice(0, 300)}`);
  return new URL(decided.headers.location!);
}

/**
 * "Open" in the store admin, for a merchant whose session is in `jar` (after consentAsMerchant with
 * it): returns the signed launch URL the platform sends the browser to (with `id_token` when the
 * app is installed).
 */
export async function openAsMerchant(port: number, storeHost: string, clientId: string, jar: CookieJar): Promise<URL> {
  const res = await request(port, storeHost, 'GET', `/admin/apps/${clientId}/install`, undefined, { cookie: jar.header() });
  if (res.status !== 303) throw new Error(`open: ${res.status} ${res.body.slice(0, 300)}`);
  return new URL(res.headers.location!);
}

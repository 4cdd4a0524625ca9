// Which shop this browser may look at. The app sets it only after a request the platform signed
// (the App-URL request when the merchant opens the app, or the OAuth callback), so knowing a shop's
// name is not enough to read its products. Signed with a key derived from the client secret, so it
// survives restarts and needs no extra setting.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SHOP_COOKIE = 'example_shop';
const LIFETIME_SECONDS = 12 * 60 * 60;

export class ShopAccessCookie {
  readonly #key: Buffer;
  readonly #secure: boolean;

  constructor(clientSecret: string, options: { secure: boolean }) {
    this.#key = createHmac('sha256', clientSecret).update('storegate example app: shop access cookie').digest();
    this.#secure = options.secure;
  }

  #sign(payload: string): string {
    return createHmac('sha256', this.#key).update(payload).digest('base64url');
  }

  /** A `Set-Cookie` value granting this browser access to `shop`. */
  issue(shop: string, nowMs: number = Date.now()): string {
    const payload = Buffer.from(JSON.stringify({ shop, exp: Math.floor(nowMs / 1000) + LIFETIME_SECONDS })).toString('base64url');
    return `${SHOP_COOKIE}=${payload}.${this.#sign(payload)}; Path=/; Max-Age=${LIFETIME_SECONDS}; HttpOnly; SameSite=Lax${this.#secure ? '; Secure' : ''}`;
  }

  /** A `Set-Cookie` value removing the cookie. */
  clear(): string {
    return `${SHOP_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${this.#secure ? '; Secure' : ''}`;
  }

  /** The shop the request's cookie grants, or undefined when absent, tampered with or expired. */
  read(cookieHeader: string | undefined, nowMs: number = Date.now()): string | undefined {
    const value = cookieHeader
      ?.split(';')
      .map((part) => part.trim())
      .find((part) => part.startsWith(`${SHOP_COOKIE}=`))
      ?.slice(SHOP_COOKIE.length + 1);
    if (!value) return undefined;
    const [payload, signature, extra] = value.split('.');
    if (payload === undefined || signature === undefined || extra !== undefined) return undefined;
    const expected = Buffer.from(this.#sign(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const { shop, exp } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { shop?: unknown; exp?: unknown };
      if (typeof shop !== 'string' || typeof exp !== 'number' || exp * 1000 <= nowMs) return undefined;
      return shop;
    } catch {
      return undefined;
    }
  }
}

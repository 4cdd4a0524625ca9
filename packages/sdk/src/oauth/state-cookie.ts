// The cookie that binds an OAuth state to the browser that started it.

/** Options of {@link stateCookieHeader}. */
export interface StateCookieOptions {
  /** Add `Secure` (set when the redirect URI is https). */
  secure: boolean;
  maxAgeSeconds: number;
}

/**
 * A `Set-Cookie` value for the state nonce: `Path=/` (not scoped to the auth path, a common cause
 * of lost cookies), `HttpOnly`, `SameSite=Lax` (sent on the platform's top-level redirect back),
 * `Secure` over https, and a `Max-Age`.
 *
 * @example
 * ```ts
 * res.setHeader('Set-Cookie', stateCookieHeader('storegate_state', nonce, { secure: true, maxAgeSeconds: 600 }));
 * ```
 */
export function stateCookieHeader(name: string, value: string, options: StateCookieOptions): string {
  return `${name}=${value}; Path=/; Max-Age=${Math.floor(options.maxAgeSeconds)}; HttpOnly; SameSite=Lax${
    options.secure ? '; Secure' : ''
  }`;
}

/**
 * A `Set-Cookie` value that deletes the state cookie.
 *
 * @example
 * ```ts
 * res.setHeader('Set-Cookie', clearStateCookieHeader('storegate_state', true));
 * ```
 */
export function clearStateCookieHeader(name: string, secure: boolean): string {
  return `${name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/**
 * Reads one cookie from a `Cookie` request header.
 *
 * @example
 * ```ts
 * readCookie('a=1; storegate_state=abc', 'storegate_state'); // 'abc'
 * ```
 */
export function readCookie(cookieHeader: string | null | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(value);
      } catch {
        return value;
      }
    }
  }
  return undefined;
}

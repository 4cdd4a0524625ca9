// The logging hook. Whatever the SDK logs passes through a redactor first, so a token or secret
// can never reach the app's logs: known secret values, token-shaped strings and sensitive keys.

/** Log hook: any of the four levels; each receives a message and structured details. */
export interface Logger {
  debug?(message: string, details?: Record<string, unknown>): void;
  info?(message: string, details?: Record<string, unknown>): void;
  warn?(message: string, details?: Record<string, unknown>): void;
  error?(message: string, details?: Record<string, unknown>): void;
}

/** The logger the SDK calls internally: every level present, every call redacted. */
export interface SdkLogger {
  debug(message: string, details?: Record<string, unknown>): void;
  info(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
  /** Adds values (tokens met at run time) that must never be printed. */
  addSecret(value: string | null | undefined): void;
}

const REDACTED = '[REDACTED]';
const SENSITIVE_KEY = /token|secret|password|authorization|cookie|hmac|signature|^code$|client_secret|state$/i;
// Tokens are caught by shape too, even when never registered as secrets: the platform prefixes
// access, refresh, private-app tokens and authorization codes with sg_at_, sg_rt_, sg_pt_, sg_ac_.
// Launch tokens are compact JWS: three base64url parts, the first two JSON objects (`eyJ`).
// Likewise the OAuth parameters that carry secrets inside logged URLs.
const TOKEN_PATTERN = /\bsg_(?:at|rt|pt|ac)_[A-Za-z0-9_-]+|\beyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+/g;
const QUERY_SECRET = /([?&](?:code|hmac|state|access_token|refresh_token|client_secret|id_token|subject_token)=)[^&#\s]*/gi;
const MAX_SECRETS = 1024;

/**
 * Wraps an app's logger so that nothing the SDK logs can contain a token or secret.
 *
 * @example
 * ```ts
 * const log = redactingLogger(console, ['my-client-secret']);
 * log.info('refreshed', { accessToken: 'sg_at_123' }); // console.info('refreshed', { accessToken: '[REDACTED]' })
 * ```
 */
export function redactingLogger(logger: Logger | undefined, secrets: readonly string[] = []): SdkLogger {
  const known = new Set<string>(secrets.filter((s) => s.length >= 4));
  const scrubText = (text: string): string => {
    let out = text.replace(TOKEN_PATTERN, REDACTED).replace(QUERY_SECRET, `$1${REDACTED}`);
    for (const secret of known) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };
  const scrub = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return scrubText(value);
    if (value === null || typeof value !== 'object' || depth > 4) return value;
    if (value instanceof Error) return { name: value.name, message: scrubText(value.message), code: (value as { code?: unknown }).code };
    if (Array.isArray(value)) return value.map((v: unknown) => scrub(v, depth + 1));
    const out: Record<string, unknown> = {};
    const entries: Array<[string, unknown]> = Object.entries(value);
    for (const [key, v] of entries) out[key] = SENSITIVE_KEY.test(key) && v !== undefined && v !== null ? REDACTED : scrub(v, depth + 1);
    return out;
  };
  const level = (name: keyof Logger) => (message: string, details?: Record<string, unknown>) => {
    const fn = logger?.[name];
    if (!fn) return;
    try {
      if (details === undefined) fn.call(logger, scrubText(message));
      else fn.call(logger, scrubText(message), scrub(details, 0) as Record<string, unknown>);
    } catch {
      // A failing logger must not break a request.
    }
  };
  return {
    debug: level('debug'),
    info: level('info'),
    warn: level('warn'),
    error: level('error'),
    addSecret(value) {
      if (!value || value.length < 4) return;
      if (known.size >= MAX_SECRETS) known.delete(known.values().next().value as string);
      known.add(value);
    },
  };
}

// The public keys that `v1a` webhook signatures (Standard Webhooks, Ed25519) are checked with: a
// JSON Web Key Set the app holds, or the platform's `jwks_uri` fetched and kept. Keys are imported
// with Web Crypto (`crypto.subtle`, `{ name: 'Ed25519' }`), so this runs wherever the SDK does.
//
// The URL of a fetched set is the app's own setting, never taken from a webhook: a key named by the
// request itself would let anyone sign. A fetched set is read again when a delivery names a key it
// does not hold (the platform rotated its key) or when no key it holds verifies; both at most once
// per `minRefetchSeconds`, so forged deliveries cannot make the app fetch in a loop.
import { base64UrlToBytes } from '../crypto/encoding.ts';
import { WebhookError } from '../errors.ts';

/** One JSON Web Key as a JWKS lists it; only Ed25519 OKP keys (RFC 8037) are used. */
export interface WebhookPublicJwk {
  kty: string;
  crv?: string;
  x?: string;
  kid?: string;
  use?: string;
  alg?: string;
}

/** A JSON Web Key Set (RFC 7517), e.g. the body of the platform's `/.well-known/jwks.json`. */
export interface JsonWebKeySet {
  keys: readonly WebhookPublicJwk[];
}

/** An imported verification key and its id. */
export interface WebhookVerificationKey {
  kid: string | undefined;
  key: CryptoKey;
}

/** Where {@link verifyWebhook} gets the keys of `v1a` signatures. */
export interface WebhookKeySource {
  /**
   * The keys to check with. `kids`: the key ids the delivery names (may be empty); `retry`: asked
   * again because none of the keys given before verified.
   */
  keys(kids: readonly string[], retry: boolean): Promise<readonly WebhookVerificationKey[]>;
}

const ED25519 = { name: 'Ed25519' } as const;
const MAX_KEYS = 20;

function isEd25519(jwk: WebhookPublicJwk): boolean {
  return (
    jwk.kty === 'OKP' &&
    jwk.crv === 'Ed25519' &&
    typeof jwk.x === 'string' &&
    (jwk.use === undefined || jwk.use === 'sig') &&
    (jwk.alg === undefined || jwk.alg === 'EdDSA' || jwk.alg === 'Ed25519')
  );
}

/** Imports the Ed25519 signing keys of a set (others are skipped; a malformed one is skipped too). */
export async function importJwks(set: JsonWebKeySet): Promise<WebhookVerificationKey[]> {
  if (typeof set !== 'object' || set === null || !Array.isArray(set.keys)) {
    throw new WebhookError('WEBHOOK_KEYS_UNAVAILABLE', 'the webhook public keys are not a JSON Web Key Set ({"keys": [...]})');
  }
  const out: WebhookVerificationKey[] = [];
  for (const jwk of set.keys.slice(0, MAX_KEYS)) {
    if (!isEd25519(jwk) || base64UrlToBytes(jwk.x!)?.length !== 32) continue;
    const key = await crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x! }, ED25519, false, ['verify']);
    out.push({ kid: jwk.kid, key });
  }
  return out;
}

// A set handed over as an object is imported once.
const imported = new WeakMap<JsonWebKeySet, Promise<WebhookVerificationKey[]>>();

/** The source of a set the app holds: the same keys whatever the delivery names. */
export function staticKeySource(set: JsonWebKeySet): WebhookKeySource {
  return {
    keys() {
      let keys = imported.get(set);
      if (!keys) {
        keys = importJwks(set);
        imported.set(set, keys);
        // A set that failed to import is tried again next time rather than remembered as failed.
        keys.catch(() => imported.delete(set));
      }
      return keys;
    },
  };
}

/** Options of {@link remoteJwks}. */
export interface RemoteJwksOptions {
  /** `fetch` implementation (default: the global one). */
  fetch?: typeof fetch;
  /** How long a fetched set is used before it is fetched again, seconds (default 300). */
  maxAgeSeconds?: number;
  /** The least time between two fetches, seconds (default 30): what bounds refetches for unknown keys. */
  minRefetchSeconds?: number;
  /** Clock in milliseconds (default `Date.now`). */
  now?: () => number;
  /** Give up on a fetch after this long, milliseconds (default 5000). */
  timeoutMs?: number;
}

const MAX_BODY_CHARS = 64 * 1024;

/**
 * The keys at a JWKS URL, fetched on first use and kept; read again when older than
 * `maxAgeSeconds`, or sooner (at most once per `minRefetchSeconds`) when a delivery names a key the
 * set lacks or no key verifies. While a refetch is refused by that bound, or fails after an earlier
 * success, the keys held are used.
 *
 * @example
 * ```ts
 * const keys = remoteJwks('https://storegate.example/.well-known/jwks.json');
 * const event = await verifyWebhook({ rawBody, headers, publicKeys: keys });
 * ```
 */
export class RemoteJwks implements WebhookKeySource {
  readonly url: string;
  private held: { keys: WebhookVerificationKey[]; at: number } | undefined;
  private lastFetch = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<WebhookVerificationKey[]> | undefined;
  private readonly fetchFn: typeof fetch;
  private readonly maxAgeMs: number;
  private readonly minRefetchMs: number;
  private readonly now: () => number;
  private readonly timeoutMs: number;

  constructor(url: string | URL, options: RemoteJwksOptions = {}) {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw new WebhookError('WEBHOOK_KEYS_UNAVAILABLE', `the JWKS URL must be http(s), got ${parsed.protocol}`);
    }
    this.url = parsed.toString();
    this.fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
    this.maxAgeMs = (options.maxAgeSeconds ?? 300) * 1000;
    this.minRefetchMs = (options.minRefetchSeconds ?? 30) * 1000;
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  async keys(kids: readonly string[], retry: boolean): Promise<readonly WebhookVerificationKey[]> {
    const now = this.now();
    const held = this.held;
    const stale = held === undefined || now - held.at >= this.maxAgeMs;
    const unknown = held !== undefined && kids.some((kid) => !held.keys.some((k) => k.kid === kid));
    const mayRefetch = now - this.lastFetch >= this.minRefetchMs;
    if (held === undefined || (stale && mayRefetch) || ((unknown || retry) && mayRefetch)) {
      try {
        return await this.fetchKeys();
      } catch (err) {
        if (held === undefined) throw err;
      }
    }
    return held.keys;
  }

  private fetchKeys(): Promise<WebhookVerificationKey[]> {
    this.inFlight ??= this.load().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async load(): Promise<WebhookVerificationKey[]> {
    this.lastFetch = this.now();
    let body: string;
    try {
      const res = await this.fetchFn(this.url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.timeoutMs) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      body = await res.text();
    } catch (cause) {
      throw new WebhookError('WEBHOOK_KEYS_UNAVAILABLE', `could not fetch the webhook public keys from ${this.url}`, { cause });
    }
    if (body.length > MAX_BODY_CHARS) throw new WebhookError('WEBHOOK_KEYS_UNAVAILABLE', `the JWKS at ${this.url} is too large`);
    let set: JsonWebKeySet;
    try {
      set = JSON.parse(body) as JsonWebKeySet;
    } catch (cause) {
      throw new WebhookError('WEBHOOK_KEYS_UNAVAILABLE', `the JWKS at ${this.url} is not JSON`, { cause });
    }
    const keys = await importJwks(set);
    this.held = { keys, at: this.now() };
    return keys;
  }
}

/** The keys at a JWKS URL (the platform's `/.well-known/jwks.json`), fetched and kept: see {@link RemoteJwks}. */
export function remoteJwks(url: string | URL, options: RemoteJwksOptions = {}): RemoteJwks {
  return new RemoteJwks(url, options);
}

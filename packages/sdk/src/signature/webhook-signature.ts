// Webhook signatures. Two schemes, each computed over the raw body bytes:
// - `X-Service-Hmac-Sha256`: base64 HMAC-SHA256 of the raw body;
// - Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC of
//   "id.timestamp.body">` (several space-separated signatures allowed), which adds replay protection;
//   for apps that asked, also `v1a,<base64 Ed25519 signature>` entries by the platform's keys,
//   checked with public keys (asymmetric-signature.ts) instead of a shared secret.
import { timingSafeEqualStrings } from '../crypto/constant-time.ts';
import { utf8Text } from '../crypto/encoding.ts';
import { hmacSha256 } from '../crypto/hmac.ts';
import { WebhookError } from '../errors.ts';
import { verifyAsymmetric } from './asymmetric-signature.ts';
import type { SecretInput } from './query-signature.ts';
import { type JsonWebKeySet, staticKeySource, type WebhookKeySource } from './webhook-public-keys.ts';

/** The exact bytes of a request body, before any parsing. */
export type RawBody = string | Uint8Array | ArrayBuffer;

/** Request headers: a web `Headers`, or a record as Node's `IncomingMessage.headers`. */
export type HeadersInput = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Names of the headers a webhook carries. */
export interface WebhookHeaderNames {
  signature: string;
  topic: string;
  shop: string;
  apiVersion: string;
  webhookId: string;
  eventId: string;
  triggeredAt: string;
}

/** Default header prefix of the platform (`X-Service-…`). */
export const DEFAULT_HEADER_PREFIX = 'X-Service-';

/**
 * Header names for a platform whose headers start with `prefix` (default `X-Service-`); the
 * signature header can be renamed on its own.
 *
 * @example
 * ```ts
 * webhookHeaderNames('X-Shopify-').topic; // 'X-Shopify-Topic'
 * ```
 */
export function webhookHeaderNames(prefix: string = DEFAULT_HEADER_PREFIX, signatureHeader?: string): WebhookHeaderNames {
  return {
    signature: signatureHeader ?? `${prefix}Hmac-Sha256`,
    topic: `${prefix}Topic`,
    shop: `${prefix}Shop-Domain`,
    apiVersion: `${prefix}Api-Version`,
    webhookId: `${prefix}Webhook-Id`,
    eventId: `${prefix}Event-Id`,
    triggeredAt: `${prefix}Triggered-At`,
  };
}

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /** The body exactly as received: a string, `Uint8Array`/`Buffer` or `ArrayBuffer`. Never a parsed object. */
  rawBody: RawBody;
  headers: HeadersInput;
  /**
   * The client secret (a private app's webhook secret), or several during a rotation: checks `v1,`
   * entries (and `X-Service-Hmac-Sha256`). Give it, `publicKeys`, or both (either kind then suffices).
   */
  secret?: SecretInput;
  /**
   * Public keys for the `v1a,` (Ed25519) entries: a JSON Web Key Set, or `remoteJwks(url)` for the
   * platform's `jwks_uri`, fetched and kept. With only `publicKeys`, a webhook must carry a valid `v1a`.
   */
  publicKeys?: JsonWebKeySet | WebhookKeySource;
  /** Standard Webhooks timestamp tolerance in seconds, either side (default 300). */
  toleranceSeconds?: number;
  /** Clock in milliseconds (default `Date.now`). */
  now?: () => number;
  /** Prefix of the platform's headers (default `X-Service-`). */
  headerPrefix?: string;
  /** Name of the body-signature header (default `{prefix}Hmac-Sha256`). */
  signatureHeader?: string;
  /** Refuse webhooks without the Standard Webhooks signature, i.e. without replay protection. */
  requireStandardSignature?: boolean;
}

/** A verified webhook. */
export interface WebhookEvent<T = unknown> {
  /** De-duplication id, the same on every retry (`X-Service-Webhook-Id`, else `webhook-id`). */
  id: string | undefined;
  topic: string | undefined;
  shop: string | undefined;
  apiVersion: string | undefined;
  eventId: string | undefined;
  triggeredAt: string | undefined;
  /** `webhook-timestamp` (unix seconds) when the Standard Webhooks signature was checked. */
  timestamp: number | undefined;
  /** Which signature was verified: `standard-webhooks-ed25519` is a `v1a` entry checked with a public key. */
  scheme: 'standard-webhooks' | 'standard-webhooks-ed25519' | 'hmac-sha256';
  /** The body as text (decoded on first access). */
  readonly rawBody: string;
  /** The body parsed as JSON, on first access (throws `WEBHOOK_PAYLOAD_INVALID` if it is not JSON). */
  readonly payload: T;
  /** The fields above except `payload`, for logging. */
  toJSON(): Record<string, unknown>;
}

type HeaderGetter = (lowerName: string) => string | undefined;

function headerGetter(headers: HeadersInput): HeaderGetter {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    return (name) => (headers as Headers).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  return (lower) => {
    let value = record[lower];
    if (value === undefined) {
      // Node lower-cases header names; other record sources may not.
      for (const key in record) if (key.toLowerCase() === lower) value = record[key];
    }
    return Array.isArray(value) ? value.join(', ') : (value as string | undefined);
  };
}

const lowerNamesCache = new Map<string, WebhookHeaderNames>();

function lowerHeaderNames(prefix: string | undefined, signatureHeader: string | undefined): WebhookHeaderNames {
  const key = `${prefix ?? ''}\n${signatureHeader ?? ''}`;
  let names = lowerNamesCache.get(key);
  if (!names) {
    const n = webhookHeaderNames(prefix, signatureHeader);
    names = {
      signature: n.signature.toLowerCase(),
      topic: n.topic.toLowerCase(),
      shop: n.shop.toLowerCase(),
      apiVersion: n.apiVersion.toLowerCase(),
      webhookId: n.webhookId.toLowerCase(),
      eventId: n.eventId.toLowerCase(),
      triggeredAt: n.triggeredAt.toLowerCase(),
    };
    if (lowerNamesCache.size > 32) lowerNamesCache.clear();
    lowerNamesCache.set(key, names);
  }
  return names;
}

function rawBodyParts(rawBody: unknown): string | Uint8Array {
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  const what =
    rawBody === undefined
      ? 'undefined'
      : rawBody === null
        ? 'null'
        : typeof rawBody === 'object'
          ? `a parsed ${Array.isArray(rawBody) ? 'array' : 'object'}`
          : typeof rawBody;
  throw new WebhookError(
    'WEBHOOK_BODY_NOT_RAW',
    `verifyWebhook needs the raw request body (string, Uint8Array/Buffer or ArrayBuffer) but got ${what}. ` +
      'A body parser (e.g. express.json()) ran before this route and re-serialising its result would change the bytes: ' +
      'capture the raw body instead (express.raw({ type: "*/*" }), the SDK\'s express/fastify adapters, or await request.arrayBuffer()).',
  );
}

function secretsOf(secret: SecretInput): readonly string[] {
  return typeof secret === 'string' ? [secret] : secret;
}

/**
 * Base64 HMAC-SHA256 of a raw webhook body, the value of `X-Service-Hmac-Sha256`.
 *
 * @example
 * ```ts
 * const signature = await signWebhook('{"id":"ORDER_1"}', clientSecret);
 * await fetch(url, { method: 'POST', body: '{"id":"ORDER_1"}', headers: { 'X-Service-Hmac-Sha256': signature } });
 * ```
 */
export async function signWebhook(rawBody: RawBody, secret: string): Promise<string> {
  return hmacSha256(secret, [rawBodyParts(rawBody)], 'base64');
}

/**
 * The Standard Webhooks `webhook-signature` value (`v1,<base64>`) over `id.timestamp.body`.
 *
 * @example
 * ```ts
 * const signature = await signStandardWebhook({ id: 'wh_01', timestamp: 1700000000, rawBody: body }, secret);
 * // headers: webhook-id: wh_01, webhook-timestamp: 1700000000, webhook-signature: signature
 * ```
 */
export async function signStandardWebhook(
  message: { id: string; timestamp: number | string; rawBody: RawBody },
  secret: string,
): Promise<string> {
  const digest = await hmacSha256(secret, [`${message.id}.${message.timestamp}.`, rawBodyParts(message.rawBody)], 'base64');
  return `v1,${digest}`;
}

class VerifiedWebhookEvent<T> implements WebhookEvent<T> {
  readonly id: string | undefined;
  readonly topic: string | undefined;
  readonly shop: string | undefined;
  readonly apiVersion: string | undefined;
  readonly eventId: string | undefined;
  readonly triggeredAt: string | undefined;
  readonly timestamp: number | undefined;
  readonly scheme: WebhookEvent['scheme'];
  #body: string | Uint8Array;
  #payload: { value: T } | undefined;

  constructor(
    header: HeaderGetter,
    names: WebhookHeaderNames,
    scheme: WebhookEvent['scheme'],
    timestamp: number | undefined,
    body: string | Uint8Array,
  ) {
    this.id = header(names.webhookId) ?? header('webhook-id');
    this.topic = header(names.topic);
    this.shop = header(names.shop);
    this.apiVersion = header(names.apiVersion);
    this.eventId = header(names.eventId);
    this.triggeredAt = header(names.triggeredAt);
    this.timestamp = timestamp;
    this.scheme = scheme;
    this.#body = body;
  }

  // Decoded and parsed on first use only: verification itself never pays for it.
  get rawBody(): string {
    if (typeof this.#body !== 'string') this.#body = utf8Text(this.#body);
    return this.#body;
  }

  get payload(): T {
    if (!this.#payload) {
      try {
        this.#payload = { value: JSON.parse(this.rawBody) as T };
      } catch (cause) {
        throw new WebhookError('WEBHOOK_PAYLOAD_INVALID', 'webhook body is not valid JSON', { cause });
      }
    }
    return this.#payload.value;
  }

  toJSON(): Record<string, unknown> {
    const { id, topic, shop, apiVersion, eventId, triggeredAt, timestamp, scheme, rawBody } = this;
    return { id, topic, shop, apiVersion, eventId, triggeredAt, timestamp, scheme, rawBody };
  }
}

/**
 * Verifies a webhook against its raw body and returns the typed event. When the Standard Webhooks
 * headers are present their signature and timestamp (±`toleranceSeconds`, default 300 s) are
 * checked; otherwise the `X-Service-Hmac-Sha256` body signature is. Any of several secrets may
 * match any of the `v1,` entries of `webhook-signature` (during a rotation the platform sends one per
 * secret, and the app lists `[newSecret, oldSecret]`); comparison is constant-time. Errors (`WebhookError`) say which check failed:
 * `WEBHOOK_BODY_NOT_RAW` (a parsed object was passed), `WEBHOOK_SIGNATURE_MISSING`,
 * `WEBHOOK_SIGNATURE_INVALID`, `WEBHOOK_TIMESTAMP_OUT_OF_RANGE`.
 *
 * @example
 * ```ts
 * app.post('/webhooks', express.raw({ type: '*\/*' }), async (req, res) => {
 *   const event = await verifyWebhook({ rawBody: req.body, headers: req.headers, secret: process.env.CLIENT_SECRET! });
 *   if (await alreadyHandled(event.id)) return res.sendStatus(200);
 *   console.log(event.topic, event.shop, event.payload);
 *   res.sendStatus(200);
 * });
 * ```
 */
export async function verifyWebhook<T = unknown>(options: VerifyWebhookOptions): Promise<WebhookEvent<T>> {
  const body = rawBodyParts(options.rawBody);
  const header = headerGetter(options.headers);
  const names = lowerHeaderNames(options.headerPrefix, options.signatureHeader);
  const secrets = options.secret === undefined ? [] : secretsOf(options.secret);
  const keySource = keySourceOf(options.publicKeys);
  if (secrets.length === 0 && keySource === undefined)
    throw new WebhookError('WEBHOOK_SIGNATURE_MISSING', 'verifyWebhook needs a secret, publicKeys or both to check the signature with');
  const standardSignature = header('webhook-signature');
  let scheme: WebhookEvent['scheme'];
  let timestamp: number | undefined;

  if (standardSignature !== undefined) {
    const id = header('webhook-id');
    const ts = header('webhook-timestamp');
    if (!id || !ts)
      throw new WebhookError('WEBHOOK_SIGNATURE_MISSING', 'webhook-signature is present but webhook-id or webhook-timestamp is missing');
    if (!/^\d{1,12}$/.test(ts))
      throw new WebhookError('WEBHOOK_TIMESTAMP_OUT_OF_RANGE', 'webhook-timestamp is not a unix timestamp in seconds');
    timestamp = Number(ts);
    const tolerance = options.toleranceSeconds ?? 300;
    const skew = Math.abs((options.now ?? Date.now)() / 1000 - timestamp);
    if (skew > tolerance) {
      throw new WebhookError(
        'WEBHOOK_TIMESTAMP_OUT_OF_RANGE',
        `webhook-timestamp is ${Math.round(skew)} s away from now; at most ${tolerance} s is accepted (a replay, or a wrong server clock)`,
      );
    }
    // Space-separated `version,signature` entries: one per secret the sender signs with (two while
    // it rotates its secret), `v1a` ones per platform key, and versions this code does not know are skipped.
    const entries = standardSignature.split(/\s+/);
    const candidates = secrets.length === 0 ? [] : entries.filter((s) => s.startsWith('v1,')).map((s) => s.slice(3));
    const asymmetric = keySource === undefined ? [] : entries.filter((s) => s.startsWith('v1a,')).map((s) => s.slice(4));
    if (candidates.length === 0 && asymmetric.length === 0)
      throw new WebhookError(
        'WEBHOOK_SIGNATURE_MISSING',
        `webhook-signature carries no ${[secrets.length > 0 ? 'v1' : '', keySource ? 'v1a' : ''].filter(Boolean).join(' or ')} signature`,
      );
    let valid = false;
    for (const secret of secrets) {
      if (candidates.length === 0) break;
      const digest = hmacSha256(secret, [`${id}.${ts}.`, body], 'base64');
      const expected = typeof digest === 'string' ? digest : await digest;
      for (const candidate of candidates) if (timingSafeEqualStrings(expected, candidate)) valid = true;
    }
    scheme = 'standard-webhooks';
    if (!valid && keySource !== undefined && asymmetric.length > 0) {
      const kids = (header(`${(options.headerPrefix ?? DEFAULT_HEADER_PREFIX).toLowerCase()}signing-key-ids`) ?? '')
        .split(/\s+/)
        .filter(Boolean);
      const checked = await verifyAsymmetric({ values: asymmetric, id, timestamp: ts, body, source: keySource, kids });
      if (!checked.valid && candidates.length === 0) throw asymmetricMismatch(checked.keysChecked, kids);
      valid = checked.valid;
      scheme = 'standard-webhooks-ed25519';
    }
    if (!valid) throw signatureMismatch('webhook-signature', secrets.length);
  } else {
    if (options.requireStandardSignature || secrets.length === 0) {
      throw new WebhookError(
        'WEBHOOK_SIGNATURE_MISSING',
        secrets.length === 0
          ? 'webhook has no webhook-signature header, and only publicKeys were given (the v1a signatures travel in it)'
          : 'webhook has no webhook-signature header and requireStandardSignature is set (replay protection needs it)',
      );
    }
    const provided = header(names.signature)?.trim();
    if (!provided)
      throw new WebhookError(
        'WEBHOOK_SIGNATURE_MISSING',
        `webhook has neither ${options.signatureHeader ?? `${options.headerPrefix ?? DEFAULT_HEADER_PREFIX}Hmac-Sha256`} nor ` +
          `webhook-signature header`,
      );
    let valid = false;
    for (const secret of secrets) {
      const digest = hmacSha256(secret, [body], 'base64');
      const expected = typeof digest === 'string' ? digest : await digest;
      if (timingSafeEqualStrings(expected, provided)) valid = true;
    }
    if (!valid)
      throw signatureMismatch(options.signatureHeader ?? `${options.headerPrefix ?? DEFAULT_HEADER_PREFIX}Hmac-Sha256`, secrets.length);
    scheme = 'hmac-sha256';
  }

  return new VerifiedWebhookEvent<T>(header, names, scheme, timestamp, body);
}

function keySourceOf(keys: VerifyWebhookOptions['publicKeys']): WebhookKeySource | undefined {
  if (keys === undefined) return undefined;
  return typeof keys.keys === 'function' ? (keys as WebhookKeySource) : staticKeySource(keys as JsonWebKeySet);
}

function asymmetricMismatch(keyCount: number, kids: readonly string[]): WebhookError {
  return new WebhookError(
    'WEBHOOK_SIGNATURE_INVALID',
    `no v1a entry of webhook-signature is a signature of this body by the ${keyCount} public key${keyCount === 1 ? '' : 's'} trusted` +
      `${kids.length > 0 ? ` (the webhook names key ${kids.join(', ')})` : ''}. ` +
      'Either it was signed by another key (a JWKS of another platform, or an old copy) or the body is not the exact bytes received.',
  );
}

function signatureMismatch(headerName: string, secretCount: number): WebhookError {
  return new WebhookError(
    'WEBHOOK_SIGNATURE_INVALID',
    `${headerName} does not match the body (checked ${secretCount} secret${secretCount === 1 ? '' : 's'}). ` +
      'Either the secret is wrong (a public app signs with its client secret, a private app with its webhook secret) ' +
      'or the body is not the exact bytes received (it was parsed and re-serialised, re-encoded, or trimmed).',
  );
}

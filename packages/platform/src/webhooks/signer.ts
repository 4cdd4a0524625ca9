// Webhook signatures: X-Service-Hmac-Sha256 (base64 HMAC-SHA256 of the raw body, the header apps
// of this platform family verify) and the Standard Webhooks `webhook-signature` over
// "id.timestamp.body". Secrets are UTF-8 bytes. During a secret rotation the body header is signed
// with the previous secret and `webhook-signature` lists one signature per valid secret. An app
// that asked for asymmetric signatures also gets `v1a` entries by the platform's keys
// (asymmetric-signer.ts).
import { createHmac } from 'node:crypto';
import { allSigningSecrets, singleSignatureSecret, type SigningSecrets } from '../domain/signing-secrets.ts';
import type { SigningKey } from '../domain/webhook-signing-keys.ts';
import { asymmetricEntries, SIGNING_KEY_IDS_HEADER, signingKeyIds } from './asymmetric-signer.ts';

/** base64 (strict, no line breaks) of HMAC-SHA256(secret, body). */
export function bodyHmac(secret: string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

/** `v1,<base64 HMAC-SHA256(secret, "id.timestamp.body")>` */
export function standardSignature(secret: string, webhookId: string, timestampSeconds: number | string, body: string | Buffer): string {
  return `v1,${createHmac('sha256', secret).update(`${webhookId}.${timestampSeconds}.`).update(body).digest('base64')}`;
}

export interface WebhookMessage {
  webhookId: string;
  eventId: string;
  topic: string;
  shopDomain: string;
  apiVersion: string;
  /** When the change happened (unix ms). */
  triggeredAt: number;
  body: string;
}

/**
 * What a delivery's headers need beyond its id and the time of the attempt, worked out once per
 * event and secret: every delivery of one event to one owner carries the same body, so the body's
 * signature and the event's headers are shared; only `webhook-signature` (over the webhook id and
 * the attempt's timestamp) is computed per attempt.
 */
export interface SignedEvent {
  /** The body as sent (bytes), shared by every delivery of the event. */
  body: Buffer;
  /** X-Service-Hmac-Sha256 of the body under `singleSignatureSecret`. */
  bodySignature: string;
  /** The secrets valid now, the current first. */
  secrets: string[];
  topic: string;
  shopDomain: string;
  apiVersion: string;
  eventId: string;
  /** X-Service-Triggered-At. */
  triggeredAtIso: string;
  /** The platform keys that add `v1a` entries, for an app that asked for them. */
  signingKeys?: readonly SigningKey[] | undefined;
}

export function signEvent(
  secrets: SigningSecrets,
  m: Omit<WebhookMessage, 'webhookId'>,
  body: Buffer = Buffer.from(m.body),
  signingKeys?: readonly SigningKey[],
): SignedEvent {
  return {
    signingKeys,
    body,
    bodySignature: bodyHmac(singleSignatureSecret(secrets), body),
    secrets: allSigningSecrets(secrets),
    topic: m.topic,
    shopDomain: m.shopDomain,
    apiVersion: m.apiVersion,
    eventId: m.eventId,
    triggeredAtIso: new Date(m.triggeredAt).toISOString(),
  };
}

/**
 * The same headers as `webhookHeaders`, in the same order, as the flat name/value list the sender
 * hands to undici.
 */
export function deliveryHeaders(e: SignedEvent, webhookId: string, now: number): string[] {
  const timestamp = Math.floor(now / 1000);
  let signature = standardSignature(e.secrets[0]!, webhookId, timestamp, e.body);
  for (let i = 1; i < e.secrets.length; i++) signature += ` ${standardSignature(e.secrets[i]!, webhookId, timestamp, e.body)}`;
  const keys = e.signingKeys;
  if (keys !== undefined && keys.length > 0) signature += asymmetricEntries(keys, webhookId, timestamp, e.body);
  const headers = [
    'Content-Type',
    'application/json',
    'User-Agent',
    'storegate-webhooks/1',
    'X-Service-Hmac-Sha256',
    e.bodySignature,
    'X-Service-Topic',
    e.topic,
    'X-Service-Shop-Domain',
    e.shopDomain,
    'X-Service-Api-Version',
    e.apiVersion,
    'X-Service-Webhook-Id',
    webhookId,
    'X-Service-Event-Id',
    e.eventId,
    'X-Service-Triggered-At',
    e.triggeredAtIso,
    'webhook-id',
    webhookId,
    'webhook-timestamp',
    String(timestamp),
    'webhook-signature',
    signature,
  ];
  if (keys !== undefined && keys.length > 0) headers.push(SIGNING_KEY_IDS_HEADER, signingKeyIds(keys));
  return headers;
}

/** Every header of a delivery attempt made at `now` (unix ms). */
export function webhookHeaders(
  secrets: SigningSecrets,
  m: WebhookMessage,
  now: number,
  signingKeys: readonly SigningKey[] = [],
): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': 'storegate-webhooks/1',
    'X-Service-Hmac-Sha256': bodyHmac(singleSignatureSecret(secrets), m.body),
    'X-Service-Topic': m.topic,
    'X-Service-Shop-Domain': m.shopDomain,
    'X-Service-Api-Version': m.apiVersion,
    'X-Service-Webhook-Id': m.webhookId,
    'X-Service-Event-Id': m.eventId,
    'X-Service-Triggered-At': new Date(m.triggeredAt).toISOString(),
    'webhook-id': m.webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature':
      allSigningSecrets(secrets)
        .map((secret) => standardSignature(secret, m.webhookId, timestamp, m.body))
        .join(' ') + asymmetricEntries(signingKeys, m.webhookId, timestamp, m.body),
  };
  if (signingKeys.length > 0) headers[SIGNING_KEY_IDS_HEADER] = signingKeyIds(signingKeys);
  return headers;
}

// Webhook signatures: X-Service-Hmac-Sha256 (base64 HMAC-SHA256 of the raw body, the header apps
// of this platform family verify) and the Standard Webhooks `webhook-signature` over
// "id.timestamp.body". Secrets are UTF-8 bytes. During a secret rotation the body header is signed
// with the previous secret and `webhook-signature` lists one signature per valid secret.
import { createHmac } from 'node:crypto';
import { allSigningSecrets, singleSignatureSecret, type SigningSecrets } from '../domain/signing-secrets.ts';

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

/** Every header of a delivery attempt made at `now` (unix ms). */
export function webhookHeaders(secrets: SigningSecrets, m: WebhookMessage, now: number): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
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
    'webhook-signature': allSigningSecrets(secrets)
      .map((secret) => standardSignature(secret, m.webhookId, timestamp, m.body))
      .join(' '),
  };
}

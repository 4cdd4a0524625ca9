// The asymmetric half of a delivery's signatures, for apps that asked for it: one Standard Webhooks
// `v1a` entry per platform signing key that signs now (two during a key rotation, the newest first),
// appended after the `v1` HMAC entries of `webhook-signature`, and the ids of those keys in the
// same order, so a receiver can tell that it must fetch the JWKS again before it meets a key it does
// not know, without trying every key it holds.
import { asymmetricSignature, type SigningKey } from '../domain/webhook-signing-keys.ts';

/** The header that names the keys of the `v1a` entries, space-separated, in their order. */
export const SIGNING_KEY_IDS_HEADER = 'X-Service-Signing-Key-Ids';

/** ` v1a,<sig>` for each key (with the leading space that separates it from the entries before). */
export function asymmetricEntries(keys: readonly SigningKey[], webhookId: string, timestampSeconds: number, body: string | Buffer): string {
  let entries = '';
  for (const key of keys) entries += ` ${asymmetricSignature(key.privateKey, webhookId, timestampSeconds, body)}`;
  return entries;
}

export function signingKeyIds(keys: readonly SigningKey[]): string {
  return keys.map((k) => k.kid).join(' ');
}

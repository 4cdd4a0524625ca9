// Which secrets sign what while a signing secret is being rotated. The secret being replaced keeps
// signing the single-signature forms (the query `hmac` and `X-Service-Hmac-Sha256`) until the
// rotation is finished or its overlap ends, because an app that has not deployed the new secret yet
// can only check those against the old one; the Standard Webhooks `webhook-signature` carries one
// signature per valid secret, the new one first, so an app holding either secret accepts it.

/** The plaintext secrets of one owner at one moment: the current one, and the previous while its overlap lasts. */
export interface SigningSecrets {
  current: string;
  previous?: string | undefined;
}

/** The previous secret while it is still valid at `now`, else undefined (none, or its overlap ended). */
export function activePrevious<T>(previous: T | null | undefined, expiresAt: number | null | undefined, now: number): T | undefined {
  return previous !== null && previous !== undefined && expiresAt !== null && expiresAt !== undefined && expiresAt > now
    ? previous
    : undefined;
}

/** The secret for the forms that carry a single signature: the previous one during an overlap. */
export function singleSignatureSecret(s: SigningSecrets): string {
  return s.previous ?? s.current;
}

/** Every secret valid now, the current first: one `v1,` entry each in `webhook-signature`. */
export function allSigningSecrets(s: SigningSecrets): string[] {
  return s.previous === undefined ? [s.current] : [s.current, s.previous];
}

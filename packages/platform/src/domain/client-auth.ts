// Client authentication at the token endpoint (RFC 6749 section 2.3.1) as a judgement of the app
// row found under the presented client_id: no I/O, the clock and the opening of sealed secrets are
// parameters. Whatever reads the app (inside a grant's own batch, or from a copy kept in memory)
// asks this one function, so every path answers a client the same way.
import { timingSafeEqual } from 'node:crypto';
import { InvalidClient, InvalidGrant } from './errors.ts';

/** The columns of an app the judgement reads. */
export interface ClientApp {
  client_secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: number | null;
  redirect_uri: string;
}

/** What the client presented: its secret, and the redirect URI when the request named one. */
export interface PresentedClient {
  secret: string;
  redirectUri?: string | undefined;
}

export type ClientVerdict<A> = { ok: true; app: A } | { ok: false; error: InvalidClient | InvalidGrant };

/**
 * Accepts the client when `app` exists and the secret is its current one, or its previous one
 * while that is still within its grace period after a rotation (until `previous_secret_expires_at`,
 * exclusive). Each candidate is compared in constant time, so the answer's timing tells nothing
 * about how much of a secret matched. Only an authenticated client hears that the redirect URI it
 * named is not the one it registered: anyone else learns nothing about the app.
 */
export function verifyClient<A extends ClientApp>(
  app: A | undefined,
  presented: PresentedClient,
  now: number,
  open: (sealed: string) => string,
): ClientVerdict<A> {
  if (!app) return { ok: false, error: new InvalidClient() };
  const candidates = [app.client_secret_enc];
  if (app.previous_secret_enc && (app.previous_secret_expires_at ?? 0) > now) candidates.push(app.previous_secret_enc);
  const given = Buffer.from(presented.secret);
  const matched = candidates.some((sealed) => {
    const expected = Buffer.from(open(sealed));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
  if (!matched) return { ok: false, error: new InvalidClient() };
  if (presented.redirectUri !== undefined && presented.redirectUri !== app.redirect_uri)
    return { ok: false, error: new InvalidGrant('redirect_uri does not match the registered redirect URL') };
  return { ok: true, app };
}

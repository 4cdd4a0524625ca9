// Client authentication at the token endpoint (RFC 6749 section 2.3.1): the app stored under the
// client_id, judged by verifyClient (domain/client-auth.ts) on its secret, or its previous secret
// until that expires after a rotation. Storage never runs the check: the service judges a row
// storage read (the copy it kept, or one read just now), and storage runs the grant only while the
// app is still that row, handing back the row it found otherwise. So the judgement always happens
// before the grant changes anything, and never while a grant holds a connection.
import type { Clock } from '../domain/clock.ts';
import { verifyClient } from '../domain/client-auth.ts';
import { InvalidClient, type OAuthError } from '../domain/errors.ts';
import type { AppRow } from '../storage/ports/rows.ts';
import type { GrantClient, GrantOutcome } from '../storage/ports/tokens.ts';

/** Besides the credentials, what a grant's request is judged on once its client is authenticated. */
export interface GrantRequest {
  /** The redirect URI the request named: it must be the one the app registered. */
  redirectUri?: string | undefined;
  /** The request's own fault (a parameter it lacks), answered only to an authenticated client. */
  refusal?: OAuthError | undefined;
}

/**
 * The client presenting a grant: the client_id to look its app up by (undefined: no app can have
 * it), and the judgement of the app found, which throws to refuse the grant.
 */
export interface ClientCheck {
  lookupId: string | undefined;
  check(app: AppRow | undefined): AppRow;
}

/** Where a grant finds a client's app: the copy storage kept, and the grant run on an approved row. */
export interface ClientGrant<T> {
  known(clientId: string): AppRow | undefined;
  run(client: GrantClient): Promise<GrantOutcome<T>>;
}

// Each further attempt follows a change of the app committed during the one before: more than a
// few in a row would take an app rewritten without pause.
const GRANT_ATTEMPTS = 4;

/**
 * Runs a grant for the client once it is judged on the app as it is in the database. Starts from
 * the copy storage kept (no read of its own while the app stays as it was); a refusal of a copy is
 * final only once the app read afresh refuses too, so a secret or redirect URI changed on any node
 * holds at once. A refused client changes nothing: storage never runs a grant unapproved.
 */
export async function grantAsClient<T>(client: ClientCheck, grant: ClientGrant<T>): Promise<{ app: AppRow; granted: T | undefined }> {
  const lookupId = client.lookupId;
  if (lookupId === undefined) return { app: client.check(undefined), granted: undefined };
  let candidate = grant.known(lookupId);
  // Whether `candidate` was read by this grant (else: a copy from before).
  let current = candidate === undefined;
  if (current) candidate = (await grant.run({ lookupId })).app;
  for (let attempt = 0; attempt < GRANT_ATTEMPTS; attempt++) {
    let approved: AppRow;
    try {
      approved = client.check(candidate);
    } catch (refusal) {
      if (current) throw refusal;
      candidate = (await grant.run({ lookupId })).app;
      current = true;
      continue;
    }
    const outcome = await grant.run({ lookupId, approved });
    if (outcome.ran) return { app: outcome.app, granted: outcome.granted };
    candidate = outcome.app;
    current = true;
  }
  throw new Error('the app changed under every attempt of the grant');
}

export class ClientAuth {
  constructor(
    private readonly box: { open(sealed: string): string },
    private readonly clock: Clock,
  ) {}

  /**
   * The check of a presented client_id and secret. Refuses at once when either is missing; the
   * redirect URI and the request's refusal are judged after the client is authenticated, in that
   * order, so that nobody learns anything about an app whose secret they do not hold.
   */
  presented(clientId: string | undefined, clientSecret: string | undefined, request: GrantRequest = {}): ClientCheck {
    if (!clientId) throw new InvalidClient('client_id is required');
    if (!clientSecret) throw new InvalidClient('client_secret is required');
    const presented = { secret: clientSecret, redirectUri: request.redirectUri };
    return {
      // No app has a longer client_id: not worth a lookup.
      lookupId: clientId.length > 100 ? undefined : clientId,
      check: (app: AppRow | undefined) => {
        const verdict = verifyClient(app, presented, this.clock(), (sealed) => this.box.open(sealed));
        if (!verdict.ok) throw verdict.error;
        if (request.refusal) throw request.refusal;
        return verdict.app;
      },
    };
  }
}

// Client authentication at the token endpoint (RFC 6749 section 2.3.1): the app stored under the
// client_id, judged by verifyClient (domain/client-auth.ts) on its secret, or its previous secret
// until that expires after a rotation. Split from the lookup so that storage can read the app
// where reading costs least (inside the grant's own batch on SQLite) and the check still runs
// before the grant changes anything. The check is built from what the request presented alone:
// data, judged by the domain function, so it cannot reach back into storage while a grant holds
// the connection.
import type { Clock } from '../domain/clock.ts';
import { verifyClient } from '../domain/client-auth.ts';
import { InvalidClient, type OAuthError } from '../domain/errors.ts';
import type { AppRow, ClientCheck } from '../storage/ports.ts';

/** Besides the credentials, what a grant's request is judged on once its client is authenticated. */
export interface GrantRequest {
  /** The redirect URI the request named: it must be the one the app registered. */
  redirectUri?: string | undefined;
  /** The request's own fault (a parameter it lacks), answered only to an authenticated client. */
  refusal?: OAuthError | undefined;
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

// Client authentication at the token endpoint (RFC 6749 section 2.3.1): the app stored under the
// client_id, and its secret, or its previous secret until that expires after a rotation. Split
// from the lookup so that storage can read the app where reading costs least (inside the grant's
// own batch on SQLite) and the check still runs before the grant changes anything.
import { timingSafeEqual } from 'node:crypto';
import type { Clock } from '../domain/clock.ts';
import { InvalidClient } from '../domain/errors.ts';
import type { AppRow, ClientCheck } from '../storage/ports.ts';

export class ClientAuth {
  constructor(
    private readonly box: { open(sealed: string): string },
    private readonly clock: Clock,
  ) {}

  /**
   * The check of a presented client_id and secret. Refuses at once when either is missing; `then`
   * runs after the client is authenticated, for checks that need the app (its redirect URI) or
   * must not answer before the client is known.
   */
  presented(clientId: string | undefined, clientSecret: string | undefined, then?: (app: AppRow) => void): ClientCheck {
    if (!clientId) throw new InvalidClient('client_id is required');
    if (!clientSecret) throw new InvalidClient('client_secret is required');
    return {
      // No app has a longer client_id: not worth a lookup.
      lookupId: clientId.length > 100 ? undefined : clientId,
      check: (app) => {
        const client = this.verify(app, clientSecret);
        then?.(client);
        return client;
      },
    };
  }

  private verify(app: AppRow | undefined, clientSecret: string): AppRow {
    if (!app) throw new InvalidClient();
    const candidates = [app.client_secret_enc];
    if (app.previous_secret_enc && (app.previous_secret_expires_at ?? 0) > this.clock()) candidates.push(app.previous_secret_enc);
    const given = Buffer.from(clientSecret);
    const ok = candidates.some((enc) => {
      const expected = Buffer.from(this.box.open(enc));
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
    if (!ok) throw new InvalidClient();
    return app;
  }
}

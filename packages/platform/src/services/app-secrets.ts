// The layers above the services hold an app as its profile, which has no secret. The services that
// sign for an app or reveal its secret need its sealed columns: the services keep them beside each
// profile they hand out (keyed by that very object), so the secrets never travel with the profile
// and signing a redirect does not read the row again.
import type { AppProfile } from '../domain/app-profile.ts';
import { InternalError } from '../domain/errors.ts';
import type { AppRow } from '../storage/ports/rows.ts';

/** The sealed client secret, and the previous one with the end of its overlap during a rotation. */
export type SealedAppSecrets = Pick<AppRow, 'client_secret_enc' | 'previous_secret_enc' | 'previous_secret_expires_at'>;

const kept = new WeakMap<AppProfile, SealedAppSecrets>();

/** The profile of the app in `row`, its sealed secrets kept for the services. */
export function profileOf(row: AppRow): AppProfile {
  const profile: AppProfile = {
    id: row.id,
    client_id: row.client_id,
    partner_id: row.partner_id,
    name: row.name,
    app_url: row.app_url,
    redirect_uri: row.redirect_uri,
    scopes: row.scopes,
    privacy_webhook_url: row.privacy_webhook_url,
    authorization_iss: row.authorization_iss,
    managed_install: row.managed_install,
    webhook_signature_ed25519: row.webhook_signature_ed25519,
  };
  kept.set(profile, {
    client_secret_enc: row.client_secret_enc,
    previous_secret_enc: row.previous_secret_enc,
    previous_secret_expires_at: row.previous_secret_expires_at,
  });
  return profile;
}

function isRow(app: AppProfile | SealedAppSecrets): app is SealedAppSecrets {
  return typeof (app as Partial<SealedAppSecrets>).client_secret_enc === 'string';
}

/** The sealed secrets of an app: of a profile the services handed out, or those of the app's row itself. */
export function sealedSecretsOf(app: AppProfile | SealedAppSecrets): SealedAppSecrets {
  const secrets = isRow(app) ? app : kept.get(app);
  if (!secrets) throw new InternalError('an app profile the services did not hand out: its secrets are unknown here');
  return secrets;
}

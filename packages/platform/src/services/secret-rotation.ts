// Rotating a signing secret without a dropped webhook or launch link: a public app's client secret
// or a private app's webhook secret. Rotating seals a new secret and keeps the replaced one, sealed
// too, for the configured overlap; meanwhile the replaced one still authenticates at the token
// endpoint and still signs the single-signature forms (see `domain/signing-secrets.ts`), so an app
// keeps working before and after it deploys the new secret. Finishing (or the overlap running out)
// drops the replaced secret everywhere at once. One rotation at a time: rotating again during an
// overlap would take away the secret an app that has not deployed yet still relies on.
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import { ConflictError, NotFoundError } from '../domain/errors.ts';
import { activePrevious, singleSignatureSecret, type SigningSecrets } from '../domain/signing-secrets.ts';
import { newToken } from '../domain/tokens.ts';
import type { PrivateAppSecrets, SecretOwner } from '../storage/ports/apps.ts';
import type { Storage } from '../storage/ports/storage.ts';
import type { AppProfile } from '../domain/app-profile.ts';
import { type SealedAppSecrets, sealedSecretsOf } from './app-secrets.ts';
import type { Sealer } from './master-keys.ts';

/** A new secret, shown once, and when its overlap with the replaced secret ends by itself. */
export interface Rotated {
  secret: string;
  overlapEndsAt: number;
}

export class SecretRotations {
  constructor(
    private readonly storage: Storage,
    private readonly box: Sealer,
    private readonly config: Pick<Config, 'secretOverlapMs'>,
    private readonly clock: Clock,
  ) {}

  /** When the app's rotation in progress ends by itself; undefined when none is in progress. */
  clientRotationEndsAt(app: AppProfile | SealedAppSecrets): number | undefined {
    const sealed = sealedSecretsOf(app);
    const previous = activePrevious(sealed.previous_secret_enc, sealed.previous_secret_expires_at, this.clock());
    return previous === undefined ? undefined : (sealed.previous_secret_expires_at ?? undefined);
  }

  /** The app's plaintext signing secrets now. */
  clientSigningSecrets(app: AppProfile | SealedAppSecrets): SigningSecrets {
    const sealed = sealedSecretsOf(app);
    const previous = activePrevious(sealed.previous_secret_enc, sealed.previous_secret_expires_at, this.clock());
    return { current: this.box.open(sealed.client_secret_enc), previous: previous === undefined ? undefined : this.box.open(previous) };
  }

  /** The secret that signs the query `hmac` of redirects to the app (the previous one during an overlap). */
  querySigningSecret(app: AppProfile | SealedAppSecrets): string {
    return singleSignatureSecret(this.clientSigningSecrets(app));
  }

  /** Starts a rotation of a public app's client secret. A rotation already in progress is a 409. */
  async rotateClientSecret(appId: number): Promise<Rotated> {
    const row = await this.storage.apps.findById(appId);
    if (!row) throw new NotFoundError('No app with this client id');
    return this.start({ appId }, row.client_secret_enc, this.clientRotationEndsAt(row), 'client secret');
  }

  /** Ends the app's rotation now: the previous secret stops signing and authenticating. None in progress is a 409. */
  async finishClientSecretRotation(appId: number): Promise<void> {
    if (!(await this.storage.apps.finishSecretRotation({ appId }, this.clock())))
      throw new ConflictError('No rotation of the client secret is in progress for this app: there is nothing to finish.');
  }

  /** A store's active private app with the state of its webhook secret; unknown, foreign or revoked is a 404. */
  async privateApp(storeId: number, id: number): Promise<PrivateAppSecrets & { rotationEndsAt: number | undefined }> {
    const row = await this.storage.apps.findPrivateAppSecrets(storeId, id);
    if (!row) throw new NotFoundError('No active private app with this id in this store');
    const previous = activePrevious(row.previous_webhook_secret_enc, row.previous_webhook_secret_expires_at, this.clock());
    return { ...row, rotationEndsAt: previous === undefined ? undefined : (row.previous_webhook_secret_expires_at ?? undefined) };
  }

  /** Starts a rotation of a private app's webhook secret. */
  async rotatePrivateWebhookSecret(storeId: number, id: number): Promise<Rotated & { name: string }> {
    const row = await this.privateApp(storeId, id);
    const rotated = await this.start({ storeId, privateAppId: id }, row.webhook_secret_enc, row.rotationEndsAt, 'webhook secret');
    return { ...rotated, name: row.name };
  }

  async finishPrivateWebhookSecretRotation(storeId: number, id: number): Promise<void> {
    await this.privateApp(storeId, id);
    if (!(await this.storage.apps.finishSecretRotation({ storeId, privateAppId: id }, this.clock())))
      throw new ConflictError('No rotation of the webhook secret is in progress for this private app: there is nothing to finish.');
  }

  private async start(owner: SecretOwner, currentEnc: string, endsAt: number | undefined, what: string): Promise<Rotated> {
    const inProgress = () =>
      new ConflictError(
        `A rotation of the ${what} is already in progress: finish it before rotating again (the new secret stays as it is).`,
      );
    if (endsAt !== undefined) throw inProgress();
    const secret = newToken(what === 'client secret' ? 'clientSecret' : 'webhookSecret');
    const now = this.clock();
    const overlapEndsAt = now + this.config.secretOverlapMs;
    const changed = await this.storage.apps.startSecretRotation(owner, {
      expectedCurrent: currentEnc,
      current: await this.box.seal(secret),
      previousExpiresAt: overlapEndsAt,
      now,
    });
    // Another rotation won between the read and the write.
    if (!changed) throw inProgress();
    return { secret, overlapEndsAt };
  }
}

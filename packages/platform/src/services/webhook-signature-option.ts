// An app's choice of asymmetric webhook signatures: with it on, every webhook to the app (its
// subscriptions and its privacy topics) also carries `v1a` signatures by the platform's Ed25519
// keys, which the app checks against the published JWKS without holding any secret of ours.
// Off by default: the HMAC (`v1`, X-Service-Hmac-Sha256) is always sent either way.
import type { AppRepository } from '../storage/ports/apps.ts';

export class WebhookSignatureOption {
  constructor(private readonly apps: Pick<AppRepository, 'updateWebhookSignatureEd25519'>) {}

  /** Turns `v1a` signatures on or off for the app's deliveries; attempts made from then on follow it. */
  async setEd25519(appId: number, on: boolean): Promise<void> {
    await this.apps.updateWebhookSignatureEd25519(appId, on);
  }
}

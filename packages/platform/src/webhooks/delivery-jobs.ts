// Turns what a claim loaded into either a job ready to send or the reason it must not go out.
// The reasons are decided here, from the loaded row, rather than filtered out by the claim: a
// delivery whose owner went away must still end (as cancelled, with the reason in the log) instead
// of staying pending forever.
import type { SecretBox } from '../domain/secret-box.ts';
import type { SigningKey } from '../domain/webhook-signing-keys.ts';
import { activePrevious, type SigningSecrets } from '../domain/signing-secrets.ts';
import { storeHostname } from '../domain/store-host.ts';
import { storedScopes } from '../domain/scopes.ts';
import { CURRENT_VERSION } from '../domain/api-versions.ts';
import { shapePayload } from '../domain/webhook-subscription-shape.ts';
import { isTopic, mayReceive, SCOPE_LOST, sentToAppAddress } from '../domain/webhook-topics.ts';
import type { ClaimedDelivery, DeliveryOutcome } from '../storage/ports/rows.ts';
import { type SignedEvent, signEvent } from './signer.ts';

/** A delivery ready to send: its event (body, shared headers and their signature) and where it goes. */
export interface Job {
  id: number;
  storeId: number;
  subscriptionId: number;
  /** Attempts made before this one, as claimed. */
  attempts: number;
  webhookId: string;
  topic: string;
  address: string;
  /** Scheme, host and port of the address: what the cap that protects a receiver counts. */
  origin: string;
  /** Whose delivery it is (`ownerOf`): the unit of fairness and failure within an origin. */
  owner: string;
  event: SignedEvent;
  /** Queued by a replay: what its attempt shows counts toward neither the breaker nor the dead streak. */
  replay: boolean;
  /** When its subscription was last enabled again: the owner's breaker at the origin from before then is forgotten. */
  enabledAt: number | null;
}

export type CancelledOutcome = Extract<DeliveryOutcome, { cancelled: string }>;

type Decision = { cancelled: string } | { address: string; apiVersion: string; secretEnc: string; previousEnc: string | undefined };

/**
 * The tenant a delivery belongs to: an app or a private app, in one store (`<store id>/app/<app
 * id>`, `<store id>/private/<private app id>`). An app installed in many stores is a tenant per
 * store: its installations fail and are throttled apart.
 */
export function ownerOf(r: Pick<ClaimedDelivery, 'store_id' | 'app_id' | 'private_app_id' | 'subscription_id'>): string {
  if (r.app_id !== null) return `${r.store_id}/app/${r.app_id}`;
  if (r.private_app_id !== null) return `${r.store_id}/private/${r.private_app_id}`;
  return `${r.store_id}/subscription/${r.subscription_id}`;
}

/** Whether the delivery's owner asked for `v1a` signatures too (apps only: an app's subscriptions and privacy topics). */
export function wantsAsymmetric(r: Pick<ClaimedDelivery, 'app_id' | 'webhook_signature_ed25519'>): boolean {
  return r.app_id !== null && r.webhook_signature_ed25519 === 1;
}

/**
 * Whether a claimed delivery may be sent, judged from the state of its subscription and owner at
 * `now`; with the sealed secrets that sign it (the previous one only while its rotation lasts).
 */
export function decide(r: ClaimedDelivery, now: number): Decision {
  if (r.subscription_id < 0 && sentToAppAddress(r.topic)) return decidePrivacy(r, now);
  // A subscription row always carries an address and an API version; testing them here lets the
  // types follow without assertions.
  if (r.sub_id === null || r.address === null || r.api_version === null) return { cancelled: 'the subscription was deleted' };
  if (r.disabled_at !== null) return { cancelled: 'the subscription is disabled' };
  // `app/uninstalled` is sent after the uninstall on purpose. An installation made again after the
  // event does not revive it: the event belonged to the installation that ended.
  if (r.app_id !== null && r.topic !== 'app/uninstalled') {
    if (r.installation_id === null || r.uninstalled_at !== null || (r.installed_at !== null && r.installed_at > r.event_at)) {
      return { cancelled: 'the app was uninstalled' };
    }
  }
  if (r.private_app_id !== null && (r.private_id === null || r.revoked_at !== null)) return { cancelled: 'the private app was revoked' };
  // Checked again at each attempt: the outbox checked the scopes when it queued the event, and the
  // grant may have narrowed since (a retry can come two days later).
  if (!isTopic(r.topic)) return { cancelled: 'the topic is unknown' };
  if (!mayReceive(r.topic, storedScopes(r.app_id !== null ? r.installation_scopes : r.private_scopes))) return { cancelled: SCOPE_LOST };
  const secretEnc = r.client_secret_enc ?? r.webhook_secret_enc;
  if (!secretEnc) return { cancelled: 'the app no longer exists' };
  const previousEnc =
    r.client_secret_enc !== null
      ? activePrevious(r.previous_secret_enc, r.previous_secret_expires_at, now)
      : activePrevious(r.previous_webhook_secret_enc, r.previous_webhook_secret_expires_at, now);
  return { address: r.address, apiVersion: r.api_version, secretEnc, previousEnc };
}

/**
 * A privacy delivery goes to the app's privacy address as it is now, signed with its client
 * secret, in the current API version (there is no subscription to carry one).
 */
function decidePrivacy(r: ClaimedDelivery, now: number): Decision {
  if (r.app_id === null || r.client_secret_enc === null) return { cancelled: 'the app no longer exists' };
  if (!r.privacy_webhook_url) return { cancelled: 'the app has no privacy webhook address' };
  const reinstalled = r.installed_at !== null && r.installed_at > r.event_at;
  if (r.topic === 'shop/redact') {
    // Sent after the uninstall on purpose; an installation made since means the store's data is
    // wanted again, so the app must not erase it.
    if (r.installation_id !== null && (r.uninstalled_at === null || reinstalled)) return { cancelled: 'the app was installed again' };
  } else {
    if (r.installation_id === null || r.uninstalled_at !== null || reinstalled) return { cancelled: 'the app was uninstalled' };
    if (!isTopic(r.topic) || !mayReceive(r.topic, storedScopes(r.installation_scopes))) return { cancelled: SCOPE_LOST };
  }
  const previousEnc = activePrevious(r.previous_secret_enc, r.previous_secret_expires_at, now);
  return { address: r.privacy_webhook_url, apiVersion: CURRENT_VERSION, secretEnc: r.client_secret_enc, previousEnc };
}

/**
 * Opened secrets by their sealed form. Every delivery of an app carries the same sealed secret, so
 * this saves a decryption per send; a rotation seals a new value and so misses the cache by itself.
 * Clearing it whole when it grows is enough to bound memory.
 */
export class SecretCache {
  private readonly plain = new Map<string, string>();

  constructor(
    private readonly box: SecretBox,
    private readonly maxEntries = 10_000,
  ) {}

  open(enc: string): string {
    let plain = this.plain.get(enc);
    if (plain === undefined) {
      if (this.plain.size > this.maxEntries) this.plain.clear();
      plain = this.box.open(enc);
      this.plain.set(enc, plain);
    }
    return plain;
  }
}

/** Origins of the addresses seen, emptied whole when it grows past this. */
const MAX_ORIGINS = 10_000;

export class DeliveryJobs {
  private readonly secrets: SecretCache;
  private readonly storeDomain: string;
  private readonly origins = new Map<string, string>();

  constructor(options: { box: SecretBox; storeDomain: string }) {
    this.secrets = new SecretCache(options.box);
    this.storeDomain = options.storeDomain;
  }

  /**
   * Splits claimed rows into jobs to send and cancellations to record, keeping the claim's order.
   * Deliveries of one event that go out with the same secrets and API version share one signed
   * event: the body is turned into bytes and signed once for all of them. `signingKeys` add `v1a`
   * entries to the deliveries of apps that asked for them (`wantsAsymmetric`).
   */
  prepare(
    rows: readonly ClaimedDelivery[],
    now: number,
    signingKeys: readonly SigningKey[] = [],
  ): { jobs: Job[]; cancelled: CancelledOutcome[] } {
    const jobs: Job[] = [];
    const cancelled: CancelledOutcome[] = [];
    const events = new Map<string, SignedEvent>();
    const bodies = new Map<string, Buffer>();
    for (const r of rows) {
      const base = { id: r.id, storeId: Number(r.store_id), subscriptionId: r.subscription_id, attempts: r.attempts };
      const d = decide(r, now);
      if ('cancelled' in d) {
        cancelled.push({ ...base, cancelled: d.cancelled });
        continue;
      }
      // The body depends on the fields the delivery was queued with as well: deliveries of one
      // event to subscriptions asking for different fields are signed apart; and on whether its
      // owner asked for v1a signatures.
      const shape = r.include_fields ?? '';
      const asymmetric = wantsAsymmetric(r);
      const key = `${r.event_id}\n${shape}\n${d.apiVersion}\n${d.secretEnc}\n${d.previousEnc ?? ''}\n${asymmetric}`;
      let event = events.get(key);
      if (!event) {
        const bodyKey = `${r.event_id}\n${shape}`;
        let body = bodies.get(bodyKey);
        if (!body) bodies.set(bodyKey, (body = Buffer.from(shapePayload(r.payload, r.include_fields))));
        const secrets: SigningSecrets = {
          current: this.secrets.open(d.secretEnc),
          previous: d.previousEnc === undefined ? undefined : this.secrets.open(d.previousEnc),
        };
        event = signEvent(
          secrets,
          {
            eventId: r.event_id,
            topic: r.topic,
            apiVersion: d.apiVersion,
            shopDomain: storeHostname(r.store_name, this.storeDomain),
            triggeredAt: r.event_at,
            body: body.toString(),
          },
          body,
          asymmetric ? signingKeys : undefined,
        );
        events.set(key, event);
      }
      jobs.push({
        ...base,
        webhookId: r.webhook_id,
        topic: r.topic,
        address: d.address,
        origin: this.originOf(d.address),
        owner: ownerOf(r),
        event,
        replay: r.replayed_at !== null,
        enabledAt: r.enabled_at,
      });
    }
    return { jobs, cancelled };
  }

  private originOf(address: string): string {
    let origin = this.origins.get(address);
    if (origin === undefined) {
      if (this.origins.size >= MAX_ORIGINS) this.origins.clear();
      origin = new URL(address).origin;
      this.origins.set(address, origin);
    }
    return origin;
  }
}

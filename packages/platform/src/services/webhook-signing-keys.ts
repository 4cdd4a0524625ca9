// The platform's webhook signing keys (Ed25519, Standard Webhooks `v1a`): the keys that sign now,
// the JWKS that publishes them, and their rotation. Every node reads them from the database, so all
// sign with the same keys; each keeps what it read for `refreshMs` (a minute by default), which
// bounds how long a node goes on signing as before after a rotation. That lag is harmless by
// design: a rotation keeps the replaced key signing, and published, for the whole overlap (a week
// by default), so a receiver that knows either key accepts every delivery meanwhile.
//
// The first key is made on first need (the first opted-in delivery or JWKS request) rather than by
// a migration, which has no master key to seal it with; nodes doing so at once agree on one key
// (see `WebhookSigningKeyRepository.insertFirst`).
import type { Clock } from '../domain/clock.ts';
import { ConflictError, ValidationFailedError } from '../domain/errors.ts';
import {
  generateSigningKey,
  type PublicSigningJwk,
  privateSigningKey,
  publicJwk,
  type SigningKey,
  type SigningKeyState,
  signingKeyState,
} from '../domain/webhook-signing-keys.ts';
import type { SigningKeyRow, WebhookSigningKeyRepository } from '../storage/ports/webhook-signing-keys.ts';
import type { Sealer } from './master-keys.ts';

/** How long a replaced key goes on signing beside its successor unless the rotation says otherwise. */
export const DEFAULT_SIGNING_KEY_OVERLAP_MS = 7 * 24 * 3_600_000;
/** The longest overlap a rotation may ask for. */
export const MAX_SIGNING_KEY_OVERLAP_MS = 90 * 24 * 3_600_000;
const DEFAULT_REFRESH_MS = 60_000;

/** A key as `storegate keys webhook-signing list` shows it (never the private key). */
export interface SigningKeyView {
  kid: string;
  state: SigningKeyState;
  created_at: string;
  /** When a replaced key stops signing and leaves the JWKS. */
  retires_at: string | null;
  jwk: PublicSigningJwk;
}

export interface JsonWebKeySet {
  keys: PublicSigningJwk[];
}

interface Snapshot {
  readAt: number;
  rows: SigningKeyRow[];
}

export class WebhookSigningKeys {
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;
  // Opened private keys by kid: a key's private half never changes, so it is opened once.
  private readonly opened = new Map<string, SigningKey>();
  private readonly refreshMs: number;

  constructor(
    private readonly repo: WebhookSigningKeyRepository,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
    options: { refreshMs?: number } = {},
  ) {
    this.refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
  }

  /** The keys that sign at this moment, newest first (one, or two during an overlap); makes the first one if none exists. */
  async signingKeys(): Promise<SigningKey[]> {
    const now = this.clock();
    const rows = (await this.current(now)).filter((r) => signingKeyState(r, now) !== 'retired');
    return rows.map((r) => this.open(r));
  }

  /** The public keys that sign at this moment, as a JSON Web Key Set (RFC 7517, RFC 8037). */
  async jwks(): Promise<JsonWebKeySet> {
    const now = this.clock();
    const rows = (await this.current(now)).filter((r) => signingKeyState(r, now) !== 'retired');
    return { keys: rows.map((r) => publicJwk(r.kid, r.public_key)) };
  }

  /** Every key kept, newest first, with its state now. */
  async list(): Promise<SigningKeyView[]> {
    const now = this.clock();
    return (await this.repo.all()).map((r) => ({
      kid: r.kid,
      state: signingKeyState(r, now),
      created_at: new Date(r.created_at).toISOString(),
      retires_at: r.retires_at === null ? null : new Date(r.retires_at).toISOString(),
      jwk: publicJwk(r.kid, r.public_key),
    }));
  }

  /**
   * Makes a new key the active one, published and signing at once; the key it replaces signs beside
   * it, and stays published, for `overlapMs`. Refused while an earlier rotation's overlap lasts.
   */
  async rotate(options: { overlapMs?: number } = {}): Promise<{ kid: string; replaced: string; retiresAt: string }> {
    const overlapMs = options.overlapMs ?? DEFAULT_SIGNING_KEY_OVERLAP_MS;
    if (!Number.isInteger(overlapMs) || overlapMs < 0 || overlapMs > MAX_SIGNING_KEY_OVERLAP_MS) {
      throw new ValidationFailedError({ overlap: ['must be between 0 and 90 days'] });
    }
    const now = this.clock();
    const active = (await this.ensureFirst(now)).find((r) => r.active);
    if (!active) throw new ConflictError('no active webhook signing key was found; run the rotation again');
    const next = await this.newKey(now);
    const retiresAt = now + overlapMs;
    const result = await this.repo.rotate({ expectedActive: active.kid, next, retiresAt, now });
    if (result === 'overlapping') {
      throw new ConflictError(
        'a replaced webhook signing key still signs (its overlap has not ended); wait for it, or end it with `storegate keys ' +
          'webhook-signing finish`',
      );
    }
    if (result === 'changed')
      throw new ConflictError('another rotation replaced the webhook signing key meanwhile; this one changed nothing');
    this.snapshot = undefined;
    return { kid: next.kid, replaced: active.kid, retiresAt: new Date(retiresAt).toISOString() };
  }

  /** Ends the overlap now: the replaced keys stop signing and leave the JWKS (deleted). */
  async finish(): Promise<{ retired: string[] }> {
    const retired = await this.repo.finish(this.clock());
    this.snapshot = undefined;
    return { retired };
  }

  /** Deletes keys whose overlap has ended (the worker's hourly round). */
  pruneRetired(): Promise<number> {
    return this.repo.deleteRetired(this.clock());
  }

  private async current(now: number): Promise<SigningKeyRow[]> {
    const s = this.snapshot;
    if (s !== undefined && now - s.readAt < this.refreshMs && now >= s.readAt) return s.rows;
    // One read at a time: the deliveries of a batch wait for the same read.
    this.loading ??= this.ensureFirst(now)
      .then((rows) => {
        this.snapshot = { readAt: now, rows };
        return this.snapshot;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return (await this.loading).rows;
  }

  private async ensureFirst(now: number): Promise<SigningKeyRow[]> {
    const live = await this.repo.live(now);
    if (live.some((r) => r.active)) return live;
    await this.repo.insertFirst(await this.newKey(now));
    return this.repo.live(now);
  }

  private async newKey(now: number) {
    const key = generateSigningKey();
    return { kid: key.kid, public_key: key.publicKey, private_key_enc: await this.sealer.seal(key.privateKeyPkcs8), created_at: now };
  }

  private open(row: SigningKeyRow): SigningKey {
    let key = this.opened.get(row.kid);
    if (key === undefined) {
      // Keys are few (one or two at a time); forgetting them all when many have come and gone is enough.
      if (this.opened.size >= 16) this.opened.clear();
      key = { kid: row.kid, privateKey: privateSigningKey(this.sealer.open(row.private_key_enc)) };
      this.opened.set(row.kid, key);
    }
    return key;
  }
}

// The port on the platform's webhook signing keys (Ed25519): platform-wide, not a store's, so no
// method names a store and none runs inside a store's transaction.

export interface SigningKeyRow {
  kid: string;
  /** Raw public key, base64url. */
  public_key: string;
  /** Sealed PKCS #8 private key. */
  private_key_enc: string;
  /** Whether it is the key that signs alone outside a rotation. */
  active: boolean;
  created_at: number;
  /** When a replaced key stops signing; null on the active key. */
  retires_at: number | null;
}

export type NewSigningKey = Pick<SigningKeyRow, 'kid' | 'public_key' | 'private_key_enc' | 'created_at'>;

export type RotateResult = 'rotated' | 'changed' | 'overlapping';

export interface WebhookSigningKeyRepository {
  /** Every key still signing at `now` (the active one, and replaced ones before `retires_at`), newest first. */
  live(now: number): Promise<SigningKeyRow[]>;
  /** Every key kept, retired ones too, newest first. */
  all(): Promise<SigningKeyRow[]>;
  /**
   * Inserts `key` as the active key unless there is one already (then nothing changes): nodes
   * creating the first key at once end up with one of theirs, the same for all.
   */
  insertFirst(key: NewSigningKey): Promise<void>;
  /**
   * In one transaction: the active key `expectedActive` is replaced by `next` and keeps signing until
   * `retiresAt`; keys retired at `now` are deleted. `'changed'` when `expectedActive` is no longer
   * the active key, `'overlapping'` when a key replaced earlier still signs at `now` (one rotation at
   * a time); nothing changes then.
   */
  rotate(input: { expectedActive: string; next: NewSigningKey; retiresAt: number; now: number }): Promise<RotateResult>;
  /** Ends every overlap at `now` (replaced keys stop signing) and deletes retired keys; returns the kids it retired. */
  finish(now: number): Promise<string[]>;
  /** Deletes the keys retired at `now` (their private keys serve nothing any more); returns how many. */
  deleteRetired(now: number): Promise<number>;
}

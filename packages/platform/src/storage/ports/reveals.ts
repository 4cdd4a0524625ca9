// The port on one-time reveals: a sealed value shown once to the session that made it.

export interface RevealRepository {
  put(input: { idHash: string; sessionHash: string; payloadEnc: string; expiresAt: number; now: number }): Promise<void>;
  /** Deletes the reveal and returns it, in one statement (so it can be taken once). */
  take(idHash: string, sessionHash: string): Promise<{ payload_enc: string; expires_at: number } | undefined>;
}

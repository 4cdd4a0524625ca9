// Randomness, injectable for tests.

/** A source of random bytes (default: `crypto.getRandomValues`). */
export type RandomBytes = (size: number) => Uint8Array;

/** `crypto.getRandomValues` as a {@link RandomBytes}. */
export const cryptoRandomBytes: RandomBytes = (size) => crypto.getRandomValues(new Uint8Array(size));

/** A float in [0, 1) drawn from a {@link RandomBytes} source. */
export function randomFloat(random: RandomBytes): number {
  const b = random(4);
  return ((((b[0] ?? 0) << 24) | ((b[1] ?? 0) << 16) | ((b[2] ?? 0) << 8) | (b[3] ?? 0)) >>> 0) / 2 ** 32;
}

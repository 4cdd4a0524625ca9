// Random bytes for identifiers and secrets, from the operating system's CSPRNG.
import { randomFillSync } from 'node:crypto';

// Random bytes come from the CSPRNG in 4 KB refills handed out in slices (each slice is used once):
// one system call per ~100 tokens instead of one per token.
const POOL_SIZE = 4096;
let pool = Buffer.allocUnsafe(0);
let offset = 0;
export function pooledRandomBytes(n: number): Buffer {
  if (n > POOL_SIZE) return randomFillSync(Buffer.allocUnsafe(n));
  if (offset + n > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_SIZE));
    offset = 0;
  }
  const out = Buffer.from(pool.subarray(offset, offset + n));
  offset += n;
  return out;
}

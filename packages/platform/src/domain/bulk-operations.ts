// Bulk exports of a store resource: the states an operation goes through, how many an owner may
// hold open, and the signed download address (an HMAC under a platform key, with an expiry), so
// the file can be fetched by any HTTP client without the app's token.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ResourceName } from './resources.ts';

export type BulkStatus = 'created' | 'running' | 'completed' | 'failed' | 'canceled';
export const BULK_STATUSES: readonly BulkStatus[] = ['created', 'running', 'completed', 'failed', 'canceled'];
export const BULK_RESOURCES: readonly ResourceName[] = ['products', 'orders', 'customers'];

/** Operations an owner may have created or running in one store at a time. */
export const MAX_OPEN_BULK_OPERATIONS = 2;
/** How long a signed download address stays valid. */
export const DOWNLOAD_URL_TTL_MS = 3_600_000;
/** How long a finished file is kept before the maintenance round deletes it (default). */
export const BULK_FILE_RETENTION_MS = 7 * 86_400_000;
/** Bytes of JSON Lines per stored chunk of a file. */
export const BULK_CHUNK_BYTES = 1024 * 1024;

export function isFinished(status: BulkStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'canceled';
}

/** The text an operation's download address signs: the operation, its store and the expiry. */
function signedText(storeId: number, id: number, expires: number): string {
  return `bulk-download\n${storeId}\n${id}\n${expires}`;
}

export function downloadSignature(key: Buffer, storeId: number, id: number, expires: number): string {
  return createHmac('sha256', key)
    .update(signedText(storeId, id, expires))
    .digest('base64url');
}

export type DownloadCheck = 'ok' | 'bad-signature' | 'expired';

/** Checks a presented signature (constant time) before its expiry, so a forged address learns nothing. */
export function checkDownload(key: Buffer, storeId: number, id: number, expires: number, signature: string, now: number): DownloadCheck {
  const want = Buffer.from(downloadSignature(key, storeId, id, expires));
  const got = Buffer.from(signature);
  if (got.length !== want.length || !timingSafeEqual(got, want)) return 'bad-signature';
  return expires < now ? 'expired' : 'ok';
}

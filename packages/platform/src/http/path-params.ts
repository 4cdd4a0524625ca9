// Ids in paths and query strings, the same rule everywhere: digits only, no leading zero.
import { NotFoundError } from '../domain/errors.ts';

/** A record id from the URL. Anything else cannot name a record, so it is a 404 rather than a 400. */
export function parseId(raw: unknown): number {
  if (typeof raw !== 'string' || !/^[1-9][0-9]{0,15}$/.test(raw)) throw new NotFoundError();
  return Number(raw);
}

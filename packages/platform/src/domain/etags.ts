// Entity tags of Admin API records and the preconditions built from them (RFC 9110 section 8.8.3
// and section 13). A record's tag is made of its id and its stored version, which grows with every
// change, so it differs after any write however close in time; including the id keeps the tag of
// one record from ever satisfying a condition on another.
import { BadRequestError } from './errors.ts';

/** A record as far as its tag goes. */
export interface Versioned {
  id: number;
  version: number;
}

/** The strong ETag of a record, quoted as the header carries it: `"42-3"`. */
export function etagOf(record: Versioned): string {
  return `"${record.id}-${record.version}"`;
}

/**
 * What an If-Match header asks: nothing (no header), that the record exists (`*`), or that its
 * current version is one of `versions` (the listed tags of this record; a tag of another shape or
 * of another record matches nothing, so the list may be empty).
 */
export type IfMatch = { kind: 'any' } | { kind: 'versions'; versions: number[] };

/** Longest If-Match value read: a client sends one or a few tags. */
const MAX_HEADER = 1024;
const OUR_TAG = /^([1-9][0-9]{0,17})-([1-9][0-9]{0,9})$/;

/**
 * Parses If-Match for the record `id`. Throws a 400 naming the header when it is not `*` or a
 * comma-separated list of entity-tags. A weak tag is well formed but never matches: If-Match
 * compares strongly.
 */
export function parseIfMatch(value: string | string[] | undefined, id: number): IfMatch | undefined {
  const tags = entityTags(value, 'If-Match');
  if (tags === undefined) return undefined;
  if (tags === '*') return { kind: 'any' };
  const versions: number[] = [];
  for (const tag of tags) {
    if (tag.weak) continue;
    const ours = OUR_TAG.exec(tag.opaque);
    if (ours && Number(ours[1]) === id) versions.push(Number(ours[2]));
  }
  return { kind: 'versions', versions };
}

/**
 * Whether If-None-Match holds the current tag of `record` (weak comparison, as the header asks), so
 * a GET may answer 304. Throws a 400 for a malformed value.
 */
export function noneMatchHits(value: string | string[] | undefined, record: Versioned): boolean {
  const tags = entityTags(value, 'If-None-Match');
  if (tags === undefined) return false;
  if (tags === '*') return true;
  const current = etagOf(record).slice(1, -1);
  return tags.some((t) => t.opaque === current);
}

/** Whether the record's current version satisfies `condition`. */
export function satisfies(condition: IfMatch | undefined, version: number): boolean {
  return condition === undefined || condition.kind === 'any' || condition.versions.includes(version);
}

function entityTags(value: string | string[] | undefined, header: string): '*' | { weak: boolean; opaque: string }[] | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  const malformed = new BadRequestError(`The ${header} header must be "*" or a comma-separated list of entity tags such as "42-3"`);
  if (text.length > MAX_HEADER) throw new BadRequestError(`The ${header} header must be at most ${MAX_HEADER} characters long`);
  if (text.trim() === '*') return '*';
  const tags: { weak: boolean; opaque: string }[] = [];
  // A list of tags and commas; a tag may itself hold a comma, so the text is scanned, not split.
  // Empty list elements are allowed and ignored (RFC 9110 section 5.6.1).
  const item = /[ \t]*(?:(W\/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(,|$)/y;
  while (item.lastIndex < text.length) {
    const m = item.exec(text);
    if (!m) throw malformed;
    if (m[2] !== undefined) tags.push({ weak: m[1] !== undefined, opaque: m[2] });
    if (m[3] === '') break;
  }
  if (tags.length === 0) throw malformed;
  return tags;
}

/** The conditions a write may carry: If-Match, and (products) the inventory quantity it expects. */
export interface WriteCondition {
  ifMatch?: IfMatch | undefined;
  expectedInventory?: number | undefined;
}

/** The stored versions a write may change, for the WHERE clause; undefined when any will do. */
export function acceptedVersions(condition: WriteCondition | undefined): number[] | undefined {
  return condition?.ifMatch?.kind === 'versions' ? condition.ifMatch.versions : undefined;
}

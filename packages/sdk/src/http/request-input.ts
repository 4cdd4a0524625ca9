// What the SDK accepts where a request is expected: a web `Request`, a Node/Express/Fastify
// request, a raw query string (or URL), `URLSearchParams`, or an already parsed record.
import type { QueryInput } from '../signature/query-signature.ts';

/** A web-standard `Request`, or anything with a raw `url` and `headers` (Node, Express, Fastify). */
export interface RequestLike {
  url: string;
  headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Express keeps the full URL here when the router is mounted on a path. */
  originalUrl?: string;
}

/** A request, or just its query. */
export type RequestOrQuery = RequestLike | QueryInput;

function isRequestLike(input: unknown): input is RequestLike {
  return (
    typeof input === 'object' &&
    input !== null &&
    !(input instanceof URLSearchParams) &&
    typeof (input as RequestLike).url === 'string' &&
    typeof (input as RequestLike).headers === 'object' &&
    (input as RequestLike).headers !== null
  );
}

/** Reads one request header from either header shape. */
export function headerOf(headers: RequestLike['headers'], name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const value = record[name.toLowerCase()] ?? record[name];
  return Array.isArray(value) ? value.join('; ') : (value as string | undefined);
}

/**
 * The query (raw string whenever the input has one, so the SDK parses it itself) and the
 * `Cookie` header of a request or query.
 */
export function readRequestInput(input: RequestOrQuery): { query: QueryInput; cookieHeader: string | undefined } {
  if (isRequestLike(input)) {
    const url = input.originalUrl ?? input.url;
    const q = url.indexOf('?');
    return { query: q === -1 ? '' : url.slice(q + 1), cookieHeader: headerOf(input.headers, 'cookie') };
  }
  return { query: input, cookieHeader: undefined };
}

// The platform family's newer API versions (2026-10 and later) answer every success as
// {"code": "Success", "data": <body>}, where <body> is what the earlier versions answer. The client
// gives its callers <body> in every version, so code written against one version reads the same
// objects, lists and cursors in the next.

/** The first API version whose success bodies are wrapped. */
export const CODED_SINCE_VERSION = '2026-10';

const VERSION_IN_PATH = /^\/openapi\/(\d{4}-\d{2})\//;

/**
 * The body inside the success envelope when `path` is under a wrapping version and the body is
 * one; any other body as it is.
 *
 * @example
 * unwrapSuccess('/openapi/2026-10/products/count', { code: 'Success', data: { count: 3 } }); // { count: 3 }
 * unwrapSuccess('/openapi/2026-01/products/count', { count: 3 }); // { count: 3 }
 */
export function unwrapSuccess(path: string, body: unknown): unknown {
  const version = VERSION_IN_PATH.exec(path)?.[1];
  if (version === undefined || version < CODED_SINCE_VERSION) return body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  return record['code'] === 'Success' && Object.hasOwn(record, 'data') ? record['data'] : body;
}

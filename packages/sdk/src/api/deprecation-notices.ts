// Warnings about a deprecated API version: when an answer carries `Deprecation` (RFC 9745) or
// `Sunset` (RFC 8594), the app's logger hears it once per route (method and path pattern, ids
// replaced), naming the version and the sunset, so a busy app gets one line per call site it has to
// change rather than one per request.
import type { SdkLogger } from '../logging/redacting-logger.ts';

/** Routes warned about, shared by every client one app or `createAdminClient` call builds. */
export class DeprecationNotices {
  readonly #seen = new Set<string>();

  /** Logs once per route when `headers` announce a deprecation or a sunset; true when it logged now. */
  observe(log: SdkLogger, method: string, path: string, headers: Headers): boolean {
    const deprecation = headers.get('deprecation');
    const sunset = headers.get('sunset');
    if (deprecation === null && sunset === null) return false;
    const route = `${method} ${pathPattern(path)}`;
    if (this.#seen.has(route)) return false;
    this.#seen.add(route);
    const version = headers.get('x-service-api-version') ?? versionOf(path);
    const sunsetAt = sunset === null ? undefined : dateOf(sunset);
    log.warn(
      `API version ${version ?? '(unknown)'} is deprecated${sunsetAt ? ` and stops answering on ${sunsetAt}` : ''}: ` +
        `${route} must move to a newer version`,
      { route, apiVersion: version, sunset: sunsetAt, deprecation: deprecation ?? undefined },
    );
    return true;
  }
}

/** `/openapi/{version}/products/{id}` for `/openapi/2022-01/products/123`. */
export function pathPattern(path: string): string {
  return path
    .split('/')
    .map((segment, i, all) => {
      if (i === 2 && all[1] === 'openapi') return '{version}';
      // Ids: numbers, or long tokens holding a digit (uuids, opaque ids).
      if (/^\d+$/.test(segment) || (segment.length >= 16 && /\d/.test(segment))) return '{id}';
      return segment;
    })
    .join('/');
}

function versionOf(path: string): string | undefined {
  return /^\/openapi\/([^/]+)/.exec(path)?.[1];
}

/** The sunset as an ISO 8601 day and time, or the header itself when it is not a date. */
function dateOf(value: string): string {
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? value.slice(0, 64) : new Date(ms).toISOString();
}

/**
 * `fetchFn` with every answer under `/openapi/` looked at by `notices`: the Admin API clients are
 * handed this, so the client itself needs no knowledge of it.
 */
export function observingFetch(fetchFn: typeof fetch, log: SdkLogger, notices: DeprecationNotices): typeof fetch {
  return async (input, init) => {
    const response = await fetchFn(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const path = new URL(url).pathname;
    if (path.startsWith('/openapi/')) {
      const method = init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
      notices.observe(log, method.toUpperCase(), path, response.headers);
    }
    return response;
  };
}

// The address of an Admin API call: `{origin}/openapi/{version}/{resource}`, or `{origin}{path}`
// for a path starting with `/`, with the query's values (arrays as repeated names, null and
// undefined left out).
import type { QueryValue } from '../signature/query-signature.ts';

export function apiUrl(origin: string, apiVersion: string, resource: string, query?: Readonly<Record<string, QueryValue>>): string {
  const path = resource.startsWith('/') ? resource : `/openapi/${apiVersion}/${resource.replace(/^\/+/, '')}`;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value as readonly string[]) params.append(name, v);
    else params.append(name, String(value));
  }
  const search = params.toString();
  return `${origin}${path}${search ? `?${search}` : ''}`;
}

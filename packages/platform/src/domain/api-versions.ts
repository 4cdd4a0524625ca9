// Admin API versions (year-month): the version is data, one route table serves them all. They
// differ in the pagination convention (`older` pages with `cursor` and `pre_cursor`, `newer` with
// `cursor` and `has_more`) and in the success envelope: `bare` answers the body itself, `coded`
// (the platform family's newer versions) wraps every success body as {"code": "Success", "data":
// <the body a bare version answers>}, so its clients find the `code` they look for and a list's
// cursor and has_more sit in `data`. Errors have one shape in every version ({code, message,
// request_id}, whose code is never "Success").

export type PaginationConvention = 'older' | 'newer';
export type SuccessEnvelope = 'bare' | 'coded';

export const API_VERSIONS = {
  '2022-01': { pagination: 'older', envelope: 'bare' },
  '2025-06': { pagination: 'newer', envelope: 'bare' },
  '2026-01': { pagination: 'newer', envelope: 'bare' },
  '2026-10': { pagination: 'newer', envelope: 'coded' },
} as const satisfies Record<string, { pagination: PaginationConvention; envelope: SuccessEnvelope }>;

export type ApiVersion = keyof typeof API_VERSIONS;
export const SUPPORTED_VERSIONS = Object.keys(API_VERSIONS) as ApiVersion[];
/**
 * The version that webhook deliveries without a subscription of their own name, the OpenAPI
 * document carries, and the CLI subscribes with: the newest one whose bodies are bare, so that
 * nothing written before the coded envelope changes under an app.
 */
export const CURRENT_VERSION: ApiVersion = '2026-01';
/** The newest version. */
export const LATEST_VERSION: ApiVersion = '2026-10';

export function isApiVersion(v: string): v is ApiVersion {
  return Object.hasOwn(API_VERSIONS, v);
}

/** Whether `version` is `since` or a later one (year-month strings sort in time order). */
export function versionAtLeast(version: ApiVersion, since: ApiVersion): boolean {
  return version >= since;
}

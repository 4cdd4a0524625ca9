// Admin API versions (year-month): the version is data, one route table serves them all. They
// differ only in the pagination convention: `older` pages with `cursor` and `pre_cursor`, `newer`
// with `cursor` and `has_more`.

export type PaginationConvention = 'older' | 'newer';

export const API_VERSIONS = {
  '2022-01': { pagination: 'older' },
  '2025-06': { pagination: 'newer' },
  '2026-01': { pagination: 'newer' },
} as const satisfies Record<string, { pagination: PaginationConvention }>;

export type ApiVersion = keyof typeof API_VERSIONS;
export const SUPPORTED_VERSIONS = Object.keys(API_VERSIONS) as ApiVersion[];
export const CURRENT_VERSION: ApiVersion = '2026-01';

export function isApiVersion(v: string): v is ApiVersion {
  return Object.hasOwn(API_VERSIONS, v);
}

/** Whether `version` is `since` or a later one (year-month strings sort in time order). */
export function versionAtLeast(version: ApiVersion, since: ApiVersion): boolean {
  return version >= since;
}

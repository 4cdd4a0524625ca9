// How the platform watches deprecated Admin API versions: how often a node writes the calls it
// counted, how long a node may serve from its copy of the brown-out schedule, and how many days
// before a version's sunset the apps still calling it are told.
import { int } from './parsers.ts';
import type { ApiHealthSettings, RawConfig } from './types.ts';

export function parseApiHealthSettings(raw: Pick<RawConfig, 'apiUsageFlush' | 'brownoutRefresh' | 'apiNoticeDays'>): ApiHealthSettings {
  return {
    usageFlushMs: int('--api-usage-flush', raw.apiUsageFlush, 60_000, 100, 3_600_000),
    brownoutRefreshMs: int('--brownout-refresh', raw.brownoutRefresh, 10_000, 100, 600_000),
    noticeDays: int('--api-notice-days', raw.apiNoticeDays, 30, 1, 365),
  };
}

// The API health flags of `serve` and `worker`: how often a node writes its counts of calls to
// deprecated versions, how long it serves from its copy of the brown-out schedule, and when the
// notice before a sunset goes out (the worker's maintenance round sends it, so the worker reads
// the version lifecycle too).
import { Option } from 'commander';
import type { RawConfig } from '@storegate/platform';

export interface ApiHealthOptions {
  apiUsageFlush?: string;
  brownoutRefresh?: string;
  apiNoticeDays?: string;
  deprecation202201?: string;
  sunset202201?: string;
}

export function noticeDaysOption(): Option {
  return new Option('--api-notice-days <days>', 'days before a version sunset when app/api_version_deprecated goes out (default 30)').env(
    'API_NOTICE_DAYS',
  );
}

export function apiUsageFlushOption(): Option {
  return new Option('--api-usage-flush <ms>', 'how often a node writes its counts of calls to deprecated versions (default 60000)').env(
    'API_USAGE_FLUSH_MS',
  );
}

export function brownoutRefreshOption(): Option {
  return new Option('--brownout-refresh <ms>', 'a brown-out change reaches every node within this (default 10000)').env(
    'BROWNOUT_REFRESH_MS',
  );
}

/** The worker reads the version lifecycle as `serve` does, to know when a sunset is near. */
export function lifecycleOptions(): Option[] {
  return [
    new Option('--deprecation-2022-01 <date>', 'when API version 2022-01 was deprecated, YYYY-MM-DD (default 2025-06-01)').env(
      'DEPRECATION_2022_01',
    ),
    new Option('--sunset-2022-01 <date>', 'when API version 2022-01 stops answering, YYYY-MM-DD (default 2027-06-01)').env(
      'SUNSET_2022_01',
    ),
  ];
}

export function apiHealthConfig(opts: ApiHealthOptions): RawConfig {
  return {
    apiUsageFlush: opts.apiUsageFlush,
    brownoutRefresh: opts.brownoutRefresh,
    apiNoticeDays: opts.apiNoticeDays,
    deprecation202201: opts.deprecation202201,
    sunset202201: opts.sunset202201,
  };
}

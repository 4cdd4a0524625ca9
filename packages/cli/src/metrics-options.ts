// The /metrics flags `serve` and `worker` share.
import { Option } from 'commander';

export function metricsTokenOption(): Option {
  return new Option('--metrics-token <token>', 'bearer token /metrics requires (Authorization: Bearer <token>)').env('METRICS_TOKEN');
}

/**
 * A plain flag: commander would turn any METRICS_PUBLIC value into true, "false" included, so the
 * variable is read by `metricsPublic` and checked by the configuration instead.
 */
export function metricsPublicOption(): Option {
  return new Option('--metrics-public', 'serve /metrics without a token in production (its port is private); env METRICS_PUBLIC=true');
}

/** The flag if given, else METRICS_PUBLIC as written (the configuration accepts true/false, 1/0, yes/no). */
export function metricsPublic(flag: boolean | undefined): string | boolean | undefined {
  return flag === true ? true : process.env.METRICS_PUBLIC;
}

// The /metrics flags `serve` and `worker` share.
import type { Platform } from '@storegate/platform';
import { type Command, Option } from 'commander';

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

export interface WorkerMetricsOptions {
  metricsPort?: string;
  metricsHost?: string;
  metricsToken?: string;
  metricsPublic?: boolean;
}

/** The worker's own /metrics and probes: off unless --metrics-port is given. */
export function workerMetricsOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--metrics-port <port>', 'serve /metrics, /healthz and /readyz on this port (0: any free one; default: none)').env(
        'METRICS_PORT',
      ),
    )
    .addOption(new Option('--metrics-host <address>', 'address the metrics port listens on (default 127.0.0.1)').env('METRICS_HOST'))
    .addOption(metricsTokenOption())
    .addOption(metricsPublicOption());
}

/** The worker's metrics flags as raw configuration. */
export function workerMetricsConfig(opts: WorkerMetricsOptions) {
  return {
    metricsPort: opts.metricsPort,
    metricsHost: opts.metricsHost,
    metricsToken: opts.metricsToken,
    metricsPublic: metricsPublic(opts.metricsPublic),
  };
}

/** Starts listening when the platform was built with its probe server; returns the metrics URL. */
export async function listenForScrapes(platform: Pick<Platform, 'probes' | 'config'>): Promise<string | undefined> {
  const listener = platform.config.metricsListener;
  if (!platform.probes || !listener) return undefined;
  await platform.probes.listen({ host: listener.host, port: listener.port });
  const address = platform.probes.server.address();
  const port = typeof address === 'object' && address ? address.port : listener.port;
  const host = listener.host.includes(':') ? `[${listener.host}]` : listener.host;
  return `http://${host}:${port}/metrics`;
}

// How `serve` and `worker` stop: the flags that shape a graceful shutdown, and the signals that
// start one. The shutdown itself is the platform's (Platform.shutdown); this only wires signals.
import { constants } from 'node:os';
import { Option, type Command } from 'commander';

export const SIGNALS_HELP = `
Signals:
  SIGTERM or SIGINT stops gracefully: /readyz answers 503 at once, requests keep being served for
  --drain-delay, then the listener closes; requests in flight and webhook attempts get
  --shutdown-timeout to finish, the worker releases its claims, and the process exits 0.
  A second SIGTERM or SIGINT exits at once (code 143 or 130), cutting whatever is in flight.`;

export const WORKER_SIGNALS_HELP = `
Signals:
  SIGTERM or SIGINT stops gracefully: no more claims, attempts in flight get --shutdown-timeout to
  finish and are recorded, the remaining claims are released for other workers, then exit 0.
  A second SIGTERM or SIGINT exits at once (code 143 or 130).`;

/** `--shutdown-timeout` and `--webhook-claim-lease`, which `serve` and `worker` share. */
export function stopOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--shutdown-timeout <duration>',
        'on SIGTERM/SIGINT, time requests in flight and webhook attempts get to finish, e.g. "10s" (default 10s)',
      ).env('SHUTDOWN_TIMEOUT'),
    )
    .addOption(
      new Option(
        '--webhook-claim-lease <duration>',
        "how long a worker's claim on a delivery lasts, renewed while it holds it; a dead worker's deliveries wait this long (default 30s)",
      ).env('WEBHOOK_CLAIM_LEASE'),
    );
}

/** `--drain-delay`: `serve` only (a worker takes no requests). */
export function drainDelayOption(): Option {
  return new Option(
    '--drain-delay <duration>',
    'on SIGTERM/SIGINT, time /readyz answers 503 while requests are still served, before the listener closes ' +
      '(default 5s in production, 0 in development)',
  ).env('DRAIN_DELAY');
}

/**
 * The first SIGTERM or SIGINT runs `stop` and exits 0 once it is done (1 if it failed); a second
 * one exits at once with 128 + the signal's number, for an operator who will not wait.
 */
export function stopOnSignals(stop: (signal: NodeJS.Signals) => Promise<unknown>, say: (line: string) => void): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      say(`${signal} again: exiting at once`);
      process.exit(128 + (constants.signals[signal] ?? 15));
    }
    stopping = true;
    stop(signal).then(
      () => process.exit(0),
      (err: unknown) => {
        say(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

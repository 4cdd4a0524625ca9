// How `serve` writes its logs: readable lines in a terminal during development, JSON otherwise
// (production, or stdout piped to a file or a log collector), unless --log-format says.
import { createRequire } from 'node:module';
import { Option } from 'commander';
import type { DestinationStream } from 'pino';
import type PinoPretty from 'pino-pretty';

// pino-pretty is loaded only when a process prints pretty logs: a production node (JSON logs)
// never holds it.
const require = createRequire(import.meta.url);

export function logFormatOption(): Option {
  return new Option(
    '--log-format <format>',
    'pretty (one readable line per request) or json (default: pretty in development when stdout is a terminal, json otherwise)',
  ).env('LOG_FORMAT');
}

/** The format when none is given: JSON for machines (production, or output not to a terminal). */
export function defaultLogFormat(mode: string | undefined, stdoutIsTerminal: boolean): 'pretty' | 'json' {
  return mode === 'production' || !stdoutIsTerminal ? 'json' : 'pretty';
}

/**
 * pino-pretty's prettifier as the server's log stream: the same records, redactions and
 * serializers as the JSON lines (so no secret reaches either), printed as one line each.
 */
export function prettyLogStream(
  destination: NodeJS.WritableStream = process.stdout,
  colorize = process.stdout.isTTY === true,
): DestinationStream {
  const pinoPretty = require('pino-pretty') as typeof PinoPretty;
  return pinoPretty({
    destination,
    colorize,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,reqId',
    singleLine: true,
    sync: true,
  });
}

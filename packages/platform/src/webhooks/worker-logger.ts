// The few log calls the delivery worker makes; pino's logger fits this shape, and tests can pass
// a recorder or nothing at all.

export interface WorkerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const silentLogger: WorkerLogger = { info() {}, warn() {}, error() {} };

/** The message of something thrown, in the `{ err: { message } }` shape the worker logs. */
export function errorFields(err: unknown): { message: string } {
  return { message: err instanceof Error ? err.message : String(err) };
}

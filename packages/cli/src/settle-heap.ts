// One full garbage collection shortly after `serve` has started. Start-up leaves V8's heap holding
// what compiling the modules, migrating and registering routes threw away, in a young generation
// grown to its largest; nothing collects it while the node waits for its first requests (Node runs
// no idle-time collection), so an idle node would keep it resident indefinitely: about 7 MiB of
// heap and the young generation's pages. One collection once start-up is over gives them back.
// Node offers no call for it without --expose-gc, which would put `gc` on every global object; the
// flag set here gives it only to contexts created afterwards, and the one created here is used for
// nothing else.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Late enough that the work start-up set going (the worker's first poll, timers) is done. */
export const SETTLE_AFTER_MS = 2000;

/** Collects the heap once. */
export function settleHeap(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  gc?.();
}

/** settleHeap() after SETTLE_AFTER_MS, without keeping the process alive for it. */
export function settleHeapSoon(): void {
  setTimeout(settleHeap, SETTLE_AFTER_MS).unref();
}

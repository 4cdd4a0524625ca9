// The one collection `serve` makes after start-up: it collects without putting `gc` on the global
// object the platform's code runs in.
import { expect, it } from 'vitest';
import { settleHeap } from '../src/settle-heap.ts';

it('collects the heap, and gc stays off the global object', async () => {
  // Garbage only a collection reclaims: a weakly held object nothing else references (a new
  // WeakRef keeps its target until the current job ends, hence the turn of the event loop).
  let target: object | undefined = { payload: new Array(1000).fill(1) };
  const ref = new WeakRef(target);
  target = undefined;
  await new Promise((resolve) => setImmediate(resolve));
  settleHeap();
  expect(ref.deref()).toBeUndefined();
  expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
});

// At most one flush in flight: callers that arrive while one runs share the next one, which starts
// when the running one ends (it covers everything committed before it starts). A burst of N
// commits costs two flushes instead of N.

export function coalescedFlush(flush: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const start = (): Promise<void> => {
    running = flush().finally(() => {
      running = undefined;
    });
    return running;
  };
  return () => {
    if (!running) return start();
    queued ??= running
      .catch(() => {})
      .then(() => {
        queued = undefined;
        return running ?? start();
      });
    return queued;
  };
}

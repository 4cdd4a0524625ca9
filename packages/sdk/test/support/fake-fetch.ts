// A `fetch` that answers from a handler function and records every call; no sockets.

export interface RecordedCall {
  method: string;
  url: string;
  path: string;
  search: URLSearchParams;
  headers: Headers;
  body: string | undefined;
}

export type FakeHandler = (call: RecordedCall, signal: AbortSignal | undefined) => Response | Promise<Response>;

export interface FakeFetch {
  fetch: typeof fetch;
  calls: RecordedCall[];
}

export function fakeFetch(handler: FakeHandler): FakeFetch {
  const calls: RecordedCall[] = [];
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const parsed = new URL(url);
    const call: RecordedCall = {
      method: init?.method ?? 'GET',
      url,
      path: parsed.pathname,
      search: parsed.searchParams,
      headers: new Headers(init?.headers),
      body: typeof init?.body === 'string' ? init.body : undefined,
    };
    calls.push(call);
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) throw signal.reason;
    return await new Promise<Response>((resolve, reject) => {
      signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')), { once: true });
      Promise.resolve(handler(call, signal)).then(resolve, reject);
    });
  }) as typeof fetch;
  return { fetch: fetchFn, calls };
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** A clock frozen at `ms`, moved by hand. */
export function frozenClock(ms: number) {
  const clock = {
    ms,
    now: () => clock.ms,
    advance(seconds: number) {
      clock.ms += seconds * 1000;
    },
  };
  return clock;
}

/** A sleep that records every delay and returns at once (advancing the clock when given). */
export function recordingSleep(clock?: { ms: number }) {
  const delays: number[] = [];
  const sleep = async (ms: number, signal?: AbortSignal) => {
    if (signal?.aborted) throw signal.reason;
    delays.push(ms);
    if (clock) clock.ms += ms;
  };
  return { sleep, delays };
}

/** Deterministic "random" bytes. */
export function fixedRandom(byte = 0x80) {
  return (size: number) => new Uint8Array(size).fill(byte);
}

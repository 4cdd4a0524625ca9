// One HTTP exchange through the injected `fetch`: timeout, caller's AbortSignal, body read inside
// the same deadline, and failures turned into NetworkError / TimeoutError / AbortedError.
import { AbortedError, NetworkError, TimeoutError } from '../errors.ts';

/** What an exchange returns: status, headers and the body as text. */
export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
}

/** One request. */
export interface HttpRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

const TIMED_OUT = Symbol('timed out');

/** Sends a request and reads its body, within `timeoutMs`. */
export async function exchange(fetchFn: typeof fetch, request: HttpRequest): Promise<HttpResult> {
  if (request.signal?.aborted) throw new AbortedError({ cause: request.signal.reason });
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(TIMED_OUT);
  }, request.timeoutMs);
  const onAbort = () => controller.abort(request.signal?.reason);
  request.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await fetchFn(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: controller.signal,
      redirect: 'manual',
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text };
  } catch (cause) {
    if (timedOut) throw new TimeoutError(request.timeoutMs, { method: request.method, cause });
    if (request.signal?.aborted) throw new AbortedError({ cause });
    const reason =
      cause instanceof Error ? `${cause.message}${cause.cause instanceof Error ? `: ${cause.cause.message}` : ''}` : String(cause);
    throw new NetworkError(`${request.method} request failed before an answer: ${reason}`, { method: request.method, cause });
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener('abort', onAbort);
  }
}

/** Parses a JSON body; `undefined` when empty or not JSON. */
export function parseJsonBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// Errors Node meets before there is a request to answer (headers too large, a malformed request,
// a client too slow to send its request): the answer goes straight onto the socket, says
// `Connection: close` so a keep-alive client never sends its next request on this connection,
// and the connection is closed once the answer is flushed. As far as the request line can be read
// it is honoured: the answer to a HEAD has no body, and one under `/openapi/{version}/` names the
// version like every other answer there.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { apiVersionOfPath } from '../admin-api/api-headers.ts';

const ANSWERS: Record<string, [status: number, reason: string, message: string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request took too long to arrive'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers are too large'],
};
const MALFORMED: [number, string, string] = [400, 'Bad Request', 'Malformed HTTP request'];

/** What Node hands over with a parse error: the bytes it was parsing, and how far it got in them. */
type ClientError = Error & { code?: string; rawPacket?: unknown; bytesParsed?: unknown };

/**
 * The start of a request line (`METHOD target`), malformed or not, at the start of a line: a header
 * line never has a space before its colon. The last one before the error is the failing request's.
 */
const REQUEST_LINE = /^([A-Z]+) (\S*)/gm;

/**
 * The method and target of the request that failed, where they can be known: those of a request
 * whose headers were read (a body too slow to arrive), else the last request line in the bytes
 * being parsed when the error came. Headers sent in many pieces may leave it unknown.
 */
export function failedRequestLine(
  err: ClientError,
  inFlight: (ServerResponse & { req?: IncomingMessage }) | null | undefined,
): { method: string; target: string } | undefined {
  if (inFlight?.req?.method !== undefined && inFlight.req.url !== undefined)
    return { method: inFlight.req.method, target: inFlight.req.url };
  if (!Buffer.isBuffer(err.rawPacket)) return undefined;
  const end = typeof err.bytesParsed === 'number' ? Math.min(err.bytesParsed, err.rawPacket.length) : err.rawPacket.length;
  let last: RegExpExecArray | null = null;
  for (const match of err.rawPacket.toString('latin1', 0, end).matchAll(REQUEST_LINE)) last = match;
  return last ? { method: last[1]!, target: last[2]! } : undefined;
}

export function clientErrorHandler(this: FastifyInstance, err: ClientError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, message] = ANSWERS[err.code ?? ''] ?? MALFORMED;
  this.log.debug({ code: err.code, status }, 'client error');
  // An answer already under way on this socket (a handler that replied before the body arrived)
  // must not be corrupted by a second status line.
  const inFlight = (socket as Socket & { _httpMessage?: (ServerResponse & { req?: IncomingMessage }) | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const request = failedRequestLine(err, inFlight);
  const version = request ? apiVersionOfPath(request.target) : undefined;
  const body = JSON.stringify({ code: 'BadRequest', message });
  // A HEAD is answered with the fields a GET would get, its Content-Length included, and no body
  // (RFC 9110 section 9.3.2): a client reads nothing after the fields of an answer to its HEAD.
  const head = request?.method === 'HEAD';
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n${version ? `X-Service-Api-Version: ${version}\r\n` : ''}\r\n${head ? '' : body}`,
  );
}

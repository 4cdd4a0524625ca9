// Errors Node meets before there is a request to answer (headers too large, a malformed request,
// a client too slow to send its request): the answer goes straight onto the socket, says
// `Connection: close` so a keep-alive client never sends its next request on this connection,
// and the connection is closed once the answer is flushed.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

const ANSWERS: Record<string, [status: number, reason: string, message: string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request took too long to arrive'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers are too large'],
};
const MALFORMED: [number, string, string] = [400, 'Bad Request', 'Malformed HTTP request'];

export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, message] = ANSWERS[err.code ?? ''] ?? MALFORMED;
  this.log.debug({ code: err.code, status }, 'client error');
  // An answer already under way on this socket (a handler that replied before the body arrived)
  // must not be corrupted by a second status line.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ code: 'BadRequest', message });
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

// The success envelope of the coded API versions (see domain/api-versions.ts): a 2xx JSON body is
// sent as {"code": "Success", "data": <body>}. Done on send, on the serialized body, so that every
// Admin API route (lists whose JSON the database wrote, replays of stored answers) gets it alike and
// the answers stored for Idempotency-Key replays stay in the bare form of the request's handler.
import type { FastifyInstance } from 'fastify';
import { API_VERSIONS } from '../../domain/api-versions.ts';

const HEAD = Buffer.from('{"code":"Success","data":');
const TAIL = Buffer.from('}');

export function registerSuccessEnvelope(api: FastifyInstance): void {
  // Callback style (no promise per call): this runs on every Admin API answer.
  api.addHook('onSend', (req, reply, payload, done) => {
    const version = req.apiVersion;
    if (version === undefined || API_VERSIONS[version].envelope !== 'coded' || reply.statusCode < 200 || reply.statusCode >= 300)
      return done(null, payload);
    if (!/^application\/json\b/i.test(String(reply.getHeader('content-type') ?? ''))) return done(null, payload);
    if (typeof payload === 'string' && payload !== '') return done(null, `${HEAD}${payload}${TAIL}`);
    if (Buffer.isBuffer(payload) && payload.length > 0) return done(null, Buffer.concat([HEAD, payload, TAIL]));
    done(null, payload);
  });
}

// Token-endpoint request parameters: form or JSON body, client credentials in the body or Basic.
import type { FastifyRequest } from 'fastify';
import { InvalidClient, InvalidRequest } from '../../domain/errors.ts';

export function bodyParams(req: FastifyRequest): Record<string, string> {
  const body = req.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new InvalidRequest('the body must be a form or a JSON object');
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value === 'string') out[key] = value;
    else if (typeof value === 'number') out[key] = String(value);
    else if (value !== null && value !== undefined)
      throw new InvalidRequest(`parameter ${key.slice(0, 40)} must be given once, as a string`);
  }
  return out;
}

/** RFC 6749 section 2.3.1: HTTP Basic (form-urlencoded id and secret) or client_id/client_secret in the body, not both. */
export function clientCredentials(
  req: FastifyRequest,
  params: Record<string, string>,
): { clientId: string | undefined; clientSecret: string | undefined } {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const m = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header.trim());
    if (!m) throw new InvalidClient('unsupported Authorization header; use Basic');
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new InvalidClient('malformed Basic credentials');
    if (params.client_secret !== undefined) throw new InvalidRequest('send client credentials either in the body or with Basic, not both');
    let clientId: string;
    let clientSecret: string;
    try {
      clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      clientSecret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    } catch {
      throw new InvalidClient('malformed Basic credentials');
    }
    if (params.client_id !== undefined && params.client_id !== clientId)
      throw new InvalidRequest('client_id in the body differs from the Basic credentials');
    return { clientId, clientSecret };
  }
  return { clientId: params.client_id, clientSecret: params.client_secret };
}

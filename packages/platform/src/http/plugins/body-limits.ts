// Request bodies: how large each route takes, and how deeply nested and how wide its JSON may be.
// A body is judged before it is parsed: a size limit per route (pages and forms take small bodies
// whatever their type; the Admin API keeps the server's larger limit), and a single pass over the
// JSON text that counts nesting and the fields of each object outside strings, so a megabyte of
// `[[[[…` or of one object's ninety thousand fields costs one scan, not a parse.
import type { FastifyInstance } from 'fastify';
import { BadRequestError, ValidationFailedError } from '../../domain/errors.ts';

/** Deepest nesting of arrays and objects a JSON body may have (the API's own bodies need a few). */
export const MAX_JSON_DEPTH = 64;
/**
 * Most fields one JSON object of a body may have. No body of the platform takes more than a few
 * dozen; parsing an object of many thousands costs far more per byte than any other JSON.
 */
export const MAX_JSON_FIELDS = 1000;
/** Body limit of the page and form routes (login, consent, dashboard forms), in bytes. */
export const FORM_BODY_LIMIT = 64 * 1024;

const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** What a JSON text has too much of, judged without parsing it. */
export type JsonExcess = 'depth' | 'fields';

/**
 * Whether `text` nests arrays and objects deeper than `maxDepth`, or has an object of more than
 * `maxFields` fields; brackets and colons inside strings do not count. Outside strings a colon only
 * ever separates a field's name from its value, so the colons of each open object are its fields.
 */
export function jsonExcess(text: string, maxDepth: number, maxFields: number): JsonExcess | undefined {
  // Per open level: whether it is an object, and how many fields it has had so far.
  const isObject = new Uint8Array(maxDepth + 1);
  const fields = new Uint32Array(maxDepth + 1);
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return 'depth';
      isObject[depth] = c === OPEN_OBJECT ? 1 : 0;
      fields[depth] = 0;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth > 0) depth--;
    } else if (c === COLON && depth > 0 && isObject[depth] === 1) {
      const n = (fields[depth] ?? 0) + 1;
      if (n > maxFields) return 'fields';
      fields[depth] = n;
    }
  }
  return undefined;
}

export function registerBodyLimits(app: FastifyInstance): void {
  // Fastify's own JSON parser (prototype-poisoning checks included) runs after the scan.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // A DELETE takes no body. Clients that label every request as JSON (the SDK among them) send
    // one with Content-Type and nothing after the headers: that is a DELETE without a body, not
    // malformed JSON. An empty body on any other method still is.
    if (text === '' && req.method === 'DELETE') {
      done(null, undefined);
      return;
    }
    const excess = jsonExcess(text, MAX_JSON_DEPTH, MAX_JSON_FIELDS);
    if (excess === 'depth') {
      done(new BadRequestError(`Request body is nested too deeply: at most ${MAX_JSON_DEPTH} levels of arrays and objects`), undefined);
      return;
    }
    if (excess === 'fields') {
      // The Admin API answers a body its schemas cannot take as a validation failure, like any
      // other unknown field; elsewhere (OAuth, forms) it is a bad request.
      const message = `has an object of more than ${MAX_JSON_FIELDS} fields`;
      done(
        req.routeOptions.config?.api ? new ValidationFailedError({ body: [message] }) : new BadRequestError(`Request body ${message}`),
        undefined,
      );
      return;
    }
    parseJson(req, text, done);
  });
  // Every route without a limit of its own, except the Admin API's, is a page or a form.
  app.addHook('onRoute', (route) => {
    if (route.bodyLimit === undefined && !route.config?.api) route.bodyLimit = FORM_BODY_LIMIT;
  });
}

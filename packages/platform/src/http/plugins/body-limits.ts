// Request bodies: how large each route takes, and how deeply nested its JSON may be. A body is
// judged before it is parsed: a size limit per route (pages and forms take small bodies whatever
// their type; the Admin API keeps the server's larger limit), and a single pass over the JSON text
// that counts nesting outside strings, so a megabyte of `[[[[…` costs one scan, not a parse.
import type { FastifyInstance } from 'fastify';
import { BadRequestError } from '../../domain/errors.ts';

/** Deepest nesting of arrays and objects a JSON body may have (the API's own bodies need a few). */
export const MAX_JSON_DEPTH = 64;
/** Body limit of the page and form routes (login, consent, dashboard forms), in bytes. */
export const FORM_BODY_LIMIT = 64 * 1024;

const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** True when `text` nests arrays and objects deeper than `max` (brackets inside strings do not count). */
export function nestsDeeperThan(text: string, max: number): boolean {
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
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

export function registerBodyLimits(app: FastifyInstance): void {
  // Fastify's own JSON parser (prototype-poisoning checks included) runs after the depth scan.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      done(new BadRequestError(`Request body is nested too deeply: at most ${MAX_JSON_DEPTH} levels of arrays and objects`), undefined);
      return;
    }
    parseJson(req, text, done);
  });
  // Every route without a limit of its own, except the Admin API's, is a page or a form.
  app.addHook('onRoute', (route) => {
    if (route.bodyLimit === undefined && !route.config?.api) route.bodyLimit = FORM_BODY_LIMIT;
  });
}

// Static files of the server-rendered pages: the style sheet, the one script and the icon (the CSP allows
// styles and scripts from 'self' only, nothing inline).
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { faviconIco, faviconSvg } from './favicon.ts';

const CSS = readFileSync(new URL('./app.css', import.meta.url), 'utf8');
const COPY_BUTTON_JS = readFileSync(new URL('./copy-button.js', import.meta.url), 'utf8');
const FAVICON_SVG = faviconSvg();
const FAVICON_ICO = faviconIco();

export function registerAssetRoutes(app: FastifyInstance): void {
  app.get('/assets/app.css', { config: { area: 'any' } }, async (_req, reply) => {
    return reply.header('Cache-Control', 'public, max-age=3600').type('text/css; charset=utf-8').send(CSS);
  });
  app.get('/assets/copy-button.js', { config: { area: 'any' } }, async (_req, reply) => {
    return reply.header('Cache-Control', 'public, max-age=3600').type('text/javascript; charset=utf-8').send(COPY_BUTTON_JS);
  });
  // The icon on every host a page is served from; /favicon.ico is where browsers look unasked.
  app.get('/assets/favicon.svg', { config: { area: 'any' } }, async (_req, reply) => {
    return reply.header('Cache-Control', 'public, max-age=86400').type('image/svg+xml').send(FAVICON_SVG);
  });
  app.get('/favicon.ico', { config: { area: 'any' } }, async (_req, reply) => {
    return reply.header('Cache-Control', 'public, max-age=86400').type('image/x-icon').send(FAVICON_ICO);
  });
}

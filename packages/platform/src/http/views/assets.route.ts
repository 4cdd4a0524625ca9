// Static scripts of the server-rendered pages (CSP: script-src 'self', no inline scripts).
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const COPY_BUTTON_JS = readFileSync(new URL('./copy-button.js', import.meta.url), 'utf8');

export function registerAssetRoutes(app: FastifyInstance): void {
  app.get('/assets/copy-button.js', { config: { area: 'any' } }, async (_req, reply) => {
    return reply.header('Cache-Control', 'public, max-age=3600').type('text/javascript; charset=utf-8').send(COPY_BUTTON_JS);
  });
}

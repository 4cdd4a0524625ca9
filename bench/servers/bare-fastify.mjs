// The memory benchmarks' baseline: plain JavaScript (no TypeScript loader in the process), a bare
// Fastify server with the form-body plugin, answering the load's three routes from memory with
// bodies of the same size: a page of 50 products, a created product, a token response.
// Sends {port} over IPC once listening; exits when the parent disconnects.
import { randomBytes } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify from 'fastify';

const product = (id) => ({
  id,
  title: `Product ${id}`,
  body_html: '<p>A product of the bench store.</p>',
  vendor: 'Bench',
  product_type: 'Thing',
  price: '10.00',
  inventory_quantity: 5,
  status: 'active',
  created_at: '2026-11-24T00:00:00.000Z',
  updated_at: '2026-11-24T00:00:00.000Z',
});
const page = Buffer.from(JSON.stringify({ data: Array.from({ length: 50 }, (_, i) => product(i + 1)), next_cursor: 'x'.repeat(80) }));

const app = Fastify({ logger: false });
await app.register(formbody);
app.get('/openapi/:version/products', async (_req, reply) => reply.type('application/json; charset=utf-8').send(page));
app.post('/openapi/:version/products', async (req, reply) => reply.code(201).send({ data: { ...product(1), title: req.body.title } }));
app.post('/admin/oauth/token', async (req, reply) => {
  if (req.body.grant_type !== 'refresh_token') return reply.code(400).send({ error: 'unsupported_grant_type' });
  return {
    access_token: `at_${randomBytes(24).toString('base64url')}`,
    token_type: 'bearer',
    expires_in: 3600,
    refresh_token: `rt_${randomBytes(24).toString('base64url')}`,
    scope: 'read_products',
  };
});
await app.listen({ port: 0, host: '127.0.0.1' });
process.send({ port: app.server.address().port });
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));

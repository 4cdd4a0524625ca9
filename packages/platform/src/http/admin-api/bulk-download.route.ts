// The file of a completed bulk export: GET /bulk_downloads/{id}?expires=…&signature=… on the
// store's host, with no Access-Token (any HTTP client can fetch it; the address is signed and
// expires). The owner's grant is checked at every request. Served with HTTP Range (RFC 9110): a
// single range is answered 206 with Content-Range, one past the end 416; If-Range with a stale
// validator gets the whole file. Several ranges in one request get the whole file too (allowed;
// a client resuming a download asks for one).
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';
import { parseId } from '../path-params.ts';

/** The byte range a Range field asks for within `size` bytes; 'whole' when it is absent or not one range of bytes. */
export function requestedRange(header: string | undefined, size: number): { start: number; end: number } | 'whole' | 'unsatisfiable' {
  if (header === undefined) return 'whole';
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return 'whole';
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return 'whole';
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

export function registerBulkDownloadRoute(app: FastifyInstance, services: Pick<Services, 'bulkExports'>): void {
  app.get(
    '/bulk_downloads/:id',
    {
      config: { area: 'store' },
      schema: {
        tags: ['bulk_operations'],
        security: [],
        summary: 'Download the file of a completed bulk export',
        description:
          'JSON Lines, one object per line. The address comes from the bulk operation (its `url`): signed, valid for an hour. Supports ' +
          'Range (206, 416), ETag and If-Range. 403 for a bad or expired signature or a grant that no longer reads the resource; 404 ' +
          'once the file is gone or the app uninstalled.',
        params: { type: 'object', properties: { id: { type: 'string' } } },
        querystring: {
          type: 'object',
          required: ['expires', 'signature'],
          properties: {
            expires: { type: 'string', pattern: '^[0-9]{1,15}$', description: 'Unix milliseconds the address expires at.' },
            signature: { type: 'string', maxLength: 100 },
          },
        },
      },
    },
    async (req, reply) => {
      const id = parseId((req.params as { id: string }).id);
      const q = req.query as { expires: string; signature: string };
      const op = await services.bulkExports.download(req.store!.id, id, Number(q.expires), q.signature);
      const size = op.bytes;
      const etag = `"bulk-${op.id}-${size}-${op.finished_at ?? 0}"`;
      reply
        .header('Accept-Ranges', 'bytes')
        .header('ETag', etag)
        .header('Last-Modified', new Date(op.finished_at ?? op.updated_at).toUTCString())
        .header('Cache-Control', 'private, no-cache')
        .header('Content-Disposition', `attachment; filename="${op.resource}-${op.id}.jsonl"`)
        .type('application/jsonl; charset=utf-8');
      const ifRange = req.headers['if-range'];
      let range = requestedRange(req.headers.range, size);
      if (ifRange !== undefined && ifRange !== etag) range = 'whole';
      if (range === 'unsatisfiable') {
        reply.header('Content-Range', `bytes */${size}`);
        return reply.code(416).send('');
      }
      const { start, end } = range === 'whole' ? { start: 0, end: size - 1 } : range;
      if (range !== 'whole') reply.code(206).header('Content-Range', `bytes ${start}-${end}/${size}`);
      reply.header('Content-Length', String(Math.max(0, end - start + 1)));
      if (req.method === 'HEAD' || size === 0) return reply.send('');
      return reply.send(Readable.from(slice(services.bulkExports.chunks(op.id, start), start, end)));
    },
  );
}

/** The bytes from `start` to `end` (inclusive) of the file whose chunks `chunks` yields in order. */
async function* slice(chunks: AsyncIterable<{ start: number; data: Buffer }>, start: number, end: number): AsyncIterable<Buffer> {
  for await (const c of chunks) {
    if (c.start > end) return;
    const from = Math.max(0, start - c.start);
    const to = Math.min(c.data.length, end - c.start + 1);
    if (to > from) yield c.data.subarray(from, to);
  }
}

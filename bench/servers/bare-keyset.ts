// The admin-list benchmark's keyset baseline: a bare Fastify route that pages a store's products
// on the same database as the platform, as an application written directly against the database
// would: no Access-Token, scope, rate limit, hooks or Link header; the cursor checked and minted
// with the same codec and key, the same keyset statement (the page with the probe behind its
// cursor, one statement; a prepared better-sqlite3 statement, a named PostgreSQL one), the rows
// mapped by the resource's toJson and sent as JSON.stringify writes them. So its answers are the
// platform's bytes, and the gap to it is what the platform adds.
// Env: BENCH_DATABASE_URL (a SQLite path or postgres:// URL), BENCH_STORE_ID, BENCH_CURSOR_KEY
// (hex), BENCH_POOL_SIZE (PostgreSQL connections). IPC as the other bench servers.
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import { API_VERSIONS, type ApiVersion } from '../../packages/platform/src/domain/api-versions.ts';
import { CursorCodec } from '../../packages/platform/src/domain/cursor.ts';
import { products } from '../../packages/platform/src/domain/resources.ts';
import { linkedKeysetPage, type PageRequest } from '../../packages/platform/src/services/pagination.ts';
import type { KeysetSource, KeysetWindow } from '../../packages/platform/src/storage/ports/keyset-source.ts';

type Row = { id: number } & Record<string, unknown>;
const send = (msg: unknown) => process.send!(msg);
process.on('message', (m: { type?: string }) => {
  if (m?.type === 'cpu') send({ type: 'cpu', ...process.cpuUsage(), rss: process.memoryUsage().rss });
});

const url = process.env.BENCH_DATABASE_URL!;
const storeId = Number(process.env.BENCH_STORE_ID);
const codec = new CursorCodec(Buffer.from(process.env.BENCH_CURSOR_KEY!, 'hex'));
const postgres = /^postgres(ql)?:\/\//.test(url);

// The page and the one-row probe on the other side of the cursor, as the platform writes them.
const sqlOf = (forward: boolean, param: (n: number) => string, store: string) => {
  const [op, back, dir, rdir] = forward ? ['>', '<=', 'asc', 'desc'] : ['<', '>=', 'desc', 'asc'];
  const from = `from products where ${store}`;
  return (
    `select * from (select * ${from} and id ${back} ${param(2)} order by store_id ${rdir}, id ${rdir} limit 1) as probe ` +
    `union all select * from (select * ${from} and id ${op} ${param(2)} order by store_id ${dir}, id ${dir} limit ${param(3)}) as page`
  );
};
const firstSql = (param: (n: number) => string, store: string) =>
  `select * from products where ${store} order by store_id, id limit ${param(2)}`;

let run: (kind: 'first' | 'after' | 'before', from: number, limit: number) => Row[] | Promise<Row[]>;
if (postgres) {
  const pool = new pg.Pool({ connectionString: url, max: Number(process.env.BENCH_POOL_SIZE ?? '10') });
  pg.types.setTypeParser(20, (v) => Number(v));
  const p = (n: number) => `$${n}`;
  const store = 'store_id = any($1::bigint[])';
  const text = { first: firstSql(p, store), after: sqlOf(true, p, store), before: sqlOf(false, p, store) };
  run = async (kind, from, limit) =>
    (
      await pool.query<Row>({
        name: `bare_${kind}`,
        text: text[kind],
        values: kind === 'first' ? [[storeId], limit] : [[storeId], from, limit],
      })
    ).rows;
} else {
  const db = new Database(url, { readonly: true });
  db.pragma('journal_mode = WAL');
  const store = `likelihood(store_id = ${storeId}, 0.000001)`;
  const q = () => '?';
  const first = db.prepare(firstSql(q, store));
  const after = db.prepare(sqlOf(true, q, store));
  const before = db.prepare(sqlOf(false, q, store));
  run = (kind, from, limit) => (kind === 'first' ? first.all(limit) : (kind === 'after' ? after : before).all(from, from, limit)) as Row[];
}

const source: Pick<KeysetSource<Row>, 'window'> = {
  async window(_q, side, from, limit): Promise<KeysetWindow<Row>> {
    if (from === undefined) return { rows: await run('first', 0, limit), behind: false };
    const all = await run(side, from, limit);
    const forward = side === 'after';
    const rows = all.filter((r) => (forward ? r.id > from : r.id < from));
    rows.sort(forward ? (a, b) => a.id - b.id : (a, b) => b.id - a.id);
    return { rows, behind: rows.length !== all.length };
  },
};

const app = Fastify({ logger: false });
app.get('/openapi/:version/products', async (req, reply) => {
  const version = (req.params as { version: string }).version as ApiVersion;
  const q = req.query as Record<string, string | undefined>;
  const page: PageRequest = {
    limit: Number(q.limit ?? '50'),
    cursor: q.cursor,
    preCursor: q.pre_cursor,
    convention: API_VERSIONS[version].pagination,
  };
  const result = await linkedKeysetPage(source as KeysetSource<Row>, codec, { storeId, resource: 'products' }, page, products.toJson);
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(result.envelope));
});
await app.listen({ port: 0, host: '127.0.0.1' });
send({ type: 'ready', port: (app.server.address() as { port: number }).port });
process.on('disconnect', () => process.exit(0));

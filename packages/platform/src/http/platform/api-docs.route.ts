// /openapi.json (generated from the route schemas by @fastify/swagger) and a readable, script-free
// docs page rendered from that same document, on the bare platform domain.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.ts';
import { CURRENT_VERSION } from '../../domain/api-versions.ts';
import { html, page, type SafeHtml } from '../views/html.ts';

/** The parts of a JSON schema (as the route schemas write them) that the docs page shows. */
interface SchemaNode {
  type?: string | string[];
  items?: SchemaNode;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  description?: string;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

interface JsonContent {
  content?: Record<string, { schema?: SchemaNode }>;
}

interface Operation {
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: SchemaNode }[];
  requestBody?: JsonContent;
  responses?: Record<string, JsonContent>;
}

/** The parts of the generated OpenAPI 3 document that the docs page reads. */
interface ApiDocument {
  openapi: string;
  info: { title: string; description?: string };
  paths?: Record<string, Record<string, Operation>>;
}

const isObject = (s: SchemaNode | undefined): s is SchemaNode => !!s && (s.type === 'object' || s.properties !== undefined);

/** The fields of an object schema, one list item each; an array's entries are described once, by its items. */
function fieldList(schema: SchemaNode, depth: number): SafeHtml {
  const required = new Set<string>(schema.required ?? []);
  return html`<ul>${Object.entries(schema.properties ?? {}).map(
    ([name, s]) =>
      html`<li><code>${name}</code>${required.has(name) ? html` <strong>required</strong>` : ''} — \
${typeLabel(s)}${s.description ? html` · ${s.description}` : ''}${nested(s, depth + 1)}</li>`,
  )}</ul>`;
}

/** The fields below a field: an object's, or those of an array's objects; nothing past three levels. */
function nested(s: SchemaNode, depth: number): SafeHtml | '' {
  const inner = s.type === 'array' ? s.items : s;
  return isObject(inner) && depth <= 2 ? fieldList(inner, depth) : '';
}

function schemaSummary(schema: SchemaNode | undefined): SafeHtml {
  if (!schema || typeof schema !== 'object') return html``;
  if (isObject(schema)) return fieldList(schema, 0);
  return html`<p>${typeLabel(schema)}</p>${nested(schema, 0)}`;
}

/** A schema's type in words, with its limits: `string, email, max 320 chars`, `array of object`. */
export function typeLabel(s: SchemaNode): string {
  if (s.type === 'array') return `array of ${s.items ? typeLabel(s.items) : 'any'}`;
  const t = Array.isArray(s.type) ? s.type.join(' | ') : (s.type ?? (s.properties ? 'object' : 'any'));
  const parts = [t];
  if (s.enum) parts.push(`one of ${s.enum.map((v: unknown) => JSON.stringify(v)).join(', ')}`);
  if (s.format) parts.push(s.format);
  if (s.pattern) parts.push(`pattern ${s.pattern}`);
  if (s.minimum !== undefined || s.maximum !== undefined) parts.push(`${s.minimum ?? '…'}–${s.maximum ?? '…'}`);
  if (s.maxLength !== undefined) parts.push(`max ${s.maxLength} chars`);
  return parts.join(', ');
}

export function registerApiDocsRoutes(app: FastifyInstance, config: Pick<Config, 'apiDeprecations'>): void {
  const lifecycle = config.apiDeprecations['2022-01'];
  const day = (ms: number | undefined) => (ms === undefined ? 'not announced' : new Date(ms).toISOString().slice(0, 10));
  const deprecationText = day(lifecycle?.deprecatedAt);
  const sunsetText = day(lifecycle?.sunsetAt);
  app.get('/openapi.json', { config: { area: 'platform' } }, async (_req, reply) =>
    reply.header('Cache-Control', 'no-cache').send(app.swagger()),
  );

  app.get('/docs', { config: { area: 'platform' } }, async (_req, reply) => {
    const doc = app.swagger() as ApiDocument;
    // Operations grouped by their tag (the resource), in the order the document lists them; each
    // group is an h2 and each operation an h3, so the headings never skip a level.
    const groups = new Map<string, { id: string; title: string; html: SafeHtml }[]>();
    for (const [path, methods] of Object.entries(doc.paths ?? {})) {
      for (const [method, op] of Object.entries(methods)) {
        const params = op.parameters ?? [];
        const body = op.requestBody?.content?.['application/json']?.schema;
        const ok = Object.entries(op.responses ?? {}).find(([code]) => code.startsWith('2'));
        const group = op.tags?.[0] ?? 'other';
        const id = `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-').replace(/-+$/, '');
        const title = `${method.toUpperCase()} ${path}`;
        const list = groups.get(group) ?? [];
        groups.set(group, list);
        list.push({
          id,
          title,
          html: html`<section class="op" aria-labelledby="${id}">
<h3 id="${id}"><code>${title}</code></h3>
<p>${op.summary ?? ''}</p>
${
  params.length > 0
    ? html`<h4>Parameters</h4><ul>${params.map(
        (p) =>
          html`<li><code>${p.name}</code> (${p.in}${p.required ? ', required' : ''}) — ${typeLabel(p.schema ?? {})}${
            (p.description ?? p.schema?.description) ? html` · ${p.description ?? p.schema?.description ?? ''}` : ''
          }</li>`,
      )}</ul>`
    : ''
}
${body ? html`<h4>Body (application/json)</h4>${schemaSummary(body)}` : ''}
${ok ? html`<h4>Response ${ok[0]}</h4>${schemaSummary(ok[1].content?.['application/json']?.schema)}` : ''}
</section>`,
        });
      }
    }
    const toc = html`<nav class="toc" aria-labelledby="contents"><h2 id="contents">Contents</h2><ul>\
<li><a href="#conventions">Conventions</a></li>${[...groups].map(
      ([group, ops]) =>
        html`<li><a href="#group-${group}">${group}</a><ul>${ops.map(
          (o) => html`<li><a href="#${o.id}"><code>${o.title}</code></a></li>`,
        )}</ul></li>`,
    )}</ul></nav>`;
    const ops = [...groups].map(
      ([group, list]) => html`<section aria-labelledby="group-${group}"><h2 id="group-${group}">${group}</h2>
${list.map((o) => o.html)}</section>`,
    );
    const body = html`<h1>${doc.info.title}</h1>
<p>${doc.info.description}</p>
${toc}
<h2 id="conventions">Conventions</h2>
<p>Errors: <code>{"code", "message", "request_id"}</code> (<code>ValidationFailed</code> adds <code>errors: {field: [...]}</code>: at most \
10 fields, the message counting the rest; a body object with more fields than its schema names is refused before validation, naming its \
first unknown fields). Every response carries <code>X-Request-Id</code>, <code>X-Service-Api-Version</code> (the version that answered) \
and the rate limit twice: <code>X-Service-Api-Call-Limit: used/40</code> and the IETF fields \
<code>RateLimit-Policy: "admin-api";q=40;w=20</code> and \
<code>RateLimit: "admin-api";r=&lt;calls left&gt;;t=&lt;seconds until the bucket is empty&gt;</code> (on a 429 too, with \
<code>Retry-After</code>). Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${doc.openapi}).</p>
<p id="deprecation">Version <code>2022-01</code> is deprecated: its answers carry <code>Deprecation</code> (${deprecationText}) and \
<code>Sunset</code> (${sunsetText}), after which it stops answering; move to <code>${CURRENT_VERSION}</code> (pages with \
<code>cursor</code> and <code>has_more</code>). Before the sunset the operator may schedule brown-outs: short windows during which the \
version answers <code>410</code> with the code <code>ApiVersionGone</code>, naming the sunset and the version to move to, so that apps \
still calling it notice in time. Partners see which deprecated versions and routes each app still calls on the app's API health page, and \
apps subscribed to <code>app/api_version_deprecated</code> are told once, ahead of the sunset.</p>
<p>Authentication: the token in <code>Access-Token</code> or as <code>Authorization: Bearer &lt;token&gt;</code> (RFC 6750), the same \
rules for both; two different tokens at once is 400. A 401 carries <code>WWW-Authenticate: Bearer realm="&lt;store base URL&gt;"</code> \
(with <code>error="invalid_token"</code> when a token was sent), a 403 for a missing scope \
<code>WWW-Authenticate: Bearer error="insufficient_scope", scope="&lt;the scope&gt;"</code>.</p>
<p id="success-envelope">Version <code>2026-10</code>, like the platform family's newer versions, wraps every success body as \
<code>{"code": "Success", "data": …}</code>, where <code>data</code> is the body the earlier versions answer (a list page's \
<code>data</code>, <code>cursor</code> and <code>has_more</code> included); errors keep the shape above in every version.</p>
<p id="scopes">Scopes: the platform family's whole vocabulary is accepted at install (singular and plural forms, stored in one canonical \
form); only products, orders, customers and the shop are served, and the paths of the others (themes, collections, script tags…) answer \
404 naming what is not served. <code>write_shop</code> grants what <code>read_shop</code> does. \
<code>GET /openapi/{version}/oauth/access_scopes</code> lists the calling token's scopes in canonical form.</p>
<p>OAuth: each store describes its authorization server at <code>{base_url}/.well-known/oauth-authorization-server</code> (RFC 8414); \
every authorization redirect to the app carries <code>iss</code>, the store's base URL (RFC 9207). The operator's own resource servers ask \
whether a token is live at <code>{base_url}/admin/oauth/introspect</code> (RFC 7662; see <a href="#group-oauth">oauth</a>).</p>
<p id="conditional-writes">Conditional writes: the answer about one record (its GET, and the answer of its POST, PUT or PATCH) carries a \
strong <code>ETag</code> that changes with every change of the record; list pages carry none. Send it as <code>If-Match</code> on PUT, \
PATCH or DELETE: when the record changed since, 412 <code>PreconditionFailed</code> and nothing changes; of two writers with the same tag \
exactly one wins. <code>If-Match: *</code> asks only that the record exists; a malformed value is 400. GET of one record answers 304 to an \
<code>If-None-Match</code> holding its tag. A product update may carry <code>expected_inventory_quantity</code> beside \
<code>inventory_quantity</code>: when the stored quantity differs, 409 <code>InventoryQuantityMismatch</code> with the stored one as \
<code>inventory_quantity</code>, nothing changed. With an <code>Idempotency-Key</code>, a retry gets the first answer (its ETag too); \
<code>If-Match</code> is part of the request the key stands for.</p>
<p id="bulk-exports">Bulk exports: <code>POST /openapi/{version}/bulk_operations</code> exports every product, order or customer matching \
a list's filters (and its <code>fields</code>) in the background, as a JSON Lines file that is the store at one instant, \
<code>snapshot_at</code>; <code>GET /openapi/{version}/events?created_at_min=&lt;snapshot_at&gt;</code> then lists every change after that \
instant and none before it. The operation's <code>url</code> (signed, an hour) serves the file with HTTP Range; \
<code>bulk_operations/finish</code> is sent when it ends. See <a href="#group-bulk_operations">bulk_operations</a>.</p>
<p id="webhook-filters">Webhook filters: a subscription to a product, order or customer topic \
(<code>POST</code>/<code>PUT /openapi/{version}/webhooks</code>) may take a <code>filter</code>, e.g. \
<code>status:active AND price:&gt;=10</code> (<code>field:value</code>; ranges <code>&gt;=</code>, <code>&gt;</code>, <code>&lt;</code>, \
<code>&lt;=</code> on numbers and times; <code>title:"blue shirt"</code>; <code>AND</code> binding tighter than <code>OR</code>; \
parentheses), and <code>include_fields</code>, e.g. <code>["id", "status"]</code>: a change the filter rejects gets no delivery, and each \
body holds only the fields listed. Both are checked against the topic's object when saved: an unknown field or a value of the wrong type \
is a 422 naming it. See <a href="#group-webhooks">webhooks</a>.</p>
${ops}`;
    return reply.type('text/html; charset=utf-8').send(page('Admin API', body));
  });
}

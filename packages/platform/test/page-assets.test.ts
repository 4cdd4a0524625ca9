// The icon on every host (SVG linked from each page, /favicon.ico where browsers look unasked) and
// the API docs page: a table of contents, headings that never skip a level, and each field's type
// printed once ("array of object", not "array — arrayarray of").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { typeLabel } from '../src/http/platform/api-docs.route.ts';
import { createFixture, createTestPlatform, DIALECTS, type TestPlatform } from './harness.ts';
import { decode, PLATFORM_HOST } from './web-pages.ts';

describe.each(DIALECTS)('favicon and API docs page (%s)', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t?.close());

  it('serves /favicon.ico (a 32 × 32 icon) and the SVG icon on the platform host and on a store host; pages link the SVG', async () => {
    const f = await createFixture(t);
    for (const host of [PLATFORM_HOST, f.host]) {
      const ico = await t.app.inject({ method: 'GET', url: '/favicon.ico', headers: { host } });
      expect(ico.statusCode, host).toBe(200);
      expect(ico.headers['content-type']).toBe('image/x-icon');
      const bytes = ico.rawPayload;
      // ICONDIR: reserved 0, type 1 (icon), one image; the entry: 32 × 32, 32 bits, at offset 22.
      expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2), bytes.readUInt16LE(4)]).toEqual([0, 1, 1]);
      expect([bytes[6], bytes[7], bytes.readUInt16LE(12), bytes.readUInt32LE(18)]).toEqual([32, 32, 32, 22]);
      expect(bytes.readUInt32LE(14)).toBe(bytes.length - 22);
      // The bitmap header says 32 wide, 64 high (colour rows and mask), 32 bits per pixel.
      expect([bytes.readUInt32LE(22), bytes.readInt32LE(26), bytes.readInt32LE(30), bytes.readUInt16LE(36)]).toEqual([40, 32, 64, 32]);
      const svg = await t.app.inject({ method: 'GET', url: '/assets/favicon.svg', headers: { host } });
      expect(svg.statusCode).toBe(200);
      expect(svg.headers['content-type']).toContain('image/svg+xml');
      expect(svg.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 16 16">.*<rect x="\d+" y="\d+"/);
    }
    const login = await t.app.inject({ method: 'GET', url: '/admin/login', headers: { host: f.host } });
    expect(login.body).toContain('<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">');
    const docs = await t.app.inject({ method: 'GET', url: '/docs', headers: { host: PLATFORM_HOST } });
    expect(docs.body).toContain('<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">');
  });

  it('types: an array is named once with its items, objects below it listed once', () => {
    expect(typeLabel({ type: 'array', items: { type: 'string' } })).toBe('array of string');
    expect(typeLabel({ type: 'array', items: { type: 'object', properties: {} } })).toBe('array of object');
    expect(typeLabel({ type: ['string', 'null'], enum: ['a', null] })).toBe('string | null, one of "a", null');
    expect(typeLabel({ properties: {} })).toBe('object');
    expect(typeLabel({})).toBe('any');
  });

  it('the docs page has a table of contents linking every operation, headings in order, and no doubled type', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs', headers: { host: PLATFORM_HOST } });
    expect(res.statusCode).toBe(200);
    const body = decode(res.body);
    expect(body).not.toMatch(/array — array/);
    expect(body).not.toMatch(/arrayarray/);
    expect(body).toMatch(/<code>line_items<\/code> <strong>required<\/strong> — array of object/);
    // Headings: one h1, and no level skipped going down.
    const levels = [...res.body.matchAll(/<h([1-6])\b/g)].map((m) => Number(m[1]));
    expect(levels.filter((l) => l === 1)).toHaveLength(1);
    for (let i = 1; i < levels.length; i++) expect(levels[i]! - levels[i - 1]!, `heading ${i}`).toBeLessThanOrEqual(1);
    // The contents: every operation's heading id is linked from the nav, and every link has its target.
    const nav = /<nav class="toc"[\s\S]*?<\/nav>/.exec(res.body)![0];
    const headingIds = [...res.body.matchAll(/<h3 id="([^"]+)"/g)].map((m) => m[1]!);
    expect(headingIds.length).toBeGreaterThan(20);
    for (const id of headingIds) expect(nav, id).toContain(`href="#${id}"`);
    for (const m of nav.matchAll(/href="#([^"]+)"/g)) expect(res.body, m[1]).toContain(`id="${m[1]}"`);
    expect(nav).toContain('href="#group-products"');
    expect(nav).toContain('<code>GET /openapi/{version}/products</code>');
    expect(new Set(headingIds).size).toBe(headingIds.length);
  });
});

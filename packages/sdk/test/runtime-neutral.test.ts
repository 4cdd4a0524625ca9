// The core runs on any runtime with fetch and Web Crypto: it imports no `node:` module and no
// peer dependency, and with node:crypto out of reach every signature still verifies.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const vectors = JSON.parse(readFileSync(new URL('../../../test-vectors/signatures.json', import.meta.url), 'utf8'));

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)]
    .filter((m) => !/^(?:import|export)\s+type\s/.test(m[0]))
    .map((m) => m[1]!);
}

describe('runtime-neutral core', () => {
  it('no source file outside src/node/ (the `./node` subpath) imports a node: module or uses require', () => {
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.startsWith('node/'));
    expect(files.length).toBeGreaterThan(20);
    for (const f of files) {
      const text = readFileSync(join(src, f), 'utf8');
      expect(text, f).not.toMatch(/from\s+'node:|require\(/);
    }
  });

  it('the main entry reaches no framework or database driver', () => {
    const seen = new Set<string>();
    const external = new Set<string>();
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const spec of importsOf(file)) {
        if (spec.startsWith('.')) walk(resolve(dirname(file), spec));
        else external.add(spec);
      }
    };
    walk(join(src, 'index.ts'));
    expect(seen.size).toBeGreaterThan(15);
    expect([...external]).toEqual([]);
    expect(
      [...seen].some(
        (f) => f.includes('adapters') || f.includes('/node/') || f.includes('sqlite') || f.includes('postgres') || f.includes('redis'),
      ),
    ).toBe(false);
  });
});

describe('Web Crypto engine (node:crypto unavailable, as on edge runtimes)', () => {
  const proc = process as { getBuiltinModule?: unknown };
  const original = proc.getBuiltinModule;
  afterEach(() => {
    proc.getBuiltinModule = original;
    vi.resetModules();
  });

  it('signs and verifies every known answer', async () => {
    proc.getBuiltinModule = undefined;
    vi.resetModules();
    const { hmacEngine } = await import('../src/crypto/hmac.ts');
    const sdk = await import('../src/index.ts');
    expect(hmacEngine.name).toBe('webcrypto');
    for (const v of vectors.query_hmac) {
      expect(await sdk.signQuery(v.query, v.secret)).toBe(v.hmac);
      await sdk.verifyQuery(`${v.query}&hmac=${v.hmac}`, v.secret);
    }
    const w = vectors.webhook_body_hmac[0];
    expect(await sdk.signWebhook(w.body, w.secret)).toBe(w.value);
    await sdk.verifyWebhook({ rawBody: new TextEncoder().encode(w.body), headers: new Headers({ [w.header]: w.value }), secret: w.secret });
    const s = vectors.webhook_standard_signature[0];
    const event = await sdk.verifyWebhook({
      rawBody: s.body,
      headers: { 'webhook-id': s['webhook-id'], 'webhook-timestamp': s['webhook-timestamp'], 'webhook-signature': s['webhook-signature'] },
      secret: s.secret,
      now: () => Number(s['webhook-timestamp']) * 1000,
    });
    expect(event.id).toBe('wh_01');
    const state = await sdk.createState({ nonce: 'n', shop: 'demo.localhost', expiresAt: 2e9 }, 'k');
    await expect(sdk.verifyState(state, ['k'], Date.now())).resolves.toMatchObject({ shop: 'demo.localhost' });
    await expect(sdk.verifyWebhook({ rawBody: w.body, headers: { [w.header]: w.value }, secret: 'wrong' })).rejects.toMatchObject({
      code: 'WEBHOOK_SIGNATURE_INVALID',
    });
  });
});

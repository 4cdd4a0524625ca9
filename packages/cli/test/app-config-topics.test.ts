// storegate.app.toml: a subscription to a topic that is sent without one (a privacy topic, or
// subscription/disabled) is refused by the reader, before anything is applied.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readAppConfig } from '../src/app-config-file.ts';

describe('storegate.app.toml subscription topics', () => {
  const dir = mkdtempSync(join(tmpdir(), 'storegate-app-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const file = (topic: string) => {
    const path = join(dir, `${topic.replace('/', '-')}.toml`);
    writeFileSync(
      path,
      `name = "Topics"\napplication_url = "http://localhost:3000/"\nredirect_url = "http://localhost:3000/auth/callback"\n\n[[webhooks.subscriptions]]\ntopic = "${topic}"\naddress = "http://localhost:3000/webhooks"\n`,
    );
    return path;
  };

  it.each([
    ['subscription/disabled', 'it is sent without a subscription'],
    ['shop/redact', 'privacy topics go to privacy_webhook_url'],
  ])('refuses %s', (topic, why) => {
    expect(() => readAppConfig(file(topic))).toThrow(why);
  });

  it('accepts a subscribable topic', () => {
    expect(readAppConfig(file('orders/create')).subscriptions).toEqual([
      { topic: 'orders/create', address: 'http://localhost:3000/webhooks', filter: null, includeFields: null },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { isValidShop } from '../src/shop/shop-hostname.ts';

describe('isValidShop', () => {
  it.each([
    ['demo.localhost', 'localhost'],
    ['a.localhost', 'localhost'],
    ['0-shop-9.localhost', 'localhost'],
    ['acme.myshoplaza.com', 'myshoplaza.com'],
    [`${'a'.repeat(63)}.localhost`, 'localhost'],
  ])('accepts %s for %s', (shop, domain) => {
    expect(isValidShop(shop, domain)).toBe(true);
  });
  it.each([
    ['-demo.localhost', 'localhost'],
    ['demo.localhost.evil.com', 'localhost'],
    ['evil.com/.localhost', 'localhost'],
    ['demo_x.localhost', 'localhost'],
    ['Demo.localhost', 'localhost'],
    ['a.b.localhost', 'localhost'],
    ['localhost', 'localhost'],
    ['demo.localhostx', 'localhost'],
    ['demoXmyshoplaza.com', 'myshoplaza.com'],
    ['demo.localhost:8080', 'localhost'],
    ['demo.localhost\n', 'localhost'],
    [`${'a'.repeat(64)}.localhost`, 'localhost'],
    ['', 'localhost'],
  ])('refuses %j for %s', (shop, domain) => {
    expect(isValidShop(shop, domain)).toBe(false);
  });
  it('accepts the full-URL form only with https and a trailing slash', () => {
    expect(isValidShop('https://demo.localhost/', 'localhost')).toBe(true);
    expect(isValidShop('https://demo.localhost', 'localhost')).toBe(false);
    expect(isValidShop('http://demo.localhost/', 'localhost')).toBe(false);
    expect(isValidShop('http://demo.localhost/', 'localhost', { allowHttp: true })).toBe(true);
    expect(isValidShop('https://demo.localhost/x/', 'localhost')).toBe(false);
    expect(isValidShop('ftp://demo.localhost/', 'localhost')).toBe(false);
  });
  it('refuses non-strings', () => {
    expect(isValidShop(undefined, 'localhost')).toBe(false);
    expect(isValidShop(['demo.localhost'], 'localhost')).toBe(false);
  });
});

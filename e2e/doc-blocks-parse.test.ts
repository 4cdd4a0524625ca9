// The extractor behind the doc tests: a block it misses or misreads would go untested silently.
import { describe, expect, it } from 'vitest';
import { parseBlocks } from './doc-blocks.ts';

const doc = [
  '# Title', // 1
  '', // 2
  '```sh', // 3
  'npm test', // 4
  '```', // 5
  '', // 6
  '<!-- doctest: skip a reason given here -->', // 7
  '', // 8
  '```ts', // 9
  'const a = 1;', // 10
  '```', // 11
  '', // 12
  '1. A list item:', // 13
  '', // 14
  '   <!-- doctest: platform -->', // 15
  '   ```sh', // 16
  '   curl -s http://127.0.0.1:8080/', // 17
  '     --indented-more', // 18
  '   ```', // 19
  '', // 20
  'A directive further up does not count:', // 21
  '<!-- doctest: skip not this one -->', // 22
  'text between', // 23
  '```', // 24
  'tree', // 25
  '```', // 26
  '````md', // 27
  '```ts', // 28
  'inner', // 29
  '```', // 30
  '````', // 31
].join('\n');

describe('parseBlocks', () => {
  const blocks = parseBlocks('doc.md', doc);

  it('finds every fenced block with its line, language and code', () => {
    expect(blocks.map((b) => [b.line, b.lang])).toEqual([
      [3, 'sh'],
      [9, 'ts'],
      [16, 'sh'],
      [24, ''],
      [27, 'md'],
    ]);
    expect(blocks[0]?.code).toBe('npm test');
    expect(blocks[4]?.code).toBe('```ts\ninner\n```');
  });

  it('strips the indentation of a block inside a list item, keeping deeper indentation', () => {
    expect(blocks[2]?.code).toBe('curl -s http://127.0.0.1:8080/\n  --indented-more');
  });

  it('reads the doctest comment right above a block (blank lines allowed), and only that one', () => {
    expect(blocks[0]?.directive).toEqual([]);
    expect(blocks[1]?.directive[0]).toBe('skip');
    expect(blocks[1]?.reason).toBe('a reason given here');
    expect(blocks[2]?.directive).toEqual(['platform']);
    expect(blocks[3]?.directive).toEqual([]);
  });
});

// Every relative link (and image) in README.md, SECURITY.md, docs/*.md, packages/*/README.md and
// examples/**/README.md resolves inside the repository: the file exists, and a `#anchor` names a
// heading of the target the way GitHub makes its ids. Links to other sites are left alone;
// absolute paths and links climbing out of the repository fail.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const rootDir = new URL('../', import.meta.url).pathname;

function markdownFiles(): string[] {
  const files = ['README.md', 'SECURITY.md'];
  for (const f of readdirSync(join(rootDir, 'docs'))) if (f.endsWith('.md')) files.push(`docs/${f}`);
  for (const pkg of readdirSync(join(rootDir, 'packages'))) {
    if (existsSync(join(rootDir, 'packages', pkg, 'README.md'))) files.push(`packages/${pkg}/README.md`);
  }
  for (const ex of readdirSync(join(rootDir, 'examples'))) {
    if (existsSync(join(rootDir, 'examples', ex, 'README.md'))) files.push(`examples/${ex}/README.md`);
  }
  return files.filter((f) => existsSync(join(rootDir, f)));
}

/** GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = (m[1] ?? '')
      .replace(/<[^>]+>/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

/** `[text](target)` and `![alt](target)` outside code blocks and inline code. */
function links(markdown: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  let inFence = false;
  markdown.split('\n').forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) return;
    const text = line.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1] ?? '', line: i + 1 });
  });
  return out;
}

describe('relative links in the docs', () => {
  const files = markdownFiles();

  it('the GitHub heading ids are computed as GitHub does', () => {
    expect([
      ...headingIds('# The `storegate` command\n## Install an app, by hand\n## Development on `*.localhost` (Node)\n## A\n## A'),
    ]).toEqual(['the-storegate-command', 'install-an-app-by-hand', 'development-on-localhost-node', 'a', 'a-1']);
  });

  it('finds the docs and their links', () => {
    expect(files).toEqual(
      expect.arrayContaining(['README.md', 'docs/architecture.md', 'packages/sdk/README.md', 'examples/app/README.md']),
    );
    expect(links(readFileSync(join(rootDir, 'README.md'), 'utf8')).length).toBeGreaterThan(5);
  });

  for (const file of files) {
    it(`${file}: every relative link resolves inside the repository`, () => {
      const text = readFileSync(join(rootDir, file), 'utf8');
      const problems: string[] = [];
      for (const { target, line } of links(text)) {
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto: …
        const [path = '', anchor] = target.split('#');
        if (path.startsWith('/')) {
          problems.push(`${file}:${line} ${target}: an absolute path points outside the repository`);
          continue;
        }
        const resolved = path === '' ? join(rootDir, file) : normalize(join(rootDir, dirname(file), decodeURIComponent(path)));
        if (relative(rootDir, resolved).startsWith('..')) {
          problems.push(`${file}:${line} ${target}: outside the repository`);
          continue;
        }
        if (!existsSync(resolved)) {
          problems.push(`${file}:${line} ${target}: no such file`);
          continue;
        }
        if (anchor && statSync(resolved).isFile() && resolved.endsWith('.md')) {
          if (!headingIds(readFileSync(resolved, 'utf8')).has(anchor)) problems.push(`${file}:${line} ${target}: no heading #${anchor}`);
        }
      }
      expect(problems).toEqual([]);
    });
  }
});

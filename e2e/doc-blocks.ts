// Finds the fenced code blocks of a Markdown file with what the doc tests need to run them: the
// language, the first line (for error messages), and the `<!-- doctest: … -->` comment written
// right before the block, which says how the block runs (or why it cannot).
import { readFileSync } from 'node:fs';

export interface DocBlock {
  /** Repository-relative path of the Markdown file. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word (`ts`, `sh`, `json`, …), '' when none. */
  lang: string;
  code: string;
  /** Words of the doctest comment before the block (`platform`, `skip`, …), [] when none. */
  directive: string[];
  /** The rest of a `skip`/`form`/`output` directive: the reason given. */
  reason: string;
}

const DIRECTIVE = /^\s*<!--\s*doctest:\s*(.*?)\s*-->\s*$/;

export function readBlocks(root: string, file: string): DocBlock[] {
  return parseBlocks(file, readFileSync(new URL(file, root), 'utf8'));
}

export function parseBlocks(file: string, text: string): DocBlock[] {
  const lines = text.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(```+|~~~+)\s*([\w+-]*)/.exec(lines[i] ?? '');
    if (!open) continue;
    const indent = open[1]?.length ?? 0;
    const fence = open[2] ?? '```';
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !(lines[j] ?? '').trim().startsWith(fence); j++) body.push((lines[j] ?? '').slice(indent));
    // The directive is the closest non-blank line above the fence.
    let k = i - 1;
    while (k >= 0 && (lines[k] ?? '').trim() === '') k--;
    const m = k >= 0 ? DIRECTIVE.exec(lines[k] ?? '') : null;
    const words = m ? (m[1] ?? '').split(/\s+/).filter(Boolean) : [];
    blocks.push({
      file,
      line: i + 1,
      lang: (open[3] ?? '').toLowerCase(),
      code: body.join('\n'),
      directive: words,
      reason: words.slice(1).join(' '),
    });
    i = j;
  }
  return blocks;
}

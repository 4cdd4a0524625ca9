// House rules for packages/*/src that no compiler or linter checks: files stay short enough to read
// in one go, and comments explain the code itself instead of pointing at documents, sections or
// issues that move on without it.
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as errorClasses from '../src/domain/errors.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAX_LINES = 400;
const SCRIPT_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);
const TEXT_EXTENSIONS = new Set([...SCRIPT_EXTENSIONS, '.css', '.html', '.json', '.sql']);

/** What a comment may not cite, with the name the failure message gives it. */
const CITATIONS: [string, RegExp][] = [
  ['PRODUCT.md', /PRODUCT\.md/],
  ['ARCHITECTURE.md', /ARCHITECTURE\.md/],
  ['§<digit>', /§\s*\d/],
  ['issue <number>', /\bissues?\s+#?\d/i],
];

/** Text files under packages/*\/src, as paths relative to the repository root. */
function sourceFiles(): string[] {
  const files: string[] = [];
  for (const pkg of readdirSync(join(ROOT, 'packages'), { withFileTypes: true })) {
    if (!pkg.isDirectory()) continue;
    const src = join('packages', pkg.name, 'src');
    let entries: string[];
    try {
      entries = readdirSync(join(ROOT, src), { recursive: true, encoding: 'utf8' });
    } catch {
      continue;
    }
    for (const entry of entries) if (TEXT_EXTENSIONS.has(extname(entry))) files.push(join(src, entry));
  }
  return files.sort();
}

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** Every comment of a file, with the line it starts on. Scripts are parsed, so strings and regexps are not comments. */
function commentsOf(file: string, text: string): { line: number; text: string }[] {
  const extension = extname(file);
  if (extension === '.css') {
    return [...text.matchAll(/\/\*[\s\S]*?\*\//g)].map((m) => ({ line: lineCount(text.slice(0, m.index)) + 1, text: m[0] }));
  }
  if (!SCRIPT_EXTENSIONS.has(extension)) return [];
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    false,
    extension.endsWith('js') ? ts.ScriptKind.JS : ts.ScriptKind.TS,
  );
  const seen = new Map<number, ts.CommentRange>();
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const range of ranges ?? []) seen.set(range.pos, range);
  };
  // Every comment is leading or trailing trivia of some token; walking all children (tokens included) finds each.
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(text, node.pos));
    collect(ts.getTrailingCommentRanges(text, node.end));
    for (const child of node.getChildren(source)) if (!ts.isJSDoc(child)) visit(child);
  };
  collect(ts.getLeadingCommentRanges(text, 0));
  visit(source);
  return [...seen.values()]
    .sort((a, b) => a.pos - b.pos)
    .map((range) => ({ line: source.getLineAndCharacterOfPosition(range.pos).line + 1, text: text.slice(range.pos, range.end) }));
}

describe('house rules (packages/*/src)', () => {
  const files = sourceFiles();

  it('finds the sources', () => {
    for (const pkg of ['platform', 'sdk', 'cli']) expect(files.some((f) => f.startsWith(`packages/${pkg}/src/`))).toBe(true);
  });

  it(`no file is longer than ${MAX_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file, lines: lineCount(readFileSync(join(ROOT, file), 'utf8')) }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(long.length, `${long.length} file(s) over ${MAX_LINES} lines:\n${long.join('\n')}\n`).toBe(0);
  });

  it('no comment cites PRODUCT.md, ARCHITECTURE.md, a § section or an issue number', () => {
    const citing: string[] = [];
    for (const file of files) {
      for (const comment of commentsOf(file, readFileSync(join(ROOT, file), 'utf8'))) {
        const cited = CITATIONS.filter(([, pattern]) => pattern.test(comment.text)).map(([name]) => name);
        if (cited.length === 0) continue;
        const excerpt = comment.text.replace(/\s+/g, ' ').slice(0, 120);
        citing.push(`${file}:${comment.line} [${cited.join(', ')}] ${excerpt}`);
      }
    }
    expect(citing.length, `${citing.length} comment(s) cite a document, section or issue:\n${citing.join('\n')}\n`).toBe(0);
  });
});

/** The file every error class of the platform lives in, so that the error handler can answer each one. */
const ERRORS_FILE = 'packages/platform/src/domain/errors.ts';
/** What an error class extends: a built-in error, or any class exported from the errors file. */
const ERROR_BASES = new Set(['Error', 'TypeError', 'RangeError', 'SyntaxError', 'AggregateError', ...Object.keys(errorClasses)]);

/** The classes of a script that extend an error class, as `line ClassName extends Base`. */
function errorClassesOf(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isClassLike(node)) {
      for (const clause of node.heritageClauses ?? []) {
        if (clause.token !== ts.SyntaxKind.ExtendsKeyword) continue;
        const base = clause.types[0]?.expression.getText(source) ?? '';
        if (!ERROR_BASES.has(base.replace(/^.*\./, ''))) continue;
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push(`${line} ${node.name?.getText(source) ?? '(anonymous)'} extends ${base}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('house rules: one error model (packages/platform/src)', () => {
  it(`no error class is declared outside ${ERRORS_FILE}`, () => {
    const outside = sourceFiles()
      .filter((file) => file.startsWith('packages/platform/src/') && SCRIPT_EXTENSIONS.has(extname(file)) && file !== ERRORS_FILE)
      .flatMap((file) => errorClassesOf(file, readFileSync(join(ROOT, file), 'utf8')).map((found) => `${file}:${found}`));
    expect(outside, `error classes outside ${ERRORS_FILE}:\n${outside.join('\n')}\n`).toEqual([]);
  });

  it('the scanner finds classes that extend Error or an exported error class, and nothing else', () => {
    const text = [
      'class A extends Error {}',
      'class B extends errors.OAuthError {}',
      'const C = class extends BadRequestError {};',
      'class D extends Map {}',
      "const e = 'class E extends Error {}';",
    ].join('\n');
    expect(errorClassesOf('x.ts', text)).toEqual([
      '1 A extends Error',
      '2 B extends errors.OAuthError',
      '3 (anonymous) extends BadRequestError',
    ]);
  });
});

describe('house rules: the comment scanner', () => {
  it('finds comments everywhere and only comments', () => {
    const text = [
      '// §1 leading',
      "const a = '§2 in a string'; // issue 3 trailing",
      'const b = /§4 in a regexp/;',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal, on purpose
      'const c = `ARCHITECTURE.md ${a /* PRODUCT.md inside a template */} §5`;',
      'function f(/* §6 in an empty place */) {}',
      '/** §7 jsdoc */',
      'export const d = [a, b, c, f];',
      '// §8 at the end',
    ].join('\n');
    expect(commentsOf('x.ts', text).map((c) => `${c.line} ${c.text}`)).toEqual([
      '1 // §1 leading',
      '2 // issue 3 trailing',
      '4 /* PRODUCT.md inside a template */',
      '5 /* §6 in an empty place */',
      '6 /** §7 jsdoc */',
      '8 // §8 at the end',
    ]);
  });
});

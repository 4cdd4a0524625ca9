// House rules for packages/*/src that no compiler or linter checks: files stay short enough to read
// in one go, and comments explain the code itself instead of pointing at documents, sections or
// issues that move on without it. Every line stays short, and the CLI reaches the platform through its
// package entry only; migrations are told their dialect rather than guessing it from a driver's
// class; the delivery worker is handed its parts rather than building them, and HTTP routes the
// services they use rather than all of them.
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as errorClasses from '../src/domain/errors.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAX_LINES = 400;
const MAX_LINE_CHARS = 140;
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

/** Lines longer than `max` characters, as `file:line (n chars)`. */
function longLines(file: string, text: string, max = MAX_LINE_CHARS): string[] {
  return text
    .split('\n')
    .map((line, i) => ({ line: i + 1, length: line.length }))
    .filter((l) => l.length > max)
    .map((l) => `${file}:${l.line} (${l.length} chars)`);
}

/**
 * Imports (static, dynamic, re-exports) of a CLI file that reach into the platform other than through
 * its package name: a subpath of `@storegate/platform`, or any path naming the platform's folder.
 */
function platformDeepImports(file: string, text: string): string[] {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((name) => name.startsWith('@storegate/platform/') || /(^|\/)platform\/(src|dist)(\/|$)/.test(name))
    .map((name) => `${file}: ${name}`);
}

/** Places where code tells a database (or anything) apart by the name of an object's class. */
function classNameChecks(file: string, text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => ({ line: i + 1, text: line }))
    .filter((l) => /\.constructor\.name\b/.test(l.text))
    .map((l) => `${file}:${l.line} ${l.text.trim()}`);
}

/** Classes a file constructs with `new`, promises and errors aside. */
function constructed(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isNewExpression(node)) {
      const name = node.expression.getText(source);
      if (!['Promise', 'Error', 'Map', 'Set'].includes(name)) found.push(`${file}: new ${name}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The one file under src/http/ that may take the whole service bag: it wires each route to the services it uses. */
const SERVICES_WIRING = 'packages/platform/src/http/server.ts';

/**
 * Places where a file types something as the whole `Services` bag, as `file:line text`. `Pick<Services, …>`,
 * `Services['apps']` and the import of the name are not the whole bag.
 */
function wholeServices(file: string, text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => ({ line: i + 1, text: line }))
    .filter((l) => /:\s*Services\b(?!\s*\[)/.test(l.text))
    .map((l) => `${file}:${l.line} ${l.text.trim()}`);
}

/** Storage names routes may not use: sealed secrets (`*_enc` columns) and password hashes stay below the services. */
const STORAGE_ONLY = /\w_enc\b|password_hash/;

/**
 * Where a file of http/ reaches storage's own shapes: a line naming a sealed or hashed column, or an
 * import (static, type-only or re-exported) of a `*Row` type, which the services map to what routes show.
 */
function storageShapes(file: string, text: string): string[] {
  const named = text
    .split('\n')
    .map((line, i) => ({ line: i + 1, text: line }))
    .filter((l) => STORAGE_ONLY.test(l.text))
    .map((l) => `${file}:${l.line} ${l.text.trim()}`);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const rows: string[] = [];
  const visit = (node: ts.Node) => {
    const names: ts.ModuleExportName[] = [];
    if (ts.isImportDeclaration(node) && node.importClause) {
      const bindings = node.importClause.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) for (const el of bindings.elements) names.push(el.propertyName ?? el.name);
    }
    if (ts.isExportDeclaration(node) && node.exportClause && ts.isNamedExports(node.exportClause)) {
      for (const el of node.exportClause.elements) names.push(el.propertyName ?? el.name);
    }
    for (const name of names) if (/Row$/.test(name.text)) rows.push(`${file}: imports ${name.text}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...named, ...rows];
}

const WORKER = 'packages/platform/src/webhooks/webhook-worker.ts';

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
  it(`no line in packages/*/src is longer than ${MAX_LINE_CHARS} characters`, () => {
    const long = files.flatMap((f) => longLines(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(long, `${long.length} line(s) over ${MAX_LINE_CHARS} characters:\n${long.join('\n')}\n`).toEqual([]);
  });

  it('the CLI imports the platform through @storegate/platform only, never a file inside it', () => {
    const deep = files
      .filter((f) => f.startsWith('packages/cli/src/') && SCRIPT_EXTENSIONS.has(extname(f)))
      .flatMap((f) => platformDeepImports(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(deep, `${deep.length} deep import(s) of the platform:\n${deep.join('\n')}\n`).toEqual([]);
  });

  it('no storage code tells the dialect by a class name (the database handle says which it is)', () => {
    const checks = files
      .filter((f) => f.startsWith('packages/platform/src/storage/'))
      .flatMap((f) => classNameChecks(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(checks, `${checks.length} class-name check(s):\n${checks.join('\n')}\n`).toEqual([]);
  });

  it('http/ sees what the services show, never a storage row, a sealed secret or a password hash', () => {
    const found = files
      .filter((f) => f.startsWith('packages/platform/src/http/') && SCRIPT_EXTENSIONS.has(extname(f)))
      .flatMap((f) => storageShapes(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(found, `${found.length} storage name(s) in http/:\n${found.join('\n')}\n`).toEqual([]);
  });

  it('the delivery worker builds none of its parts: the composition root hands them over', () => {
    expect(constructed(WORKER, readFileSync(join(ROOT, WORKER), 'utf8'))).toEqual([]);
  });

  it('routes and their helpers under src/http/ take the services they use, never the whole bag', () => {
    const whole = files
      .filter((f) => f.startsWith('packages/platform/src/http/') && SCRIPT_EXTENSIONS.has(extname(f)) && f !== SERVICES_WIRING)
      .flatMap((f) => wholeServices(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(whole, `${whole.length} parameter(s) typed as the whole Services:\n${whole.join('\n')}\n`).toEqual([]);
  });
});

describe('house rules: the mechanical checks catch what they are meant to catch', () => {
  it('long lines: over the limit only, with the line and its length', () => {
    const text = ['short', 'x'.repeat(MAX_LINE_CHARS), 'y'.repeat(MAX_LINE_CHARS + 1)].join('\n');
    expect(longLines('a.ts', text)).toEqual([`a.ts:3 (${MAX_LINE_CHARS + 1} chars)`]);
  });

  it('whole services: a parameter or field typed Services, not a Pick of it, a member type or the import', () => {
    const text = [
      'export function registerX(app: FastifyInstance, services: Services): void {',
      'function y(_services : Services, req: FastifyRequest) {',
      "function z(services: Pick<Services, 'config' | 'apps'>) {",
      "type Summary = Awaited<ReturnType<Services['apps']['list']>>;",
      "async function appOf(apps: Services ['apps'], req: FastifyRequest) {",
      "import type { Services } from '../../services/services.ts';",
      'const s: Services | undefined = undefined;',
    ].join('\n');
    expect(wholeServices('r.ts', text)).toEqual([
      'r.ts:1 export function registerX(app: FastifyInstance, services: Services): void {',
      'r.ts:2 function y(_services : Services, req: FastifyRequest) {',
      'r.ts:7 const s: Services | undefined = undefined;',
    ]);
  });

  it('deep imports of the platform: subpaths and paths into its folder, static, dynamic or re-exported', () => {
    const text = [
      "import { createPlatform } from '@storegate/platform';",
      "import type { Config } from '@storegate/platform';",
      "import { seedDemo } from '@storegate/platform/src/services/demo-seed.ts';",
      "import { newWebhookId } from '../../platform/src/services/webhook-outbox.ts';",
      "export { x } from '@storegate/platform/dist/index.js';",
      "const later = await import('../../platform/src/platform.ts');",
      "import { Command } from 'commander';",
      "import { print } from './output.ts';",
    ].join('\n');
    expect(platformDeepImports('c.ts', text)).toEqual([
      'c.ts: @storegate/platform/src/services/demo-seed.ts',
      'c.ts: ../../platform/src/services/webhook-outbox.ts',
      'c.ts: @storegate/platform/dist/index.js',
      'c.ts: ../../platform/src/platform.ts',
    ]);
  });

  it('storage shapes in http/: sealed columns, password hashes and imported rows, not look-alikes', () => {
    const text = [
      "import type { AppRow } from '../../services/app-service.ts';",
      "import { type StoreRow as Store, other } from '../x.ts';",
      "export type { SubscriptionRow } from '../y.ts';",
      "import type { AppProfile, Rows } from '../z.ts';",
      'const s = app.client_secret_enc;',
      "const h = { password_hash: '' };",
      'const e = encodeURIComponent(x_encoded);',
    ].join('\n');
    expect(storageShapes('r.ts', text)).toEqual([
      'r.ts:5 const s = app.client_secret_enc;',
      "r.ts:6 const h = { password_hash: '' };",
      'r.ts: imports AppRow',
      'r.ts: imports StoreRow',
      'r.ts: imports SubscriptionRow',
    ]);
  });

  it("class-name checks: the adapter's class name, not a column called name", () => {
    const text = [
      "const pg = db.getExecutor().adapter.constructor.name.startsWith('Postgres');",
      "const pg2 = dialect === 'postgres';",
      'const n = row.name;',
    ].join('\n');
    expect(classNameChecks('m.ts', text)).toEqual(["m.ts:1 const pg = db.getExecutor().adapter.constructor.name.startsWith('Postgres');"]);
  });

  it('constructed parts: every `new` but promises and errors', () => {
    const text = [
      'class W {',
      '  constructor() {',
      '    this.outage = new DatabaseOutage(logger, Date.now);',
      '    this.dispatcher = new OriginDispatcher<Job>({ perOrigin });',
      '  }',
      '  sleep() { return new Promise<void>((r) => setTimeout(r, 1)); }',
      "  fail() { throw new Error('no'); }",
      '}',
    ].join('\n');
    expect(constructed('w.ts', text)).toEqual(['w.ts: new DatabaseOutage', 'w.ts: new OriginDispatcher']);
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

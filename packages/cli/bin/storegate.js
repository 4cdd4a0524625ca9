#!/usr/bin/env node
// The `storegate` command. After `npm run build` it runs the compiled JavaScript in dist/ (no
// TypeScript loader in the process); without a build, or when a source file changed since the
// build, it runs the TypeScript sources through tsx, so `npm install && npm start` needs no build.
// STOREGATE_SOURCE=1 always runs the sources.
import { compiledEntry } from './entry.js';

const entry = compiledEntry(new URL('..', import.meta.url), process.env);
if (entry) {
  await import(entry.href);
} else {
  const { register } = await import('node:module');
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  // Workspace packages export dist/ by default; their sources sit behind this condition.
  register('./source-condition.js', import.meta.url);
  await import('../src/main.ts');
}

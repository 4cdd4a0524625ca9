#!/bin/sh
//usr/bin/env true; case "$1" in serve | worker) export NODE_OPTIONS="--max-semi-space-size=4 $NODE_OPTIONS" ;; esac; exec node "$0" "$@"
// The line above is for sh, and a comment for Node: started as a program (`storegate`,
// npx, npm start) the file runs under sh, which starts Node on it again in the same process (exec),
// giving the long-running commands V8's young generation at 2 x 4 MiB instead of 2 x 16 MiB. Node
// fills the larger one during start-up and keeps it: about 25 MiB of an idle node's resident memory
// for no gain under load (bench/README.md, memory). It goes first in NODE_OPTIONS, so a value the
// operator sets there wins; `node bin/storegate.js` skips the line and runs with Node's defaults.
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

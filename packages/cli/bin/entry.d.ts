// Types for entry.js (plain JavaScript so the bin can run it before any TypeScript loader exists).
export function newestMtime(dir: string): number;
export function compiledEntry(cliRoot: URL, env: NodeJS.ProcessEnv, platformRoot?: string | null): URL | null;

// `npm run bench -- <name>` runs bench/<name>.bench.ts. Each benchmark prints its own figures and
// the ratio against a baseline it measures in the same run.
import { readdirSync } from 'node:fs';

const names = readdirSync(new URL('.', import.meta.url))
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length))
  .sort();
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
if (wanted.length === 0) {
  console.error(`usage: npm run bench -- <${names.join('|')}>`);
  process.exit(2);
}
for (const name of wanted) {
  if (!names.includes(name)) {
    console.error(`unknown benchmark "${name}"; available: ${names.join(', ')}`);
    process.exit(2);
  }
}
for (const name of wanted) {
  console.log(`\n=== bench: ${name} ===`);
  await import(`./${name}.bench.ts`);
}

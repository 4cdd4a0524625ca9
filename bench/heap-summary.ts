// node --import tsx bench/heap-summary.ts <file.heapsnapshot> [top=30]
// What a V8 heap snapshot holds, summed by self size: per node type (objects, strings, code,
// closures, arrays…), per constructor name, and per retained size of the largest single owners
// approximated by walking each Map/Set/Array of more than 1,000 entries (where an unbounded
// cache would show). Take a snapshot of a running node with
// `NODE_OPTIONS=--heapsnapshot-signal=SIGUSR2 storegate serve …` and `kill -USR2 <pid>`.
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node --import tsx bench/heap-summary.ts <file.heapsnapshot> [top]');
  process.exit(2);
}
const top = Number(topArg ?? '30');
const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const { node_fields, node_types, edge_fields, edge_types } = snap.snapshot.meta;
const nf = node_fields.length;
const ef = edge_fields.length;
const [typeAt, nameAt, sizeAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) => node_fields.indexOf(f)) as [
  number,
  number,
  number,
  number,
];
const [edgeTypeAt, edgeNameAt, edgeToAt] = ['type', 'name_or_index', 'to_node'].map((f) => edge_fields.indexOf(f)) as [
  number,
  number,
  number,
];
const types = node_types[0];
const edgeTypes = edge_types[0];
const { nodes, edges, strings } = snap;
const count = nodes.length / nf;

const byType = new Map<string, { n: number; bytes: number }>();
const byName = new Map<string, { n: number; bytes: number }>();
const add = (m: Map<string, { n: number; bytes: number }>, k: string, bytes: number) => {
  const e = m.get(k) ?? { n: 0, bytes: 0 };
  e.n++;
  e.bytes += bytes;
  m.set(k, e);
};
let total = 0;
const firstEdge = new Uint32Array(count + 1);
for (let i = 0, e = 0; i < count; i++) {
  firstEdge[i] = e;
  e += nodes[i * nf + edgeCountAt]! * ef;
  if (i === count - 1) firstEdge[count] = e;
}
for (let i = 0; i < count; i++) {
  const type = types[nodes[i * nf + typeAt]!]!;
  const size = nodes[i * nf + sizeAt]!;
  total += size;
  add(byType, type, size);
  const name = strings[nodes[i * nf + nameAt]!]!;
  add(byName, type === 'object' || type === 'closure' || type === 'native' ? `${type} ${name.slice(0, 60)}` : `(${type})`, size);
}

const mb = (b: number) => `${(b / 2 ** 20).toFixed(2).padStart(8)} MB`;
const print = (title: string, m: Map<string, { n: number; bytes: number }>) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top))
    console.log(`${mb(v.bytes)} ${String(v.n).padStart(9)}  ${k}`);
};
console.log(`${file}: ${count} nodes, ${mb(total)} self size in all`);
print('by node type', byType);
print('by constructor (objects, closures, native) or type', byName);

// Large collections: element counts of Map/Set tables and arrays, where per-key growth shows.
console.log('\ncollections with more than 1,000 elements (element edges), with an owner name');
const rows: { what: string; elements: number }[] = [];
for (let i = 0; i < count; i++) {
  const type = types[nodes[i * nf + typeAt]!]!;
  const name = strings[nodes[i * nf + nameAt]!]!;
  if (type !== 'array' && !(type === 'object' && (name === 'Map' || name === 'Set' || name === 'Array'))) continue;
  let elements = 0;
  for (let e = firstEdge[i]!; e < firstEdge[i + 1]!; e += ef) if (edgeTypes[edges[e + edgeTypeAt]!] === 'element') elements++;
  if (elements <= 1000) continue;
  // The first named property edge pointing at this node tells which field holds it.
  rows.push({ what: `${type} ${name}`, elements });
}
const owners = new Map<number, string>();
for (let i = 0; i < count && rows.length > 0; i++) {
  for (let e = firstEdge[i]!; e < firstEdge[i + 1]!; e += ef) {
    const to = edges[e + edgeToAt]! / nf;
    if (!owners.has(to) && edgeTypes[edges[e + edgeTypeAt]!] === 'property')
      owners.set(to, `${strings[nodes[i * nf + nameAt]!]}.${strings[edges[e + edgeNameAt]!]}`);
  }
}
for (let i = 0, r = 0; i < count; i++) {
  const type = types[nodes[i * nf + typeAt]!]!;
  const name = strings[nodes[i * nf + nameAt]!]!;
  if (type !== 'array' && !(type === 'object' && (name === 'Map' || name === 'Set' || name === 'Array'))) continue;
  let elements = 0;
  for (let e = firstEdge[i]!; e < firstEdge[i + 1]!; e += ef) if (edgeTypes[edges[e + edgeTypeAt]!] === 'element') elements++;
  if (elements <= 1000) continue;
  console.log(`${String(elements).padStart(9)}  ${rows[r++]!.what}  held by ${owners.get(i) ?? '?'}`);
}

// Scopes: `<access>_<resource>`, where write implies read. The singular forms some existing apps
// send (`read_product`) are accepted as aliases and stored in the plural form. The shop (the
// store's own record) can only be read: no app may change a store's name or owner.

export const RESOURCES = ['products', 'orders', 'customers'] as const;
export type Resource = (typeof RESOURCES)[number];
/** Resources that have only a read scope. */
export const READ_ONLY_RESOURCES = ['shop'] as const;
export type ReadOnlyResource = (typeof READ_ONLY_RESOURCES)[number];
/** Anything a scope can name. */
export type ScopeResource = Resource | ReadOnlyResource;
export type Access = 'read' | 'write';
export type Scope = `${Access}_${Resource}` | `read_${ReadOnlyResource}`;

/** Every scope an app can hold, in the order forms list them. */
export const ALL_SCOPES: readonly Scope[] = [
  ...RESOURCES.flatMap((r): Scope[] => [`read_${r}`, `write_${r}`]),
  ...READ_ONLY_RESOURCES.map((r): Scope => `read_${r}`),
];

// Every accepted spelling of a resource, canonical or singular. A Map, not an object literal: a
// lookup in an object also finds what it inherits, so `read_constructor` would name a resource.
const RESOURCE_NAMES: ReadonlyMap<string, ScopeResource> = new Map<string, ScopeResource>([
  ...RESOURCES.map((r): [string, ScopeResource] => [r, r]),
  ...READ_ONLY_RESOURCES.map((r): [string, ScopeResource] => [r, r]),
  ['product', 'products'],
  ['order', 'orders'],
  ['customer', 'customers'],
]);

export class ScopeParseError extends Error {
  constructor(readonly scope: string) {
    super(`unknown scope "${scope}"`);
  }
}

/** Parses a space- or comma-separated scope list into its canonical, de-duplicated, sorted form. */
export function parseScopes(input: string): Scope[] {
  const out = new Set<Scope>();
  for (const raw of input.split(/[\s,]+/)) {
    if (raw === '') continue;
    const match = /^(read|write)_([a-z]+)$/.exec(raw);
    const resource = match ? RESOURCE_NAMES.get(match[2]!) : undefined;
    if (!match || !resource) throw new ScopeParseError(raw.slice(0, 64));
    const scope = `${match[1] as Access}_${resource}`;
    if (!isScope(scope)) throw new ScopeParseError(raw.slice(0, 64));
    out.add(scope);
  }
  return [...out].sort();
}

function isScope(s: string): s is Scope {
  return (ALL_SCOPES as readonly string[]).includes(s);
}

/** Canonical string form stored in the database and returned to clients. */
export function formatScopes(scopes: Iterable<Scope>): string {
  return [...new Set(scopes)].sort().join(',');
}

/** Whether the granted scopes allow `access` on `resource` (write implies read). */
export function allows(granted: readonly Scope[], access: Access, resource: ScopeResource): boolean {
  const held = granted as readonly string[];
  if (held.includes(`write_${resource}`)) return true;
  return access === 'read' && held.includes(`read_${resource}`);
}

/** Whether every scope of `requested` is already covered by `granted`. */
export function covers(granted: readonly Scope[], requested: readonly Scope[]): boolean {
  return requested.every((s) => {
    const [access, resource] = s.split('_') as [Access, ScopeResource];
    return allows(granted, access, resource);
  });
}

// What each scope lets an app do, in the merchant's words, for the consent page and the forms. Each
// write line names only what the Admin API offers for that resource: orders have no delete.
const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  read_products: 'See your products',
  write_products: 'See, create, change and delete your products',
  read_orders: 'See your orders',
  write_orders: 'See, create and change your orders',
  read_customers: 'See your customers',
  write_customers: 'See, create, change and delete your customers',
  read_shop: 'See your store’s name, address, owner email, currency and time zone',
};

/** Plain-words description for the consent page. */
export function describeScope(scope: Scope): string {
  return SCOPE_DESCRIPTIONS[scope];
}

/** Scopes as stored (the canonical comma-separated form); none when there is no grant at all. */
export function storedScopes(value: string | null): Scope[] {
  return value ? (value.split(',').filter(Boolean) as Scope[]) : [];
}

/**
 * Every scope the platform grants, in canonical form (for discovery documents): each access level of
 * each resource that `parseScopes` accepts, so a resource with only a read scope lists only that.
 */
export function supportedScopes(): Scope[] {
  const out: Scope[] = [];
  for (const resource of [...RESOURCES, ...READ_ONLY_RESOURCES]) {
    for (const access of ['read', 'write'] as const) {
      try {
        out.push(...parseScopes(`${access}_${resource}`));
      } catch (err) {
        if (!(err instanceof ScopeParseError)) throw err;
      }
    }
  }
  return [...new Set(out)].sort();
}

// Scopes: `<access>_<resource>`, where write implies read. The vocabulary is the platform family's
// whole published one, so that an app written for the family installs here unchanged; storegate
// serves only some of those resources (RESOURCES, and the shop), and a scope of one it does not
// serve is accepted, shown to the merchant as granting nothing here, and grants nothing. The
// singular forms some existing apps send (`read_product`) are accepted as aliases and stored in the
// canonical form. The shop (the store's own record) can only be read: `write_shop` is accepted
// and grants what `read_shop` does, never a change of the store's name or owner.

import { ScopeParseError } from './errors.ts';

/** The store resources the Admin API serves (each also a table). */
export const RESOURCES = ['products', 'orders', 'customers'] as const;
export type Resource = (typeof RESOURCES)[number];
/** Resources the Admin API serves for reading only, whatever the scope says. */
export const READ_ONLY_RESOURCES = ['shop'] as const;
export type ReadOnlyResource = (typeof READ_ONLY_RESOURCES)[number];
/**
 * Resources of the family's vocabulary that storegate does not serve, in canonical form: a scope
 * of one is accepted at consent and grants nothing; their paths answer 404 naming them.
 */
export const UNSERVED_RESOURCES = [
  'collections',
  'script_tags',
  'content',
  'app_proxy',
  'data',
  'html_tags',
  'comments',
  'price_rules',
  'shop_navigation',
  'search_api',
  'gift_cards',
  'themes',
  'payment_info',
  'inventory',
  'finance',
  'cart_transform',
] as const;
export type UnservedResource = (typeof UNSERVED_RESOURCES)[number];
/** Anything a scope can name. */
export type ScopeResource = Resource | ReadOnlyResource | UnservedResource;
export type Access = 'read' | 'write';
export type Scope = `${Access}_${ScopeResource}`;

const SCOPE_RESOURCES: readonly ScopeResource[] = [...RESOURCES, ...READ_ONLY_RESOURCES, ...UNSERVED_RESOURCES];

/** Every scope an app can hold, in the order forms list them: what storegate serves first. */
export const ALL_SCOPES: readonly Scope[] = SCOPE_RESOURCES.flatMap((r): Scope[] => [`read_${r}`, `write_${r}`]);

/** Whether storegate serves anything under the resource (the unserved ones grant nothing). */
export function isServed(resource: ScopeResource): boolean {
  return !(UNSERVED_RESOURCES as readonly string[]).includes(resource);
}

// Every accepted spelling of a resource, canonical, singular or plural. A Map, not an object
// literal: a lookup in an object also finds what it inherits, so `read_constructor` would name a
// resource.
const RESOURCE_NAMES: ReadonlyMap<string, ScopeResource> = new Map<string, ScopeResource>([
  ...SCOPE_RESOURCES.map((r): [string, ScopeResource] => [r, r]),
  ['product', 'products'],
  ['order', 'orders'],
  ['customer', 'customers'],
  ['collection', 'collections'],
  ['script_tag', 'script_tags'],
  ['html_tag', 'html_tags'],
  ['comment', 'comments'],
  ['price_rule', 'price_rules'],
  ['gift_card', 'gift_cards'],
  ['theme', 'themes'],
  ['cart_transforms', 'cart_transform'],
]);

/** Parses a space- or comma-separated scope list into its canonical, de-duplicated, sorted form. */
export function parseScopes(input: string): Scope[] {
  const out = new Set<Scope>();
  for (const raw of input.split(/[\s,]+/)) {
    if (raw === '') continue;
    const match = /^(read|write)_([a-z_]+)$/.exec(raw);
    const resource = match ? RESOURCE_NAMES.get(match[2]!) : undefined;
    if (!match || !resource) throw new ScopeParseError(raw.slice(0, 64));
    out.add(`${match[1] as Access}_${resource}`);
  }
  return [...out].sort();
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

/** The access and resource a canonical scope names (resources may hold underscores). */
export function splitScope(scope: Scope): [Access, ScopeResource] {
  const at = scope.indexOf('_');
  return [scope.slice(0, at) as Access, scope.slice(at + 1) as ScopeResource];
}

/** Whether every scope of `requested` is already covered by `granted`. */
export function covers(granted: readonly Scope[], requested: readonly Scope[]): boolean {
  return requested.every((s) => {
    const [access, resource] = splitScope(s);
    return allows(granted, access, resource);
  });
}

// What each served scope lets an app do, in the merchant's words, for the consent page and the
// forms. Each write line names only what the Admin API offers for that resource: orders have no
// delete, and the shop no change at all.
const SERVED_DESCRIPTIONS: Record<`${Access}_${Resource | ReadOnlyResource}`, string> = {
  read_products: 'See your products',
  write_products: 'See, create, change and delete your products',
  read_orders: 'See your orders',
  write_orders: 'See, create and change your orders',
  read_customers: 'See your customers',
  write_customers: 'See, create, change and delete your customers',
  read_shop: 'See your store’s name, address, owner email, currency and time zone',
  write_shop: 'See your store’s name, address, owner email, currency and time zone (nothing more: it cannot change your store)',
};

// The unserved resources in the merchant's words.
const UNSERVED_WORDS: Record<UnservedResource, string> = {
  collections: 'product collections',
  script_tags: 'scripts added to your storefront',
  content: 'pages and blog posts',
  app_proxy: 'app pages shown in your storefront',
  data: 'store data exports',
  html_tags: 'HTML added to your storefront',
  comments: 'blog comments',
  price_rules: 'discounts and price rules',
  shop_navigation: 'storefront menus',
  search_api: 'storefront search',
  gift_cards: 'gift cards',
  themes: 'themes',
  payment_info: 'payment settings',
  inventory: 'inventory',
  finance: 'finance reports',
  cart_transform: 'cart changes at checkout',
};

/** Plain-words description for the consent page and the forms. */
export function describeScope(scope: Scope): string {
  const [access, resource] = splitScope(scope);
  if (resource === 'shop' || isServed(resource)) return SERVED_DESCRIPTIONS[scope as keyof typeof SERVED_DESCRIPTIONS];
  const words = UNSERVED_WORDS[resource as UnservedResource];
  return `${access === 'read' ? 'See' : 'See and change'} your ${words} (this store has no such feature yet: grants nothing today)`;
}

/** Scopes as stored (the canonical comma-separated form); none when there is no grant at all. */
export function storedScopes(value: string | null): Scope[] {
  return value ? (value.split(',').filter(Boolean) as Scope[]) : [];
}

/** Every scope the platform accepts, in canonical form (for discovery documents). */
export function supportedScopes(): Scope[] {
  return [...ALL_SCOPES].sort();
}

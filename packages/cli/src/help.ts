// Examples in every command's --help: a newcomer sees how a command is typed before reading its
// options. Commands may add theirs where they are defined (`examples`); the table below holds the
// rest, applied once the whole tree is built, so a command without any is easy to spot.
import type { Command } from 'commander';

/** Adds an "Examples:" section to a command's --help. */
export function examples(cmd: Command, ...lines: string[]): Command {
  withExamples.add(cmd);
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`);
}

const withExamples = new WeakSet<Command>();

const DB = '--database ./data/storegate.db';

/** By command path ("apps rotate-secret"). */
export const EXAMPLES: Record<string, string[]> = {
  '': ['storegate serve --seed-demo', 'storegate stores list', 'storegate apps show <client_id> --json'],
  serve: [
    'storegate serve --seed-demo',
    'storegate serve --port 8080 --log-format json',
    'storegate serve --database postgres://user@db/storegate --no-worker',
  ],
  migrate: ['storegate migrate', `storegate migrate ${DB} --json`],
  seed: ['storegate seed --store demo --products 1000 --orders 500 --customers 200'],
  worker: ['storegate worker --database postgres://user@db/storegate'],
  stores: ['storegate stores list', 'storegate stores show demo --json'],
  'stores create': [
    'storegate stores create shop --owner-email me@shop.test',
    'printf "%s\\n" "$OWNER_PASSWORD" | storegate stores create paris --owner-email me@paris.test --owner-password-stdin ' +
      '--currency EUR --timezone Europe/Paris --json',
  ],
  partners: ['storegate partners create --email dev@partner.test', 'storegate partners list'],
  'partners create': [
    'storegate partners create --email dev@partner.test --json',
    'printf "%s\\n" "$PARTNER_PASSWORD" | storegate partners create --email dev@partner.test --password-stdin',
  ],
  apps: ['storegate apps list', 'storegate apps show <client_id>'],
  'apps create': [
    'storegate apps create --name "My app" --app-url http://localhost:3000/ --redirect-uri http://localhost:3000/auth/callback ' +
      '--scopes "read_products write_orders"',
    'storegate apps create --name "My app" --app-url http://localhost:3000/ --redirect-uri http://localhost:3000/auth/callback ' +
      '--scopes "read_products" --managed-install',
  ],
  'apps update': [
    'storegate apps update <client_id> --privacy-webhook-url http://localhost:3000/privacy',
    'storegate apps update <client_id> --managed-install on',
    'storegate apps update <client_id> --authorization-iss off',
    'storegate apps update <client_id> --ed25519-signatures on',
  ],
  'apps uninstall': ['storegate apps uninstall --store demo --client-id <client_id>'],
  'apps rotate-secret': ['storegate apps rotate-secret <client_id>', 'storegate apps rotate-secret <client_id> --finish'],
  'private-apps': ['storegate private-apps list --store demo', 'storegate private-apps show <id> --store demo'],
  'private-apps create': ['storegate private-apps create --store demo --name "Stock sync" --scopes "read_products write_products"'],
  'private-apps rotate-secret': [
    'storegate private-apps rotate-secret <id> --store demo',
    'storegate private-apps rotate-secret <id> --store demo --finish',
  ],
  webhooks: [
    'storegate webhooks deliveries --status dead',
    'storegate webhooks redeliver <delivery_id>',
    'storegate webhooks replay <subscription_id> --since 2026-01-31T09:00:00Z',
  ],
  'webhooks deliveries': [
    'storegate webhooks deliveries --store demo --limit 20',
    'storegate webhooks deliveries --status dead --attempts --json',
  ],
  'webhooks redeliver': ['storegate webhooks redeliver 42'],
  'webhooks health': ['storegate webhooks health --app <client_id>', 'storegate webhooks health --app <client_id> --hours 24 --json'],
  'webhooks enable': ['storegate webhooks enable 7', 'storegate webhooks enable 7 --json'],
  'webhooks replay': [
    'storegate webhooks replay 7 --since 2026-01-31T09:00:00Z',
    'storegate webhooks replay 7 --since 2026-01-31 --status all --json',
  ],
  'stores list': ['storegate stores list', 'storegate stores list --json'],
  'stores show': ['storegate stores show demo', 'storegate stores show demo --json'],
  'partners list': ['storegate partners list'],
  'partners show': ['storegate partners show dev@partner.test --json'],
  'apps list': ['storegate apps list', 'storegate apps list --json'],
  'apps show': ['storegate apps show <client_id>'],
  'private-apps list': ['storegate private-apps list', 'storegate private-apps list --store demo --json'],
  'private-apps show': ['storegate private-apps show 3 --store demo'],
  installations: ['storegate installations list --store demo', 'storegate installations show 7'],
  'installations list': ['storegate installations list', 'storegate installations list --store demo --app <client_id> --json'],
  'installations show': ['storegate installations show 7 --json'],
  merchants: ['storegate merchants unlock owner@demo.test', 'storegate merchants reset-password owner@demo.test'],
  'merchants unlock': ['storegate merchants unlock owner@demo.test', 'storegate merchants unlock owner@demo.test --store demo --json'],
  'merchants reset-password': [
    'storegate merchants reset-password owner@demo.test',
    'printf "%s\\n" "$NEW_PASSWORD" | storegate merchants reset-password owner@demo.test --password-stdin',
  ],
  keys: ['MASTER_KEY=<old> NEW_MASTER_KEY=<new> storegate keys rotate'],
  'keys rotate': [
    'MASTER_KEY=<old> NEW_MASTER_KEY=<new> storegate keys rotate',
    'storegate keys rotate --master-key <old> --new-master-key <new> --batch-size 500',
  ],
  'keys webhook-signing': ['storegate keys webhook-signing list', 'storegate keys webhook-signing rotate --overlap 7d'],
  'keys webhook-signing list': ['storegate keys webhook-signing list', 'storegate keys webhook-signing list --json'],
  'keys webhook-signing rotate': ['storegate keys webhook-signing rotate', 'storegate keys webhook-signing rotate --overlap 48h'],
  'keys webhook-signing finish': ['storegate keys webhook-signing finish'],
};

/** The path of a command below the root, e.g. "apps rotate-secret" ("" for the root). */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Applies the table to every command of the tree that has no examples yet. */
export function addExamples(root: Command): void {
  const visit = (cmd: Command) => {
    const lines = EXAMPLES[commandPath(cmd)];
    if (lines && !withExamples.has(cmd)) examples(cmd, ...lines);
    for (const sub of cmd.commands) visit(sub);
  };
  visit(root);
}

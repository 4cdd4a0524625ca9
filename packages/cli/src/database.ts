// The platform's services for one administrative command: the configured database, migrated
// first so every command works on a fresh file, and closed afterwards. No HTTP server, no worker.
import { asUsage } from './output.ts';
import { createPlatform, loadConfig, type Config, type RawConfig, type Services } from '@storegate/platform';

/** What a command reads from the environment besides its own flags. */
export function adminConfig(database: string | undefined, extra: RawConfig = {}): Config {
  return asUsage(() =>
    loadConfig({
      database,
      storeDomain: process.env.STORE_DOMAIN,
      publicScheme: process.env.PUBLIC_SCHEME,
      publicPort: process.env.PUBLIC_PORT ?? process.env.PORT,
      masterKey: process.env.MASTER_KEY,
      previousMasterKey: process.env.PREVIOUS_MASTER_KEY,
      ...extra,
    }),
  );
}

export async function withServices<T>(
  database: string | undefined,
  fn: (services: Services) => Promise<T>,
  options: { migrate?: boolean; config?: RawConfig } = {},
): Promise<T> {
  const platform = await createPlatform(adminConfig(database, options.config), { http: false, migrate: options.migrate !== false });
  try {
    return await fn(platform.services);
  } finally {
    await platform.close();
  }
}

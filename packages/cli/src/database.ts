// The platform's services for one administrative command: the configured database, migrated
// first so every command works on a fresh file, and closed afterwards. No HTTP server, no worker.
import { asUsage } from './output.ts';
import { createPlatform, loadConfig, type Config, type RawConfig, type Services } from '@storegate/platform';

/**
 * An administrative command on SQLite waits up to a minute for another process's write lock (a
 * server starting and migrating the same file, say) rather than failing after the server's 5 s.
 */
const ADMIN_SQLITE_BUSY_TIMEOUT_MS = 60_000;

/** What a command reads from the environment besides its own flags. */
export function adminConfig(database: string | undefined, extra: RawConfig = {}): Config {
  const config = asUsage(() =>
    loadConfig({
      database,
      storeDomain: process.env.STORE_DOMAIN,
      publicScheme: process.env.PUBLIC_SCHEME,
      publicPort: process.env.PUBLIC_PORT ?? process.env.PORT,
      masterKey: process.env.MASTER_KEY,
      previousMasterKey: process.env.PREVIOUS_MASTER_KEY,
      passwordScryptN: process.env.PASSWORD_SCRYPT_N,
      ...extra,
    }),
  );
  return { ...config, databaseSettings: { ...config.databaseSettings, sqliteBusyTimeoutMs: ADMIN_SQLITE_BUSY_TIMEOUT_MS } };
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

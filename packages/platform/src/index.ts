export { buildApp, createServices, type Deps, type Services } from './app.ts';
export { loadConfig, rawConfigFromEnv, parseDatabase, storeBaseUrl, platformBaseUrl, DEFAULT_DATABASE, type Config, type RawConfig } from './config.ts';
export { openDatabase, type Db } from './storage/db.ts';
export { migrateToLatest } from './storage/migrate.ts';
export { ConfigError, PlatformError, ValidationFailedError } from './errors.ts';
export { signQuery, signedQueryString, verifyQueryString, canonicalQuery } from './domain/query-signature.ts';
export { SeedService, type SeedCounts } from './services/seed-service.ts';
export { seedDemo, type DemoCredentials } from './services/demo-seed.ts';

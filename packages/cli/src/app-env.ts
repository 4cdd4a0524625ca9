// An app's settings as environment lines, in the names the SDK's examples and examples/app read,
// so `storegate apps env <client_id> > .env` (or `storegate dev`) hands an app everything it needs.
import { platformBaseUrl, type Config, type Services } from '@storegate/platform';

type App = NonNullable<Awaited<ReturnType<Services['apps']['findByClientId']>>>;

export interface AppEnv {
  STOREGATE_CLIENT_ID: string;
  /** Absent when the secret is withheld (production mode without --reveal-secret). */
  STOREGATE_CLIENT_SECRET?: string;
  STOREGATE_SCOPES: string;
  STOREGATE_STORE_DOMAIN: string;
  STOREGATE_API_ORIGIN: string;
  APP_URL: string;
  APP_REDIRECT_URI: string;
}

/** `http://{shop}:8080`: the origin of every store's Admin API, `{shop}` standing for the store's host. */
export function apiOrigin(config: Pick<Config, 'publicScheme' | 'storeDomain' | 'publicPort'>): string {
  return platformBaseUrl(config).replace(`//${config.storeDomain}`, '//{shop}');
}

export function appEnv(services: Services, app: App, withSecret: boolean): AppEnv {
  return {
    STOREGATE_CLIENT_ID: app.client_id,
    ...(withSecret ? { STOREGATE_CLIENT_SECRET: services.apps.clientSecret(app) } : {}),
    STOREGATE_SCOPES: app.scopes.split(',').filter(Boolean).join(' '),
    STOREGATE_STORE_DOMAIN: services.config.storeDomain,
    STOREGATE_API_ORIGIN: apiOrigin(services.config),
    APP_URL: app.app_url,
    APP_REDIRECT_URI: app.redirect_uri,
  };
}

/** One `NAME=value` line each; values with spaces are double-quoted so a shell or dotenv reads them whole. */
export function envLines(env: AppEnv): string {
  return Object.entries(env)
    .map(([name, value]) => `${name}=${/[\s"'#$\\]/.test(String(value)) ? JSON.stringify(value) : value}`)
    .join('\n');
}

// `storegate serve --seed-demo` (npm start): the demo store, its merchant, a partner and a public
// app pointing at the example app, and a few hundred records. Idempotent.
import type { Services } from './services.ts';

export const DEMO = {
  store: 'demo',
  merchantEmail: 'merchant@demo.test',
  merchantPassword: 'demo-password',
  partnerEmail: 'partner@demo.test',
  partnerPassword: 'demo-password',
  appName: 'Demo app',
  appUrl: 'http://localhost:3000/',
  redirectUri: 'http://localhost:3000/auth/callback',
  scopes: 'read_products write_products read_orders read_customers',
} as const;

export interface DemoCredentials {
  created: boolean;
  storeName: string;
  merchantEmail: string;
  merchantPassword: string;
  partnerEmail: string;
  partnerPassword: string;
  clientId: string;
  clientSecret: string;
  appUrl: string;
  redirectUri: string;
  scopes: string;
}

export async function seedDemo(services: Services): Promise<DemoCredentials> {
  let created = false;
  let store = await services.accounts.findStoreByName(DEMO.store);
  if (!store) {
    store = await services.accounts.createStore({ name: DEMO.store, ownerEmail: DEMO.merchantEmail, ownerPassword: DEMO.merchantPassword });
    await services.seeds.seed(store.id, { products: 300, orders: 120, customers: 150 });
    created = true;
  }
  const partner =
    (await services.accounts.findPartnerByEmail(DEMO.partnerEmail)) ??
    (await services.accounts.createPartner({ email: DEMO.partnerEmail, password: DEMO.partnerPassword }));
  let app = (await services.apps.listApps()).find((a) => a.name === DEMO.appName && a.partner_id === partner.id);
  if (!app) {
    app = (
      await services.apps.createApp({
        name: DEMO.appName,
        appUrl: DEMO.appUrl,
        redirectUri: DEMO.redirectUri,
        scopes: DEMO.scopes,
        partnerId: partner.id,
        // The demo app is meant for the SDK, whose callback checks iss.
        authorizationIss: true,
      })
    ).app;
  }
  return {
    created,
    storeName: store.name,
    merchantEmail: DEMO.merchantEmail,
    merchantPassword: DEMO.merchantPassword,
    partnerEmail: DEMO.partnerEmail,
    partnerPassword: DEMO.partnerPassword,
    clientId: app.client_id,
    clientSecret: services.apps.clientSecret(app),
    appUrl: app.app_url,
    redirectUri: app.redirect_uri,
    scopes: DEMO.scopes,
  };
}

// A public app as the pages, the OAuth routes and the partner API know it: who made it, where it is
// reached, what it asks for and how it wants its redirects and webhooks. Its sealed secrets are no
// part of it, so nothing that holds a profile can show or log one by mistake.

export interface AppProfile {
  id: number;
  client_id: string;
  /** The partner who registered it; null for an app the operator registered. */
  partner_id: number | null;
  name: string;
  app_url: string;
  redirect_uri: string;
  /** The scopes it asks for (stored form). */
  scopes: string;
  /** Where the privacy topics go; null when the app has set none (then it is sent none). */
  privacy_webhook_url: string | null;
  /** 1 when the redirect with the code carries `iss` (signed with the other parameters), else 0. */
  authorization_iss: number;
  /** 1 when the platform runs consent for `scopes` and opens the app with a launch token, else 0. */
  managed_install: number;
  /** 1 when its webhooks also carry `v1a` (Ed25519) signatures by the platform's keys, else 0. */
  webhook_signature_ed25519: number;
}

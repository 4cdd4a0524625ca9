// storegate apps deploy: the configuration file applied to the platform. Everything is checked
// before anything is written (the file, then the platform's own rules for names, URLs and scopes),
// so a bad file changes nothing; a file that matches the platform changes nothing and says so.
import { ValidationFailedError } from '@storegate/platform';
import { readAppConfig, fieldErrors } from './app-config-file.ts';
import { subscriptionLines, subscriptionsJson, type SyncReport } from './app-webhooks-output.ts';
import { withServices } from './database.ts';
import { notFound, print } from './output.ts';

interface DeployOptions {
  database?: string;
  json: boolean;
  config: string;
}

const sortedScopes = (s: string) =>
  s
    .split(/[\s,]+/)
    .filter(Boolean)
    .sort()
    .join(' ');

export async function deployAppConfig(opts: DeployOptions): Promise<void> {
  const file = readAppConfig(opts.config);
  await withServices(opts.database, async (services) => {
    const checked = services.apps.checkApp({
      name: file.name,
      appUrl: file.appUrl,
      redirectUri: file.redirectUri,
      scopes: file.scopes,
      ...(file.privacyWebhookUrl ? { privacyWebhookUrl: file.privacyWebhookUrl } : {}),
    });
    if (Object.keys(checked.errors).length > 0) fieldErrors(opts.config, checked.errors);
    // The addresses as the platform checks them (resolved in production), before anything is written.
    try {
      for (const [i, s] of file.subscriptions.entries()) await services.appWebhooks.check(s, `subscriptions[${i}].`);
    } catch (err) {
      if (err instanceof ValidationFailedError) fieldErrors(opts.config, err.errors);
      throw err;
    }
    const changes: { field: string; from: string | boolean | null; to: string | boolean | null }[] = [];
    let app = file.clientId === undefined ? undefined : await services.apps.findByClientId(file.clientId);
    if (file.clientId !== undefined && !app)
      throw notFound(
        `${opts.config}: client_id "${file.clientId.slice(0, 100)}" names no app on this platform (remove it to create the app)`,
      );
    let created = false;
    try {
      if (!app) {
        app = (
          await services.apps.createApp({
            name: file.name,
            appUrl: file.appUrl,
            redirectUri: file.redirectUri,
            scopes: file.scopes,
            ...(file.privacyWebhookUrl ? { privacyWebhookUrl: file.privacyWebhookUrl } : {}),
            ...(file.managedInstall !== undefined ? { managedInstall: file.managedInstall } : {}),
            ...(file.authorizationIss !== undefined ? { authorizationIss: file.authorizationIss } : {}),
          })
        ).app;
        created = true;
      } else {
        const wantedScopes = sortedScopes(checked.scopes.join(' '));
        const haveScopes = sortedScopes(app.scopes);
        if (app.name !== checked.name) changes.push({ field: 'name', from: app.name, to: checked.name });
        if (haveScopes !== wantedScopes) changes.push({ field: 'scopes', from: haveScopes, to: wantedScopes });
        if (app.app_url !== file.appUrl) changes.push({ field: 'application_url', from: app.app_url, to: file.appUrl });
        if (app.redirect_uri !== file.redirectUri) changes.push({ field: 'redirect_url', from: app.redirect_uri, to: file.redirectUri });
        const privacy = file.privacyWebhookUrl === undefined ? undefined : file.privacyWebhookUrl.trim() || null;
        if (privacy !== undefined && (app.privacy_webhook_url ?? null) !== privacy)
          changes.push({ field: 'privacy_webhook_url', from: app.privacy_webhook_url ?? null, to: privacy });
        const managedNow = app.managed_install === 1;
        const managed = file.managedInstall === undefined || file.managedInstall === managedNow ? undefined : file.managedInstall;
        if (managed !== undefined) changes.push({ field: 'managed_install', from: managedNow, to: managed });
        const issNow = app.authorization_iss === 1;
        if (file.authorizationIss !== undefined && file.authorizationIss !== issNow)
          changes.push({ field: 'authorization_iss', from: issNow, to: file.authorizationIss });
        // The platform asks merchants for the declared scopes of an app it installs, so it keeps some.
        if ((managed ?? managedNow) && checked.scopes.length === 0)
          fieldErrors(opts.config, { scopes: ['must not be empty while managed_install is on (set managed_install = false first)'] });
        // The privacy address is checked (resolved in production) before the other fields change.
        if (privacy !== undefined && changes.some((c) => c.field === 'privacy_webhook_url'))
          await services.apps.setPrivacyWebhookUrl(app.id, privacy ?? '');
        // Off before the scopes change and on after, so the platform never sees a managed app without scopes.
        if (managed === false) await services.apps.setManagedInstall(app.id, false);
        if (changes.some((c) => c.field === 'name' || c.field === 'scopes'))
          await services.apps.updateProfile(app.id, { name: checked.name, scopes: file.scopes });
        if (changes.some((c) => c.field === 'application_url' || c.field === 'redirect_url'))
          await services.apps.updateUrls(app.id, file.appUrl, file.redirectUri);
        if (managed === true) await services.apps.setManagedInstall(app.id, true);
        if (changes.some((c) => c.field === 'authorization_iss')) await services.apps.setAuthorizationIss(app.id, file.authorizationIss!);
      }
    } catch (err) {
      if (err instanceof ValidationFailedError) fieldErrors(opts.config, err.errors);
      throw err;
    }
    const ed25519Now = app.webhook_signature_ed25519 === 1;
    if (file.ed25519Signatures !== undefined && file.ed25519Signatures !== ed25519Now) {
      await services.webhookSignatures.setEd25519(app.id, file.ed25519Signatures);
      changes.push({ field: 'ed25519_signatures', from: ed25519Now, to: file.ed25519Signatures });
    }
    // The file's list becomes the app's app-level list: copied into every store that installs it.
    let synced: SyncReport;
    try {
      synced = await services.appWebhooks.sync(app.id, file.subscriptions);
    } catch (err) {
      if (err instanceof ValidationFailedError) fieldErrors(opts.config, err.errors);
      throw err;
    }
    const lines: string[] = [];
    if (created)
      lines.push(
        `created app "${app.name}"`,
        `client_id      ${app.client_id}`,
        `add this line to ${opts.config} so the next deploy updates this app:`,
        `  client_id = "${app.client_id}"`,
        `its secret and settings as env lines: storegate apps env ${app.client_id}`,
      );
    if (created && app.managed_install === 1)
      lines.push('managed install: merchants install it from the store admin, asked for its scopes there; it opens with a launch token');
    const managedAfter = changes.find((c) => c.field === 'managed_install')?.to ?? app.managed_install === 1;
    for (const c of changes) {
      lines.push(`${c.field}: ${c.from ?? '(none)'} -> ${c.to ?? '(none)'}`);
      if (c.field === 'managed_install')
        lines.push(
          c.to
            ? '  (merchants now install it from the store admin, asked for its scopes there; it opens with a launch token to exchange)'
            : '  (merchants now install it through its own authorization request)',
        );
      if (c.field === 'scopes')
        lines.push(
          managedAfter
            ? '  (merchants of stores that installed the app are asked for them the next time they open it; until then their grant stays)'
            : '  (stores that installed the app keep what they granted until the merchant installs it again)',
        );
    }
    lines.push(...subscriptionLines(synced));
    const subscriptionsChanged = synced.added.length + synced.changed.length + synced.removed.length > 0;
    if (!created && changes.length === 0 && !subscriptionsChanged) lines.unshift(`"${app.name}" (${app.client_id}): nothing to change`);
    print(
      opts.json,
      {
        client_id: app.client_id,
        created,
        changes,
        subscriptions: subscriptionsJson(synced),
      },
      lines.join('\n'),
    );
  });
}

// storegate apps deploy: the configuration file applied to the platform. Everything is checked
// before anything is written (the file, then the platform's own rules for names, URLs and scopes),
// so a bad file changes nothing; a file that matches the platform changes nothing and says so.
import { CURRENT_VERSION, ValidationFailedError } from '@storegate/platform';
import { readAppConfig, fieldErrors } from './app-config-file.ts';
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
    const changes: { field: string; from: string | null; to: string | null }[] = [];
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
        // The privacy address is checked (resolved in production) before the other fields change.
        if (privacy !== undefined && changes.some((c) => c.field === 'privacy_webhook_url'))
          await services.apps.setPrivacyWebhookUrl(app.id, privacy ?? '');
        if (changes.some((c) => c.field === 'name' || c.field === 'scopes'))
          await services.apps.updateProfile(app.id, { name: checked.name, scopes: file.scopes });
        if (changes.some((c) => c.field === 'application_url' || c.field === 'redirect_url'))
          await services.apps.updateUrls(app.id, file.appUrl, file.redirectUri);
      }
    } catch (err) {
      if (err instanceof ValidationFailedError) fieldErrors(opts.config, err.errors);
      throw err;
    }
    const subscriptions = await services.subscriptions.applyForApp(app.id, file.subscriptions, CURRENT_VERSION);
    const added = subscriptions.filter((s) => s.result === 'created');
    const skipped = subscriptions.filter((s) => s.result === 'skipped');
    const lines: string[] = [];
    if (created)
      lines.push(
        `created app "${app.name}"`,
        `client_id      ${app.client_id}`,
        `add this line to ${opts.config} so the next deploy updates this app:`,
        `  client_id = "${app.client_id}"`,
        `its secret and settings as env lines: storegate apps env ${app.client_id}`,
      );
    for (const c of changes) lines.push(`${c.field}: ${c.from ?? '(none)'} -> ${c.to ?? '(none)'}`);
    if (changes.some((c) => c.field === 'scopes'))
      lines.push('  (stores that installed the app keep what they granted until the merchant installs it again)');
    for (const s of added) lines.push(`subscribed ${s.topic} -> ${s.address} in ${s.store}`);
    for (const s of skipped) lines.push(`not subscribed ${s.topic} in ${s.store}: ${s.reason}`);
    if (!created && changes.length === 0 && added.length === 0) lines.unshift(`"${app.name}" (${app.client_id}): nothing to change`);
    print(
      opts.json,
      {
        client_id: app.client_id,
        created,
        changes,
        subscriptions: subscriptions.map(({ store, topic, address, result, reason }) => ({
          store,
          topic,
          address,
          result,
          ...(reason ? { reason } : {}),
        })),
      },
      lines.join('\n'),
    );
  });
}

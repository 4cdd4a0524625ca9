// storegate apps env (an app's settings as environment lines) and storegate apps deploy (the app's
// configuration file, storegate.app.toml, applied to the platform: created or brought in line,
// printing each change, so the file can live under version control beside the app).
import type { Command } from 'commander';
import { appEnv, envLines } from './app-env.ts';
import { withServices } from './database.ts';
import { common } from './options.ts';
import { examples } from './help.ts';
import { notFound, print } from './output.ts';
import { deployAppConfig } from './app-deploy.ts';

const ENV_HELP = `
The names are the ones examples/app and the SDK's examples read. The client secret is printed in
development; with NODE_ENV=production it is left out unless --reveal-secret is given (whoever runs
this command with the master key can read every secret anyway; the flag keeps it off a screen by default).`;

const DEPLOY_HELP = `
The file (TOML):
  client_id = "..."                 # absent: the app is created, and its client_id printed to add here
  name = "My app"
  application_url = "http://localhost:3000/"
  redirect_url = "http://localhost:3000/auth/callback"
  scopes = ["read_products", "write_products"]
  managed_install = true            # optional: the platform asks merchants for the scopes, the app gets a launch token
  authorization_iss = false         # optional: the redirect with the code carries no iss (new apps get it)
  privacy_webhook_url = "http://localhost:3000/privacy"   # optional; "" removes it
  [[webhooks.subscriptions]]        # the app's app-level subscriptions: in every store that installs it
  topic = "products/update"
  address = "http://localhost:3000/webhooks"
  filter = "status:active AND price:>=10"   # optional: only the changes that match
  include_fields = ["id", "title", "price"]  # optional: only these fields in each body

Running it again changes nothing and says so. An optional field the file leaves out is left as it is
(a new app: managed_install false, authorization_iss true). The file's subscriptions become the app's
app-level list (also "storegate apps webhooks"): each new one is copied into every store the app is
installed in now and into every store that installs it later (topics the store's grant allows); one
the file no longer lists is removed with its copies; one whose filter or include_fields differ
(same topic and address) is changed in place, with every copy ("changed" lines; left out means none).
Subscriptions the app made itself through the
Admin API are left alone. A store where a cap leaves no room for a copy is skipped and named.
Scope changes apply to the next install (merchants consent again); with
managed_install = true, merchants are asked for them the next time they open the app, and the file
must list some scopes. A file with mistakes changes nothing: each one is reported with its line and
field (exit 1).`;

export function registerAppConfigCommands(program: Command): void {
  const apps = program.commands.find((c) => c.name() === 'apps');
  if (!apps) throw new Error('the "apps" command must be registered first');
  const env = common(apps.command('env <client_id>').description("print the app's settings as environment lines (NAME=value)"))
    .option('--reveal-secret', 'print the client secret in production mode too', false)
    .addHelpText('after', ENV_HELP)
    .action(async (clientId: string, opts: { database?: string; json: boolean; revealSecret: boolean }) => {
      await withServices(opts.database, async (services) => {
        const app = await services.apps.findByClientId(clientId);
        if (!app) throw notFound(`no app with client_id "${clientId.slice(0, 100)}"`);
        const withSecret = process.env.NODE_ENV !== 'production' || opts.revealSecret;
        const env = appEnv(services, app, withSecret);
        const note = withSecret ? '' : '\n# STOREGATE_CLIENT_SECRET left out (production mode): add --reveal-secret to print it';
        print(opts.json, env, `${envLines(env)}${note}`);
      });
    });

  const deploy = common(apps.command('deploy').description('create or update an app from its configuration file (storegate.app.toml)'))
    .option('--config <file>', 'the configuration file', 'storegate.app.toml')
    .addHelpText('after', DEPLOY_HELP)
    .action(async (opts: { database?: string; json: boolean; config: string }) => {
      await deployAppConfig(opts);
    });
  examples(env, 'storegate apps env <client_id> > .env', 'storegate apps env <client_id> --json');
  examples(deploy, 'storegate apps deploy', 'storegate apps deploy --config path/to/storegate.app.toml --json');
}

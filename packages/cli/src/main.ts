// storegate: runs the platform (serve, worker, migrate) and administers it (stores, apps, seed...).
import { Command, CommanderError } from 'commander';
import { CliError, reasonOf } from './output.ts';
import { registerAdminCommands } from './admin.command.ts';
import { registerKeysCommands } from './keys.command.ts';
import { registerRotationCommands } from './rotation.command.ts';
import { registerServeCommands } from './serve.command.ts';
import { registerWebhookCommands } from './webhooks.command.ts';
import { registerAppConfigCommands } from './app-config.command.ts';
import { registerWebhookToolCommands } from './webhook-tools.command.ts';
import { registerDevCommand } from './dev.command.ts';

const program = new Command('storegate')
  .description('storegate: OAuth install flow, access tokens, Admin API and signed webhooks for a store platform')
  .showHelpAfterError()
  .exitOverride();

registerServeCommands(program);
registerAdminCommands(program);
registerRotationCommands(program);
registerWebhookCommands(program);
registerKeysCommands(program);
registerAppConfigCommands(program);
registerWebhookToolCommands(program);
registerDevCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`storegate: ${reasonOf(err).split('\n')[0]}\n`);
    process.exitCode = err instanceof CliError ? 2 : 1;
  }
}

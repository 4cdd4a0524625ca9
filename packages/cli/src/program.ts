// The `storegate` command tree, and running it with the exit codes and error output every command
// shares (see output.ts). Kept apart from main.ts so tests can parse command lines in-process.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { registerAdminCommands } from './admin.command.ts';
import { registerDirectoryCommands } from './directory.command.ts';
import { registerMerchantCommands } from './merchants.command.ts';
import { addExamples } from './help.ts';
import { registerKeysCommands } from './keys.command.ts';
import { registerWebhookSigningCommands } from './webhook-signing.command.ts';
import { EXIT_USAGE, failureOf, formatFailure } from './output.ts';
import { registerRotationCommands } from './rotation.command.ts';
import { registerServeCommands } from './serve.command.ts';
import { registerWebhookCommands } from './webhooks.command.ts';
import { registerWebhookRecoveryCommands } from './webhook-recovery.command.ts';
import { registerAppConfigCommands } from './app-config.command.ts';
import { registerAppWebhookCommands } from './app-webhooks.command.ts';
import { registerWebhookToolCommands } from './webhook-tools.command.ts';
import { registerWebhookHealthCommand } from './webhook-health.command.ts';
import { registerDevCommand } from './dev.command.ts';
import { registerResourceServerCommands } from './resource-servers.command.ts';
import { registerApiHealthCommands } from './api-health.command.ts';

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/** The CLI package's version: src/ and dist/ both sit one folder below package.json. */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Every command of `storegate`. Settings made here before the commands are added (output, exit
 * override, help after an error) are inherited by each subcommand.
 */
export function buildProgram(io: Io = processIo, json = false): Command {
  const program = new Command('storegate')
    .description('storegate: OAuth install flow, access tokens, Admin API and signed webhooks for a store platform')
    .version(cliVersion(), '-V, --version', 'print the version of storegate')
    .configureOutput({
      writeOut: (text) => io.out(text),
      // With --json a usage error is reported as one JSON object, without commander's own text.
      writeErr: (text) => {
        if (!json) io.err(text);
      },
    })
    .showHelpAfterError(!json)
    .exitOverride();
  registerServeCommands(program);
  registerAdminCommands(program);
  registerRotationCommands(program);
  registerWebhookCommands(program);
  registerWebhookRecoveryCommands(program);
  registerKeysCommands(program);
  registerWebhookSigningCommands(program);
  registerDirectoryCommands(program);
  registerMerchantCommands(program);
  registerAppConfigCommands(program);
  registerAppWebhookCommands(program);
  registerWebhookToolCommands(program);
  registerWebhookHealthCommand(program);
  registerDevCommand(program);
  registerResourceServerCommands(program);
  registerApiHealthCommands(program);
  addExamples(program);
  return program;
}

/** Runs one command line (`argv` without node and the script) and answers its exit code. */
export async function runProgram(argv: string[], io: Io = processIo): Promise<number> {
  const json = argv.includes('--json');
  const program = buildProgram(io, json);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return 0;
      const message = err.message.replace(/^error: /, '');
      if (json) io.err(formatFailure({ code: 'usage', message, exitCode: EXIT_USAGE }, true));
      return EXIT_USAGE;
    }
    const failure = failureOf(err);
    io.err(formatFailure(failure, json));
    return failure.exitCode;
  }
}

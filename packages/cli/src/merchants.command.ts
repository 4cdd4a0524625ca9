// storegate merchants unlock|reset-password: helping a merchant who cannot log in.
import type { Command } from 'commander';
import { withServices } from './database.ts';
import { common } from './options.ts';
import { print } from './output.ts';
import { firstLineOfStdin } from './password-input.ts';

interface Common {
  database?: string;
  json: boolean;
}

export function registerMerchantCommands(program: Command): void {
  const merchants = program.command('merchants').description('store owners who log in to the store admin');
  common(
    merchants
      .command('unlock <email>')
      .description('lift the login lock set after too many wrong passwords (every store it owns, or --store)'),
  )
    .option('--store <name>', 'only in this store')
    .action(async (email: string, opts: Common & { store?: string }) => {
      await withServices(opts.database, async (services) => {
        const result = await services.directory.unlockMerchant(email, opts.store);
        print(
          opts.json,
          result,
          result.unlocked.length > 0
            ? `unlocked ${result.email} in ${result.unlocked.join(', ')}: it can log in again now`
            : `${result.email} was not locked out; its failed attempts are forgotten`,
        );
      });
    });

  common(
    merchants
      .command('reset-password <email>')
      .description("set a merchant's password, end its sessions and lift its lock; generates one unless --password-stdin"),
  )
    .option('--password-stdin', 'read the new password from the first line of standard input (at least 8 characters)', false)
    .action(async (email: string, opts: Common & { passwordStdin: boolean }) => {
      const password = opts.passwordStdin ? await firstLineOfStdin() : undefined;
      await withServices(opts.database, async (services) => {
        const result = await services.directory.resetMerchantPassword(email, password);
        const ended = `${result.sessions_ended} session${result.sessions_ended === 1 ? '' : 's'} ended`;
        print(
          opts.json,
          result,
          result.generated_password
            ? `new password of ${result.email} (shown once; pass it on safely):\n${result.generated_password}\n${ended}`
            : `password of ${result.email} changed; ${ended}`,
        );
      });
    });
}

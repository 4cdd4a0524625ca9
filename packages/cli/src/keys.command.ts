// storegate keys rotate: re-seals every secret in the database under a new master key while the
// nodes keep running (they were restarted with the new key and the old one as previous first).
import { Option, type Command } from 'commander';
import { createPlatform, parseMasterKey } from '@storegate/platform';
import { adminConfig } from './database.ts';
import { common } from './options.ts';
import { UsageError, asUsage, print } from './output.ts';

interface KeysRotateOptions {
  database?: string;
  json: boolean;
  masterKey?: string;
  newMasterKey?: string;
  batchSize?: string;
}

export function registerKeysCommands(program: Command): void {
  const keys = program.command('keys').description('the master key that seals secrets at rest');
  common(keys.command('rotate').description('re-seal every secret under a new master key (nodes keep running)'))
    .addOption(new Option('--master-key <key>', 'the key the secrets are sealed with now (hex or base64)').env('MASTER_KEY'))
    .addOption(new Option('--new-master-key <key>', 'the key to seal them with from now on (hex or base64)').env('NEW_MASTER_KEY'))
    .addOption(new Option('--batch-size <n>', 'rows re-sealed per transaction (default 200)'))
    .action(async (opts: KeysRotateOptions) => {
      if (!opts.masterKey)
        throw new UsageError("--master-key (MASTER_KEY): the key the database's secrets are sealed with now is required");
      if (!opts.newMasterKey) throw new UsageError('--new-master-key (NEW_MASTER_KEY) is required');
      const batchSize = opts.batchSize === undefined ? 200 : Number(opts.batchSize);
      if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000)
        throw new UsageError('--batch-size: expected a whole number from 1 to 10000');
      const next = asUsage(() => parseMasterKey('--new-master-key', opts.newMasterKey as string));
      // Holding both keys, the command starts whether or not an earlier run switched already.
      const config = adminConfig(opts.database, { masterKey: opts.masterKey, previousMasterKey: opts.newMasterKey });
      const platform = await createPlatform(config, { http: false });
      const report = await platform.services.keyRotation
        .rotate(config.masterKey, next, {
          batchSize,
          onBatch: (source, resealed) => {
            if (!opts.json && resealed > 0) process.stderr.write(`re-sealed ${resealed} in ${source}\n`);
          },
        })
        .finally(() => platform.close());
      const total = Object.values(report.resealed).reduce((a, b) => a + b, 0);
      const by = Object.entries(report.resealed)
        .map(([source, n]) => `${source} ${n}`)
        .join(', ');
      const head = report.switched
        ? `master key changed from key id ${report.from} to key id ${report.to}`
        : `master key id ${report.to} was current already (an earlier run switched from key id ${report.from})`;
      print(
        opts.json,
        { ...report, resealedTotal: total },
        `${head}; re-sealed ${total} secrets (${by}); ${report.alreadyNew} were under the new key already\n` +
          'next: restart every node with the new --master-key alone (drop --previous-master-key)',
      );
      if (report.unreadable > 0) throw new Error(`${report.unreadable} sealed values open with neither key and were left as they are`);
    });
}

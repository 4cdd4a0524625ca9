// Where the master key comes from: the flag, or in development a generated key kept beside the data.
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../domain/errors.ts';
import type { Config, DatabaseConfig } from './types.ts';

/** Master key: 32+ bytes as hex or base64. Generated and kept beside the SQLite file in development. */
export function resolveMasterKey(raw: string | undefined, mode: Config['mode'], database: DatabaseConfig): Buffer {
  if (raw !== undefined && raw !== '') return parseMasterKey('--master-key', raw);
  if (mode === 'production') throw new ConfigError('--master-key (MASTER_KEY) is required in production mode');
  if (database.dialect === 'sqlite' && database.path === ':memory:') return randomBytes(32);
  const dir = database.dialect === 'sqlite' ? dirname(database.path) : resolve('./data');
  const file = resolve(dir, 'master.key');
  if (existsSync(file)) return readKeyFile(file);
  mkdirSync(dir, { recursive: true });
  // Several processes may start together on a fresh folder: each writes its key to a file of its
  // own and links it into place, which succeeds for exactly one; the others read the winner's
  // complete file, so every process ends up with the same key and nobody reads a half-written one.
  const key = randomBytes(32);
  const own = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(own, `${key.toString('hex')}\n`, { mode: 0o600 });
  try {
    linkSync(own, file);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readKeyFile(file);
  } finally {
    unlinkSync(own);
  }
}

function readKeyFile(file: string): Buffer {
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}

/** A master key given as hex or base64 (32 bytes at least); `flag` names the setting in errors, never the value. */
export function parseMasterKey(flag: string, raw: string): Buffer {
  const key = /^[0-9a-f]+$/i.test(raw) && raw.length % 2 === 0 ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length < 32) throw new ConfigError(`${flag}: must be at least 32 bytes (64 hex characters)`);
  return key;
}

/** The key being replaced while the master key changes (`--previous-master-key`); absent otherwise. */
export function resolvePreviousMasterKey(raw: string | undefined): Buffer | undefined {
  return raw === undefined || raw === '' ? undefined : parseMasterKey('--previous-master-key', raw);
}

// The operator's resource servers (see ports/resource-servers.ts), on SQLite and PostgreSQL alike.
import type { Kysely } from 'kysely';
import type { ResourceServerRepository, ResourceServerRow } from '../ports/resource-servers.ts';
import type { Database } from '../schema.ts';
import { refusingDuplicates } from '../unique-violation.ts';

const COLUMNS = ['id', 'client_id', 'name', 'secret_hash', 'created_at'] as const;

export class SqlResourceServerRepository implements ResourceServerRepository {
  constructor(private readonly k: Kysely<Database>) {}

  insert(input: { clientId: string; name: string; secretHash: string; now: number }): Promise<ResourceServerRow> {
    return refusingDuplicates('resource_servers', () =>
      this.k
        .insertInto('resource_servers')
        .values({ client_id: input.clientId, name: input.name, secret_hash: input.secretHash, created_at: input.now })
        .returning(COLUMNS)
        .executeTakeFirstOrThrow(),
    );
  }

  findByClientId(clientId: string): Promise<ResourceServerRow | undefined> {
    return this.k.selectFrom('resource_servers').select(COLUMNS).where('client_id', '=', clientId).executeTakeFirst();
  }

  list(): Promise<ResourceServerRow[]> {
    return this.k.selectFrom('resource_servers').select(COLUMNS).orderBy('id').execute();
  }

  async delete(clientId: string): Promise<boolean> {
    const res = await this.k.deleteFrom('resource_servers').where('client_id', '=', clientId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}

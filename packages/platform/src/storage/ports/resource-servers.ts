// The port on the operator's resource servers: the clients of token introspection, created and
// deleted only by the operator (CLI). Platform-wide, not a store's: no method names a store.
import type { Selectable } from 'kysely';
import type { Database } from '../schema.ts';

type ResourceServers = Selectable<Database['resource_servers']>;

export interface ResourceServerRow extends Pick<ResourceServers, 'id' | 'client_id' | 'name' | 'created_at'> {
  /** SHA-256 (base64url) of the secret; the secret itself is never stored. */
  secret_hash: ResourceServers['secret_hash'];
}

export interface ResourceServerRepository {
  /** Throws DuplicateRecordError (record 'resource_servers') when the client_id is taken. */
  insert(input: { clientId: string; name: string; secretHash: string; now: number }): Promise<ResourceServerRow>;
  /** Read on every introspection request. */
  findByClientId(clientId: string): Promise<ResourceServerRow | undefined>;
  /** Every resource server, oldest first. */
  list(): Promise<ResourceServerRow[]>;
  /** Deletes it; false when there was none with that client_id. */
  delete(clientId: string): Promise<boolean>;
}

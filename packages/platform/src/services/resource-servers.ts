// The operator's resource servers: the only clients that may introspect tokens. The operator
// creates one with the CLI and hands its client_id and secret to a service of its own that is
// given app tokens (an API gateway, a second API); the secret is shown once, then only its hash is
// kept. Deleting one ends its access at the next request: every request authenticates anew.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../domain/clock.ts';
import { InvalidClient, NotFoundError, ValidationFailedError } from '../domain/errors.ts';
import { hashToken, looksLike, newToken } from '../domain/tokens.ts';
import type { ResourceServerRepository, ResourceServerRow } from '../storage/ports/resource-servers.ts';

/** What the operator sees of a resource server: never its secret. */
export interface ResourceServerSummary {
  client_id: string;
  name: string;
  /** ISO 8601. */
  created_at: string;
}

/** Client ids of resource servers start so: an operator tells them from an app's at a glance. */
const CLIENT_ID_PREFIX = 'rs_';

export class ResourceServers {
  constructor(
    private readonly repo: ResourceServerRepository,
    private readonly clock: Clock,
  ) {}

  /** A new credential; the secret is in this answer and nowhere else. */
  async create(input: { name: string }): Promise<ResourceServerSummary & { client_secret: string }> {
    const name = input.name?.trim() ?? '';
    if (name.length < 1 || name.length > 100 || /\p{Cc}/u.test(name))
      throw new ValidationFailedError({ name: ['must be 1 to 100 characters, without control characters'] });
    const clientSecret = newToken('resourceServerSecret');
    const row = await this.repo.insert({
      clientId: CLIENT_ID_PREFIX + randomBytes(16).toString('hex'),
      name,
      secretHash: hashToken(clientSecret),
      now: this.clock(),
    });
    return { ...summary(row), client_secret: clientSecret };
  }

  async list(): Promise<ResourceServerSummary[]> {
    return (await this.repo.list()).map(summary);
  }

  async delete(clientId: string): Promise<void> {
    if (!(await this.repo.delete(clientId))) throw new NotFoundError(`no resource server with client_id "${clientId.slice(0, 100)}"`);
  }

  /**
   * The resource server behind a presented client_id and secret; `InvalidClient` for anything
   * else, an app's client credentials included. Every failure reads the same.
   */
  async authenticate(clientId: string | undefined, clientSecret: string | undefined): Promise<ResourceServerRow> {
    if (!clientId) throw new InvalidClient('client_id is required');
    if (!clientSecret) throw new InvalidClient('client_secret is required');
    // Neither the id nor the secret of a resource server can look otherwise: not worth a lookup.
    if (!clientId.startsWith(CLIENT_ID_PREFIX) || clientId.length > 100 || !looksLike('resourceServerSecret', clientSecret))
      throw new InvalidClient();
    const row = await this.repo.findByClientId(clientId);
    if (!row) throw new InvalidClient();
    const given = Buffer.from(hashToken(clientSecret));
    const stored = Buffer.from(row.secret_hash);
    if (given.length !== stored.length || !timingSafeEqual(given, stored)) throw new InvalidClient();
    return row;
  }
}

function summary(row: ResourceServerRow): ResourceServerSummary {
  return { client_id: row.client_id, name: row.name, created_at: new Date(row.created_at).toISOString() };
}

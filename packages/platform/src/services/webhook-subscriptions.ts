// An app's webhook subscriptions through the Admin API: list, count, subscribe, get, update,
// delete. The caller is the authenticated principal; a subscription belongs to it and to its store.
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { CursorCodec } from '../domain/cursor.ts';
import { DuplicateRecordError, ForbiddenError, NotFoundError, PreconditionFailedError, ValidationFailedError } from '../domain/errors.ts';
import { satisfies, type IfMatch } from '../domain/etags.ts';
import { MAX_STORE_SUBSCRIPTIONS_PER_TOPIC, MAX_SUBSCRIPTIONS_PER_OWNER, MAX_SUBSCRIPTIONS_PER_TOPIC } from '../domain/limits.ts';
import { allows } from '../domain/scopes.ts';
import { checkWebhookAddress } from '../domain/ssrf.ts';
import { topicResource, type WebhookTopic } from '../domain/webhook-topics.ts';
import type { ListFilters } from '../domain/list-filters.ts';
import {
  checkSubscriptionShape,
  readIncludeFields,
  storedIncludeFields,
  type SubscriptionShape,
} from '../domain/webhook-subscription-shape.ts';
import type { Repositories } from '../storage/ports/repositories.ts';
import type { SubscriptionRow } from '../storage/ports/rows.ts';
import type { Storage } from '../storage/ports/storage.ts';
import type { ApiPrincipal } from './api-auth.ts';
import type { WriteStep } from './idempotency.ts';
import { linkedKeysetPage, type PageRequest } from './pagination.ts';
import { hostProblem } from './public-address.ts';

/** A store's webhook subscription as the Admin API shows it (its version makes the ETag). */
export type WebhookSubscription = SubscriptionRow;

/** In production the address must resolve to public addresses only (checked again at delivery). */
export async function resolvesToPublic(address: string): Promise<string | undefined> {
  const problem = await hostProblem(address);
  if (problem === 'unresolvable') return 'could not be resolved';
  if (problem === 'non-public') return 'must not point at a private, loopback or link-local address';
  return undefined;
}

export class WebhookSubscriptions {
  constructor(
    private readonly storage: Storage,
    private readonly config: Pick<Config, 'mode'>,
    private readonly clock: Clock,
    private readonly cursors: CursorCodec,
  ) {}

  /** A page of the caller's subscriptions, with the cursors either side of it. */
  list<T>(p: ApiPrincipal, page: PageRequest, toJson: (row: SubscriptionRow) => T) {
    return linkedKeysetPage(
      this.storage.webhooks.subscriptions(),
      this.cursors,
      { storeId: p.storeId, resource: `webhooks:${p.owner}`, where: { owner: p.owner } },
      page,
      toJson,
    );
  }

  /** How many of the caller's subscriptions match `filters` (at most MAX_SUBSCRIPTIONS_PER_OWNER). */
  count(p: ApiPrincipal, filters: ListFilters): Promise<number> {
    return this.storage.webhooks.subscriptions().count({ storeId: p.storeId, where: { owner: p.owner }, filters });
  }

  /** The scope the topic needs (403) and the address rules (422), as a subscribe checks them. */
  private async checkInput(p: ApiPrincipal, input: { address?: string | undefined; topic?: WebhookTopic | undefined }): Promise<void> {
    const resource = input.topic === undefined ? undefined : topicResource(input.topic);
    if (resource && !allows(p.scopes, 'read', resource))
      throw new ForbiddenError(`The topic ${input.topic} needs the read_${resource} scope`, `read_${resource}`);
    if (input.address === undefined) return;
    const mode = this.config.mode;
    const problem = checkWebhookAddress(input.address, mode) ?? (mode === 'production' ? await resolvesToPublic(input.address) : undefined);
    if (problem) throw new ValidationFailedError({ address: [problem] });
  }

  /** The per-topic caps, for a subscription about to be added to `topic` (in a transaction holding the store lock). */
  private async checkTopicCaps(tx: Repositories, p: ApiPrincipal, topic: string): Promise<void> {
    // What one write of the store can fan out to: per owner, and over every owner of the store.
    const onTopic = await tx.webhooks.countTopicSubscriptions(p.storeId, topic, p.owner);
    if (onTopic.owner >= MAX_SUBSCRIPTIONS_PER_TOPIC) {
      throw new ValidationFailedError({
        base: [`an app may have at most ${MAX_SUBSCRIPTIONS_PER_TOPIC} webhook subscriptions to ${topic} in a store; delete one first`],
      });
    }
    if (onTopic.store >= MAX_STORE_SUBSCRIPTIONS_PER_TOPIC) {
      throw new ValidationFailedError({
        base: [`a store may have at most ${MAX_STORE_SUBSCRIPTIONS_PER_TOPIC} webhook subscriptions to ${topic} over all its apps`],
      });
    }
  }

  /** `then` runs in the transaction of the write, after it (see ResourceService). */
  async create(
    p: ApiPrincipal,
    input: { address: string; topic: WebhookTopic; apiVersion: string } & ShapeInput,
    then?: WriteStep<SubscriptionRow>,
  ): Promise<SubscriptionRow> {
    await this.checkInput(p, input);
    const shape = checkedShape(input.topic, input);
    const now = this.clock();
    const duplicate = new ValidationFailedError({ address: [`is already subscribed to ${input.topic}`] });
    return this.storage.transaction(async (tx) => {
      // Concurrent subscribes of the store take turns from here, so two cannot both count one
      // below the cap.
      await tx.accounts.lockStore(p.storeId);
      if (await tx.webhooks.subscriptionExists(p.storeId, p.owner, input.topic, input.address)) throw duplicate;
      if ((await tx.webhooks.countSubscriptions(p.storeId, p.owner)) >= MAX_SUBSCRIPTIONS_PER_OWNER) {
        throw new ValidationFailedError({
          base: [`an app may have at most ${MAX_SUBSCRIPTIONS_PER_OWNER} webhook subscriptions in a store; delete one first`],
        });
      }
      await this.checkTopicCaps(tx, p, input.topic);
      let row: SubscriptionRow;
      try {
        row = await tx.webhooks.insertSubscription({
          store_id: p.storeId,
          owner: p.owner,
          app_id: p.kind === 'app' ? p.id : null,
          private_app_id: p.kind === 'private' ? p.id : null,
          topic: input.topic,
          address: input.address,
          api_version: input.apiVersion,
          filter: shape.filter,
          include_fields: storedIncludeFields(shape.includeFields),
          created_at: now,
          updated_at: now,
        });
      } catch (err) {
        // The same subscription written by a transaction the check above could not see.
        if (err instanceof DuplicateRecordError) throw duplicate;
        throw err;
      }
      await then?.(tx, row);
      return row;
    });
  }

  async get(p: ApiPrincipal, id: number): Promise<SubscriptionRow> {
    const row = await this.storage.webhooks.findSubscription(p.storeId, p.owner, id);
    if (!row) throw new NotFoundError(`No webhook subscription with id ${id}`);
    return row;
  }

  /**
   * Changes the topic, address, filter and/or include_fields of one of the caller's subscriptions,
   * with the checks of a subscribe: the topic's scope, the address rules, no second identical
   * subscription, the per-topic caps when the topic changes, and the filter and fields checked
   * against the topic it ends up with (a null removes them). A new address gives a disabled
   * subscription a fresh start (it is active again), as deleting and subscribing anew would;
   * deliveries still queued go to the address the subscription has when they are sent, with the
   * fields it had when they were queued.
   */
  async update(
    p: ApiPrincipal,
    id: number,
    input: { address?: string | undefined; topic?: WebhookTopic | undefined } & ShapeInput,
    then?: WriteStep<SubscriptionRow>,
    ifMatch?: IfMatch,
  ): Promise<SubscriptionRow> {
    await this.checkInput(p, input);
    const now = this.clock();
    return this.storage.transaction(async (tx) => {
      await tx.accounts.lockStore(p.storeId);
      const row = await tx.webhooks.findSubscription(p.storeId, p.owner, id);
      if (!row) throw new NotFoundError(`No webhook subscription with id ${id}`);
      refuseCopy(row);
      // Read under the store lock, which every change of a subscription through the API takes.
      if (!satisfies(ifMatch, row.version)) throw changedSince();
      const topic = input.topic ?? (row.topic as WebhookTopic);
      const address = input.address ?? row.address;
      const shape = checkedShape(topic, {
        filter: input.filter === undefined ? row.filter : input.filter,
        includeFields: input.includeFields === undefined ? readIncludeFields(row.include_fields) : input.includeFields,
      });
      const includeFields = storedIncludeFields(shape.includeFields);
      const duplicate = new ValidationFailedError({ address: [`is already subscribed to ${topic}`] });
      let updated = row;
      const moved = topic !== row.topic || address !== row.address;
      if (moved || shape.filter !== row.filter || includeFields !== row.include_fields) {
        if (moved && (await tx.webhooks.subscriptionExists(p.storeId, p.owner, topic, address))) throw duplicate;
        if (topic !== row.topic) await this.checkTopicCaps(tx, p, topic);
        try {
          const values = {
            topic,
            address,
            filter: shape.filter,
            include_fields: includeFields,
            updated_at: now,
            enable: address !== row.address,
          };
          // The worker may disable the subscription without the store lock: with If-Match, the
          // version read above is checked again by the UPDATE.
          const guard = ifMatch ? { versions: [row.version] } : undefined;
          const changed = await tx.webhooks.updateSubscription(p.storeId, row.id, values, guard);
          // Deleted or disabled by a transaction that committed after the read above.
          if (!changed) throw ifMatch ? changedSince() : new NotFoundError(`No webhook subscription with id ${id}`);
          updated = changed;
        } catch (err) {
          if (err instanceof DuplicateRecordError) throw duplicate;
          throw err;
        }
      }
      await then?.(tx, updated);
      return updated;
    });
  }

  async delete(p: ApiPrincipal, id: number, then?: WriteStep<void>, ifMatch?: IfMatch): Promise<void> {
    await this.storage.transaction(async (tx) => {
      const row = await tx.webhooks.findSubscription(p.storeId, p.owner, id);
      if (!row) throw new NotFoundError(`No webhook subscription with id ${id}`);
      refuseCopy(row);
      if (!satisfies(ifMatch, row.version)) throw changedSince();
      // The version read above, checked again by the DELETE: a change committed in between (the
      // worker disabling it) is a 412, a delete committed in between a 404.
      const versions = ifMatch?.kind === 'versions' ? [row.version] : undefined;
      if (!(await tx.webhooks.deleteSubscription(p.storeId, row.id, { versions })) && versions) {
        if (await tx.webhooks.findSubscription(p.storeId, p.owner, id)) throw changedSince();
        throw new NotFoundError(`No webhook subscription with id ${id}`);
      }
      await then?.(tx, undefined);
    });
  }
}

/**
 * A store copy of an app-level subscription follows the app's configuration (the file, the partner
 * dashboard or API): changed there, never through the Admin API of one store.
 */
function refuseCopy(row: SubscriptionRow): void {
  if (row.app_subscription_id !== null)
    throw new ValidationFailedError({
      base: [
        "this webhook subscription is managed by the app's configuration (app-level subscriptions); change it there, not in one store",
      ],
    });
}

/** A subscription's filter and include_fields as a request gives them: null removes, undefined keeps. */
export interface ShapeInput {
  filter?: string | null | undefined;
  includeFields?: readonly string[] | null | undefined;
}

/** The filter and fields to store for `topic`, or 422 naming each bad one. */
function checkedShape(topic: WebhookTopic, input: ShapeInput): SubscriptionShape {
  const checked = checkSubscriptionShape(topic, input);
  if (!checked.ok) throw new ValidationFailedError(checked.errors);
  return { filter: checked.filter, includeFields: checked.includeFields };
}

function changedSince(): PreconditionFailedError {
  return new PreconditionFailedError('The webhook subscription changed since the ETag in If-Match was read; nothing was changed');
}

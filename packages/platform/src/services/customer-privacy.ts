// A merchant's privacy requests about one customer: "Request data for apps" sends
// customers/data_request, "Redact customer" sends customers/redact, each to every app installed in
// the store that holds read_customers and has a privacy webhook address. Redaction also replaces
// what identifies the customer in the platform's own records (the customer, its orders, every
// stored webhook body about either, which the events list and queued deliveries read, and every
// answer kept for replaying an Admin API write about either), in the same transaction as the
// event, so the store and the apps forget the customer together.
import { randomInt } from 'node:crypto';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import { isRedactedEmail, redactedAnswer, redactedEmail, redactedEventPayload } from '../domain/customer-redaction.ts';
import { ConflictError, NotFoundError } from '../domain/errors.ts';
import { storedScopes } from '../domain/scopes.ts';
import { storeHostname } from '../domain/store-host.ts';
import { mayReceive } from '../domain/webhook-topics.ts';
import type { Repositories } from '../storage/ports/repositories.ts';
import type { Storage } from '../storage/ports/storage.ts';
import type { WebhookOutbox } from './webhook-outbox.ts';

/** An installed app, as the merchant sees it before sending a privacy request. */
export interface PrivacyAudienceApp {
  name: string;
  /** Whether it would be sent the request: it holds read_customers and has a privacy address. */
  receives: boolean;
  /** Why not, when it would not. */
  reason: string | undefined;
}

export interface PrivacyRequestResult {
  /** How many apps were sent the topic. */
  apps: number;
  /** The data request's id (customers/data_request only). */
  dataRequestId?: string;
  /** How many stored webhook bodies about the customer were rewritten (customers/redact only). */
  events?: number;
  /** How many answers kept for Idempotency-Key replays were rewritten (customers/redact only). */
  answers?: number;
}

export class CustomerPrivacy {
  constructor(
    private readonly storage: Storage,
    private readonly config: Pick<Config, 'storeDomain'>,
    private readonly clock: Clock,
    private readonly outbox: WebhookOutbox,
  ) {}

  /** The customer's id, email, phone and whether it was redacted already; unknown → 404. */
  async customer(storeId: number, customerId: number): Promise<{ id: number; email: string; phone: string | null; redacted: boolean }> {
    const row = await this.storage.resources.get('customers', storeId, customerId);
    if (!row) throw new NotFoundError(`No customer with id ${customerId} in this store`);
    const email = String(row.email);
    return { id: customerId, email, phone: (row.phone as string | null) ?? null, redacted: isRedactedEmail(email) };
  }

  /** Every installed app, and whether a customer privacy request would reach it. */
  async audience(storeId: number): Promise<PrivacyAudienceApp[]> {
    const [installed, apps] = await Promise.all([this.storage.apps.listInstalled(storeId), this.storage.apps.listApps()]);
    const address = new Map(apps.map((a) => [a.id, a.privacy_webhook_url]));
    return installed.map((i) => {
      const reason = !mayReceive('customers/redact', storedScopes(i.scopes))
        ? 'it may not read customers'
        : !address.get(i.app_id)
          ? 'it has no privacy webhook address'
          : undefined;
      return { name: i.name, receives: reason === undefined, reason };
    });
  }

  /** Sends customers/data_request about the customer: its id, email, phone and order ids. */
  async requestData(storeId: number, customerId: number): Promise<PrivacyRequestResult> {
    const dataRequestId = String(randomInt(1, 2 ** 47));
    return this.storage.transaction(async (tx) => {
      const { shared, orders } = await this.subject(tx, storeId, customerId);
      const apps = await this.outbox.enqueuePrivacy(tx, {
        storeId,
        topic: 'customers/data_request',
        payload: { ...shared, orders_requested: orders, data_request: { id: dataRequestId } },
      });
      return { apps, dataRequestId };
    });
  }

  /**
   * Replaces the customer's email, names and phone (and the email on its orders) with placeholders,
   * in its records, in every stored webhook body and every answer kept for an Idempotency-Key
   * replay about them, and sends customers/redact. A
   * customer redacted before is refused (409): its identifying data is gone, so a second request
   * could name no one.
   */
  async redact(storeId: number, customerId: number): Promise<PrivacyRequestResult> {
    return this.storage.transaction(async (tx) => {
      const { shared, orders, redacted } = await this.subject(tx, storeId, customerId);
      if (redacted) throw new ConflictError(`Customer ${customerId} was redacted already`);
      const email = redactedEmail(customerId);
      // The records first: on PostgreSQL that holds the customer's row, so a change to the
      // customer made meanwhile waits for this commit instead of writing an event the search
      // below has not seen.
      await tx.resources.redactCustomer(storeId, customerId, email, this.clock());
      // Before customers/redact is written: that event names the customer's email and phone on
      // purpose, so that each app can find the customer in its own records and erase it.
      const events = await this.redactEvents(tx, storeId, customerId, email);
      const answers = await this.redactAnswers(tx, storeId, customerId, email);
      const apps = await this.outbox.enqueuePrivacy(tx, {
        storeId,
        topic: 'customers/redact',
        payload: { ...shared, orders_to_redact: orders },
      });
      return { apps, events, answers };
    });
  }

  /**
   * Rewrites the stored bodies of the customer's events, its orders' and earlier privacy requests
   * about it: the events list shows them and every delivery still queued or retrying sends them.
   * Returns how many were rewritten.
   */
  private async redactEvents(tx: Repositories, storeId: number, customerId: number, email: string): Promise<number> {
    const stored = await tx.eventPayloads.namingCustomer(storeId, customerId);
    const rewritten: { id: string; payload: string }[] = [];
    for (const e of stored) {
      const payload = JSON.stringify(redactedEventPayload(e.topic, JSON.parse(e.payload), email));
      if (payload !== e.payload) rewritten.push({ id: e.id, payload });
    }
    return rewritten.length === 0 ? 0 : tx.eventPayloads.replace(storeId, rewritten);
  }

  /**
   * Rewrites the answers kept for replaying the store's customer and order writes that name the
   * customer, of every caller: the same request sent again with its key answers with the stored
   * body, so it must read as the records now do. Only the body changes: the key still answers the
   * same request (with the placeholders), and never performs the write a second time. Returns how
   * many were rewritten.
   */
  private async redactAnswers(tx: Repositories, storeId: number, customerId: number, email: string): Promise<number> {
    const stored = await tx.idempotentAnswers.namingCustomer(storeId, customerId);
    const rewritten: { owner: string; key: string; token: string; body: string }[] = [];
    for (const a of stored) {
      const redacted = redactedAnswer(a.resource, JSON.parse(a.body), customerId, email);
      if (redacted === undefined) continue;
      const body = JSON.stringify(redacted);
      if (body !== a.body) rewritten.push({ owner: a.owner, key: a.key, token: a.token, body });
    }
    return rewritten.length === 0 ? 0 : tx.idempotentAnswers.replace(storeId, rewritten);
  }

  /** The parts both payloads share, read in the request's transaction. */
  private async subject(tx: Repositories, storeId: number, customerId: number) {
    const row = await tx.resources.get('customers', storeId, customerId);
    const store = await tx.accounts.findStoreNameById(storeId);
    if (!row || store === undefined) throw new NotFoundError(`No customer with id ${customerId} in this store`);
    const orders = (await tx.resources.customerOrderIds(storeId, customerId)).map(String);
    const email = String(row.email);
    const shared = {
      shop_id: String(storeId),
      shop_domain: storeHostname(store, this.config.storeDomain),
      customer: { id: String(customerId), email, phone: (row.phone as string | null) ?? null },
    };
    return { shared, orders, redacted: isRedactedEmail(email) };
  }
}

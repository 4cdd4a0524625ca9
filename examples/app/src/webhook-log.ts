// The last N verified webhooks, in memory, newest first; also remembers their ids so that a
// redelivery (same webhook id on every retry) is recognised and not shown twice.
import type { WebhookEvent } from '@storegate/app';

export interface LoggedWebhook {
  /** The de-duplication id the platform sends with every delivery of the same event. */
  id: string | undefined;
  topic: string;
  shop: string;
  apiVersion: string | undefined;
  receivedAt: Date;
  /** The body as received (pretty-printed when it is JSON). */
  body: string;
}

export class WebhookLog {
  readonly #capacity: number;
  readonly #entries: LoggedWebhook[] = [];

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('the webhook log needs room for at least one event');
    this.#capacity = capacity;
  }

  /** Records a verified event; returns false when an event with the same id is already kept. */
  add(event: WebhookEvent, receivedAt: Date = new Date()): boolean {
    if (event.id !== undefined && this.#entries.some((e) => e.id === event.id)) return false;
    let body = event.rawBody;
    try {
      body = JSON.stringify(event.payload, null, 2);
    } catch {
      // Not JSON: keep the text as it came.
    }
    this.#entries.unshift({
      id: event.id,
      topic: event.topic ?? '(no topic)',
      shop: event.shop ?? '(no shop)',
      apiVersion: event.apiVersion,
      receivedAt,
      body,
    });
    this.#entries.length = Math.min(this.#entries.length, this.#capacity);
    return true;
  }

  /** Events of one shop, newest first. */
  forShop(shop: string): LoggedWebhook[] {
    return this.#entries.filter((e) => e.shop === shop);
  }

  get size(): number {
    return this.#entries.length;
  }
}

// The stored webhook bodies about one customer, found and rewritten when the customer is redacted.
import type { CustomerTopic } from '../../domain/customer-redaction.ts';

/** A stored webhook body and the topic of its event. */
export interface StoredEventPayload {
  id: string;
  topic: CustomerTopic;
  payload: string;
}

export interface EventPayloadRepository {
  /**
   * The store's events whose body names the customer (where each topic carries it: see
   * CUSTOMER_ID_PATHS): its customer events, the events of its orders and the privacy requests
   * about it, oldest first, whatever the state of their deliveries.
   */
  namingCustomer(storeId: number, customerId: number): Promise<StoredEventPayload[]>;
  /** Replaces the bodies of the store's events given (by id); returns how many were replaced. */
  replace(storeId: number, events: readonly { id: string; payload: string }[]): Promise<number>;
}

// The answers kept for replaying Admin API writes that name one customer, found and rewritten when
// the customer is redacted.

/** A stored answer of an idempotent write: its key, the reservation that wrote it, its resource and body. */
export interface StoredAnswer {
  owner: string;
  key: string;
  /** The reservation whose answer this is: a rewrite changes only that answer, not a later one's. */
  token: string;
  /** The resource the write was on; null for keys stored before it was kept with them. */
  resource: string | null;
  body: string;
}

/** A new body for the answer of one reservation. */
export interface RewrittenAnswer {
  owner: string;
  key: string;
  token: string;
  body: string;
}

export interface IdempotentAnswerRepository {
  /**
   * The store's stored success answers of customer and order writes (of every caller, expired keys
   * not yet pruned included) whose `data` carries the customer's id as its own id or its
   * customer_id: a superset of the answers naming the customer (an order numbered like the
   * customer is among them), for the caller to tell apart by resource. Answers of other resources
   * are never read.
   */
  namingCustomer(storeId: number, customerId: number): Promise<StoredAnswer[]>;
  /**
   * Replaces the bodies of the store's answers given, each only while its key still holds the
   * reservation that wrote it; returns how many were replaced.
   */
  replace(storeId: number, answers: readonly RewrittenAnswer[]): Promise<number>;
}

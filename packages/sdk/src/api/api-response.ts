// What a successful Admin API request answers, as `client.request` returns it.

/** A successful response. */
export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  data: T;
  requestId: string | undefined;
  /** The record's `ETag` (answers about one record), to send back as `ifMatch`. */
  etag: string | undefined;
  /** The `Idempotency-Key` this call sent (on every attempt), if any. */
  idempotencyKey: string | undefined;
  /**
   * True when the platform answered with the stored response of an earlier request with the same
   * key (`Idempotent-Replayed: true`): the write was not performed again.
   */
  replayed: boolean;
}

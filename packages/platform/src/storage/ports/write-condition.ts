// What a conditional write of a store record (a resource, a subscription) requires of the row it changes.

/** What a conditional write needs the row to hold still: one of these versions, this inventory quantity. */
export interface WriteGuard {
  versions?: readonly number[] | undefined;
  inventoryQuantity?: number | undefined;
}

// Caps on what one owner or one store may pile up.
// - Every change of a store writes one delivery per matching subscription inside the change's own
//   transaction, so an owner's subscriptions multiply the cost of every write in the store; a real
//   integration needs a handful per topic, nowhere near this.
// - Every active private app is a live Access-Token to the store; past a few dozen they are
//   forgotten rather than used, and each is one more secret that can leak.
export const MAX_SUBSCRIPTIONS_PER_OWNER = 100;
export const MAX_ACTIVE_PRIVATE_APPS = 50;

// Caps on what one owner or one store may pile up.
// - Every change of a store writes one delivery per matching subscription inside the change's own
//   transaction, so an owner's subscriptions multiply the cost of every write in the store; a real
//   integration needs a handful per topic, nowhere near these.
// - One write emits one topic, so the subscriptions to one topic are the deliveries one write can
//   create: at most MAX_SUBSCRIPTIONS_PER_TOPIC for each owner (an app or private app in the store)
//   and MAX_STORE_SUBSCRIPTIONS_PER_TOPIC over all of them, however many apps are installed.
// - Every active private app is a live Access-Token to the store; past a few dozen they are
//   forgotten rather than used, and each is one more secret that can leak.
export const MAX_SUBSCRIPTIONS_PER_OWNER = 100;
export const MAX_SUBSCRIPTIONS_PER_TOPIC = 10;
export const MAX_STORE_SUBSCRIPTIONS_PER_TOPIC = 1000;
export const MAX_ACTIVE_PRIVATE_APPS = 50;

/** Milliseconds since the epoch; injected so tests can freeze and move time. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

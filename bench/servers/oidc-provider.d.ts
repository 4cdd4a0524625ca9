// oidc-provider v8 ships no type declarations; the benchmark's reference server uses it untyped.
declare module 'oidc-provider' {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const Provider: any;
  export default Provider;
}

declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  export function setStorage(store: unknown): void;
}

// Module hook for running from sources: adds the `@storegate/source` export condition, so
// `@storegate/platform` resolves to its TypeScript sources rather than to a dist/ that may be
// absent or older than the sources.
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, { ...context, conditions: [...context.conditions, '@storegate/source'] });
}

// Comparisons whose running time does not depend on where two secrets first differ.

/**
 * Compares two strings in time that depends only on their lengths. Lengths are not secret here
 * (every digest has a fixed length), so a length mismatch returns early.
 */
export function timingSafeEqualStrings(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

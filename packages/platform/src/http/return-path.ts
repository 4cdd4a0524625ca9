// Where a browser may be sent after logging in. Browsers resolve a Location header with the URL
// parser (dropping tabs and newlines, reading backslashes as slashes, trimming control characters),
// so the value is read the same way here and judged by where it actually leads.

/**
 * `value` read as a URL relative to `origin`: followed only when it stays on that origin and under
 * `area` (e.g. `/admin`), else `area` itself. What comes back is the parser's own serialisation of
 * the path, query and fragment, so control characters are percent-encoded and a header can carry it.
 */
export function returnPath(value: unknown, origin: string, area: string, maxLength: number): string {
  if (typeof value !== 'string' || value.length > maxLength) return area;
  let url: URL;
  try {
    url = new URL(value, origin);
  } catch {
    return area;
  }
  if (url.origin !== new URL(origin).origin) return area;
  if (url.pathname !== area && !url.pathname.startsWith(`${area}/`)) return area;
  return `${url.pathname}${url.search}${url.hash}`;
}

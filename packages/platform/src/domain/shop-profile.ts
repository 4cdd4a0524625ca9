// A store's profile as apps read it: the currency its prices are in and the time zone its
// reports use. Both are checked against what the runtime's Intl knows, so an app never receives a
// code it cannot format with.

export const DEFAULT_CURRENCY = 'USD';
export const DEFAULT_TIMEZONE = 'UTC';

const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** An ISO 4217 code in upper case that the runtime knows (`USD`, `EUR`), or a reason it is not. */
export function currencyProblem(code: string): string | undefined {
  if (!/^[A-Z]{3}$/.test(code)) return 'must be a three-letter ISO 4217 code in upper case, such as USD or EUR';
  if (!CURRENCIES.has(code)) return `"${code}" is not a known ISO 4217 currency code`;
  return undefined;
}

/** An IANA time zone name (`Europe/Paris`, `UTC`), or a reason it is not. */
export function timezoneProblem(zone: string): string | undefined {
  if (zone.length === 0 || zone.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(zone))
    return 'must be an IANA time zone name, such as UTC or Europe/Paris';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    return `"${zone}" is not a known IANA time zone name`;
  }
  return undefined;
}

/** The runtime's own spelling of a valid zone name (`utc` → `UTC`), so stores hold one form. */
export function canonicalTimezone(zone: string): string {
  return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
}

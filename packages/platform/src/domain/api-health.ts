// Pure rules of "API health": how a call to a deprecated version is named (its route pattern), how
// many days a version has left, whether its notice is due, and whether a brown-out window may be
// scheduled. Brown-outs are short windows before a sunset during which a deprecated version
// answers 410, so that apps still calling it notice while there is time to move.
import { CURRENT_VERSION, isApiVersion } from './api-versions.ts';

export const DAY_MS = 86_400_000;

/** Who called: a public app (`apps.id`) or a private app (`private_apps.id`). */
export type ApiCallerKind = 'app' | 'private';

/** `GET /openapi/{version}/products/{id}` for the route `/openapi/:version/products/:id`. */
export function routePattern(method: string, routeUrl: string): string {
  return `${method.toUpperCase()} ${routeUrl.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')}`;
}

/** Whole days from `now` to the sunset, rounded up; 0 once it has passed. */
export function daysLeft(sunsetAt: number, now: number): number {
  return Math.max(0, Math.ceil((sunsetAt - now) / DAY_MS));
}

/** The sentence a partner and an operator read about a version's end. */
export function sunsetWords(version: string, sunsetAt: number, now: number): string {
  const day = new Date(sunsetAt).toISOString().slice(0, 10);
  const left = daysLeft(sunsetAt, now);
  if (left === 0) return `Version ${version} reached its sunset on ${day}; move to ${CURRENT_VERSION}.`;
  return `Version ${version} stops answering on ${day}, in ${left} day${left === 1 ? '' : 's'}; move to ${CURRENT_VERSION}.`;
}

/** Whether the notice before a sunset is due now: within `noticeDays` of it, and not after it. */
export function noticeDue(sunsetAt: number, now: number, noticeDays: number): boolean {
  return now < sunsetAt && sunsetAt - now <= noticeDays * DAY_MS;
}

export interface BrownoutWindow {
  version: string;
  startsAt: number;
  endsAt: number;
}

/**
 * Why a brown-out may not be scheduled, or undefined when it may: the version must be a known
 * deprecated one (never the current version), the window must end after it starts, and it must not
 * overlap another window of the same version.
 */
export function brownoutProblem(
  input: BrownoutWindow,
  deprecated: Readonly<Record<string, unknown>>,
  existing: readonly BrownoutWindow[],
): string | undefined {
  if (!isApiVersion(input.version)) return `unknown API version "${input.version.slice(0, 20)}"`;
  if (input.version === CURRENT_VERSION || !Object.hasOwn(deprecated, input.version))
    return (
      `version ${input.version} is not deprecated; only a deprecated version can be browned out ` +
      `(deprecated: ${Object.keys(deprecated).join(', ') || 'none'})`
    );
  if (!Number.isFinite(input.startsAt) || !Number.isFinite(input.endsAt)) return 'start and end must be dates';
  if (input.endsAt <= input.startsAt) return 'the window must end after it starts';
  const clash = existing.find((w) => w.version === input.version && w.startsAt < input.endsAt && input.startsAt < w.endsAt);
  if (clash)
    return (
      `the window overlaps the brown-out of ${input.version} ` +
      `from ${new Date(clash.startsAt).toISOString()} to ${new Date(clash.endsAt).toISOString()}`
    );
  return undefined;
}

/** The window of `version` that holds `now`, if any. */
export function activeWindow<W extends BrownoutWindow>(windows: readonly W[], version: string, now: number): W | undefined {
  return windows.find((w) => w.version === version && w.startsAt <= now && now < w.endsAt);
}

/** The payload of `app/api_version_deprecated`: which version ends when, and what to move to. */
export function noticePayload(version: string, deprecatedAt: number, sunsetAt: number, lastCalledAt: number, now: number) {
  return {
    api_version: version,
    deprecated_at: new Date(deprecatedAt).toISOString(),
    sunset_at: new Date(sunsetAt).toISOString(),
    days_left: daysLeft(sunsetAt, now),
    use_version: CURRENT_VERSION,
    last_called_at: new Date(lastCalledAt).toISOString(),
    message: sunsetWords(version, sunsetAt, now),
  };
}

// What an App-URL request (the signed GET the platform sends when a merchant clicks Install or
// Open in the store admin) may carry, checked before its hmac.
import { ParameterError } from '../errors.ts';

/** Every parameter the platform sends on an App-URL request; `id_token` (the launch token) only when opening an installed app. */
export const LAUNCH_PARAMS = ['hmac', 'id_token', 'shop', 'timestamp'] as const;

/**
 * Refuses an App-URL request that carries a parameter the platform never sends there, or one of its
 * parameters twice, before the hmac is checked: a signature made for another message (such as the
 * redirect with the code, whose `state` the app chose) must not pass for a launch, and a repeated
 * name would be read one way by the signature and another by the app.
 */
export function requireLaunchParams(pairs: ReadonlyArray<readonly [string, string]>): void {
  const seen = new Set<string>();
  for (const [name] of pairs) {
    if (!(LAUNCH_PARAMS as readonly string[]).includes(name)) {
      const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
      throw new ParameterError(
        'PARAMETER_UNEXPECTED',
        name,
        `query parameter "${shown}" is not part of an App-URL request, which carries only ${LAUNCH_PARAMS.join(', ')}: refused before ` +
          `the hmac is checked`,
      );
    }
    if (seen.has(name)) throw new ParameterError('PARAMETER_INVALID', name, `query parameter "${name}" appears more than once`);
    seen.add(name);
  }
}

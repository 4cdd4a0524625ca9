// The answer of a deprecated version during a brown-out the operator scheduled: 410 with a message
// naming the version, the end of the window, the sunset and the version to move to. The version
// fields (`Deprecation`, `Sunset`, `Link`) are added on send like on every answer of that version.
import type { Services } from '../../services/services.ts';
import { CURRENT_VERSION } from '../../domain/api-versions.ts';
import { ApiVersionGoneError } from '../../domain/errors.ts';

export function brownoutError(services: Pick<Services, 'config'>, version: string, endsAt: number): ApiVersionGoneError {
  const sunset = services.config.apiDeprecations[version]?.sunsetAt;
  const sunsetText = sunset === undefined ? '' : ` and stops answering for good on ${new Date(sunset).toISOString().slice(0, 10)}`;
  return new ApiVersionGoneError(
    `API version ${version} is deprecated${sunsetText}; it is browned out (answers 410) until ${new Date(endsAt).toISOString()} ` +
      `so that its callers notice. Move to version ${CURRENT_VERSION}.`,
  );
}

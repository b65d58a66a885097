/**
 * The representation versions of an order, as the contract defines them
 * (`info.x-api-versions` in contracts/openapi.yaml, generated into
 * generated/openapi/versions.ts). `VERSIONS` drives negotiation, the If-Match tag set
 * and the body schemas; a deprecated version's dates drive its response headers.
 */
import { DEPRECATED, VERSIONS, type ApiVersion } from '../../generated/openapi/versions';

export { VERSIONS, type ApiVersion };

/** Served when a request names no version and its account pins none. */
export const NEWEST: ApiVersion = VERSIONS[VERSIONS.length - 1];

export const isVersion = (n: number): n is ApiVersion => VERSIONS.some((v) => v === n);

export interface Deprecation {
  deprecatedAt: Date;
  sunset: Date;
  /** Where the migration is explained. */
  link: string;
}

/** The deprecation of `version`, or undefined while it is current. */
export function deprecationOf(version: ApiVersion): Deprecation | undefined {
  const d = DEPRECATED[version];
  return d && { deprecatedAt: new Date(d.deprecatedAt), sunset: new Date(d.sunset), link: d.link };
}

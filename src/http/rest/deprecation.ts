import { V1_DEPRECATED_AT, V1_SUNSET, type ApiVersion } from '../../orders';

/**
 * Version 1 is deprecated (its `discount_code` is replaced by version 2's `discount`,
 * spec 9.4). Its responses say so in three headers:
 * - `Deprecation` (RFC 9745): a structured date, `@<unix seconds>`, when it was deprecated;
 * - `Sunset` (RFC 8594): the HTTP date after which it may stop answering;
 * - `Link: <...>; rel="deprecation"`: where the migration is explained.
 */
export const V1_DEPRECATION_DOC = '/docs#versioning';

export function deprecationHeaders(version: ApiVersion): Record<string, string> {
  if (version !== 1) return {};
  return {
    Deprecation: `@${Math.floor(V1_DEPRECATED_AT.getTime() / 1000)}`,
    Sunset: V1_SUNSET.toUTCString(),
    Link: `<${V1_DEPRECATION_DOC}>; rel="deprecation"; type="text/html"`,
  };
}

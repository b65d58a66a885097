import { deprecationOf, VERSIONS, type ApiVersion } from '../../orders';

/**
 * A deprecated version's responses say so in three headers (dates from the contract's
 * `info.x-api-versions`):
 * - `Deprecation` (RFC 9745): a structured date, `@<unix seconds>`, when it was deprecated;
 * - `Sunset` (RFC 8594): the HTTP date after which it may stop answering;
 * - `Link: <...>; rel="deprecation"`: where the migration is explained.
 * Computed once per version: they are the same on every response.
 */
const HEADERS = new Map<ApiVersion, Readonly<Record<string, string>>>(
  VERSIONS.map((v) => {
    const d = deprecationOf(v);
    const headers: Record<string, string> = d
      ? {
          Deprecation: `@${Math.floor(d.deprecatedAt.getTime() / 1000)}`,
          Sunset: d.sunset.toUTCString(),
          Link: `<${d.link}>; rel="deprecation"; type="text/html"`,
        }
      : {};
    return [v, headers];
  }),
);

export function deprecationHeaders(version: ApiVersion): Readonly<Record<string, string>> {
  return HEADERS.get(version) ?? {};
}

export const isDeprecated = (version: ApiVersion): boolean => deprecationOf(version) !== undefined;

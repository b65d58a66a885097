/**
 * The representation versions of an order (spec 9.2-9.4): the one place that knows
 * which versions exist. Negotiation, the If-Match tag set and the body schemas are all
 * driven from `VERSIONS`.
 */
export const VERSIONS = [1, 2] as const;
export type ApiVersion = (typeof VERSIONS)[number];
export const NEWEST: ApiVersion = 2;

export const isVersion = (n: number): n is ApiVersion => (VERSIONS as readonly number[]).includes(n);

/** Version 1 is deprecated: when it was, and after which date it may stop answering. */
export const V1_DEPRECATED_AT = new Date('2026-11-01T00:00:00Z');
export const V1_SUNSET = new Date('2027-06-30T23:59:59Z');

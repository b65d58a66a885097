/**
 * Content negotiation and version selection.
 *
 * Selection order: URL `/v<n>/`, then the vendor media type's `version` (or `v`)
 * parameter in Accept, then the `Api-Version` header, then the account's pinned
 * version, then the newest. An unknown version named by a media type or the header is
 * 406; Accept with nothing acceptable is 406.
 */
import { isVersion, NEWEST, parseCanonicalInteger, VERSIONS, type ApiVersion } from '../../orders';
import { parseMediaType, readsAsUtf8, splitList, versionOf } from '../mediaType';
export type { ApiVersion } from '../../orders';

/** Resource families and their vendor media types. */
export const VENDOR = {
  order: 'application/vnd.orderline.order+json',
  'order-list': 'application/vnd.orderline.order-list+json',
} as const;
export type Family = keyof typeof VENDOR;

export interface NegotiationInput {
  family: Family;
  pathVersion: ApiVersion | null;
  accept?: string;
  apiVersion?: number;
  pinned: number | null;
}

export type Negotiated = { ok: true; version: ApiVersion; vendor: boolean; contentType: string } | { ok: false; detail: string };

export interface Range {
  type: string;
  version?: string;
  q: number;
  order: number;
}

/**
 * Parses Accept (RFC 9110 12.5.1) into ranges, best first: q descending, then specificity, then
 * order. A range naming a charset other than UTF-8 is left out: every representation this
 * service has (JSON, event streams, pages, contracts) is UTF-8, so it matches nothing (REST,
 * /graphql and the SSE stream alike: alone, such a range is a 406).
 */
export function parseAccept(header: string): Range[] {
  const ranges: Range[] = [];
  splitList(header).forEach((part, order) => {
    const range = parseMediaType(part);
    if (!range || !readsAsUtf8(range)) return;
    const qText = range.params.get('q');
    const q = qText === undefined ? 1 : Number.isFinite(Number(qText)) ? Math.min(Math.max(Number(qText), 0), 1) : 0;
    ranges.push({ type: range.type, version: versionOf(range), q, order });
  });
  const specificity = (r: Range) => (r.type === '*/*' ? 0 : r.type.endsWith('/*') ? 1 : r.version !== undefined ? 3 : 2);
  return ranges.sort((a, b) => b.q - a.q || specificity(b) - specificity(a) || a.order - b.order);
}

/**
 * Whether Accept says nothing: absent, or only empty list elements (`Accept:`, `Accept: ,`;
 * RFC 9110 5.6.1 has them ignored), which admits any representation (RFC 9110 12.5.1) on
 * REST, /graphql and the SSE stream alike.
 */
export const acceptIsEmpty = (header: string | undefined): boolean => header === undefined || header.replace(/[\s,]/g, '') === '';

/**
 * The q Accept gives the concrete media type `type` (in `version`, for the vendor types):
 * the most specific range that matches decides (RFC 9110 12.5.1): the type with that
 * `version`, then the type with no version, then `major/*`, then `*\/*`; 0 when none
 * matches. Among equally specific ranges the first in `ranges` (parseAccept: highest q) wins.
 */
export function qualityOf(ranges: readonly Range[], type: string, version?: number): number {
  const major = `${type.slice(0, type.indexOf('/'))}/*`;
  // A version parameter names an integer in its canonical spelling, as everywhere else (`version=02` names none).
  const specificity = (r: Range) => (r.type === type ? (r.version === undefined || version === undefined ? 3 : r.version === String(version) ? 4 : 0) : r.type === major ? 2 : r.type === '*/*' ? 1 : 0);
  let best: Range | undefined;
  let bestSpecificity = 0;
  for (const r of ranges) {
    const sp = specificity(r);
    if (sp > bestSpecificity) {
      best = r;
      bestSpecificity = sp;
    }
  }
  return best?.q ?? 0;
}

/**
 * Whether Accept admits the concrete media type `type` (RFC 9110 12.5.1): no Accept, or an
 * empty one, admits anything; otherwise `qualityOf` decides (0 refuses). A header with no
 * range that matches, or none that parses, admits nothing, as in `negotiate`.
 */
export function acceptsType(header: string | undefined, type: string): boolean {
  if (acceptIsEmpty(header)) return true;
  return qualityOf(parseAccept(header ?? ''), type) > 0;
}

export function negotiate(input: NegotiationInput): Negotiated {
  const vendor = VENDOR[input.family];
  const fallback = (): ApiVersion | string => {
    if (input.pathVersion) return input.pathVersion;
    if (input.apiVersion !== undefined) return isVersion(input.apiVersion) ? input.apiVersion : `Unknown Api-Version ${input.apiVersion}; known: ${VERSIONS.join(', ')}`;
    if (input.pinned !== null && isVersion(input.pinned)) return input.pinned;
    return NEWEST;
  };
  const pick = (v: ApiVersion | string, isVendor: boolean): Negotiated =>
    typeof v === 'string' ? { ok: false, detail: v } : { ok: true, version: v, vendor: isVendor, contentType: isVendor ? `${vendor}; version=${v}` : 'application/json' };

  if (input.accept === undefined || acceptIsEmpty(input.accept)) return pick(fallback(), false);
  const ranges = parseAccept(input.accept);
  // The ranges are tried best first; each offers a representation, served when the most
  // specific range that matches it (qualityOf) does not refuse it: `vnd...; version=1;
  // q=0` refuses version 1 only, `application/*; q=0` refuses JSON under a `*\/*`, and a
  // wildcard offers the vendor type when application/json itself is refused.
  const admits = (type: string, version?: number) => qualityOf(ranges, type, version) > 0;
  /** The vendor type in the version the URL, Api-Version, pin or default selects, when admitted. */
  const vendorByFallback = (): Negotiated | undefined => {
    const v = fallback();
    if (typeof v === 'string') return pick(v, true);
    return admits(vendor, v) ? pick(v, true) : undefined;
  };
  let unknown: string | undefined;
  for (const r of ranges) {
    if (r.q === 0) continue;
    if (r.type === vendor) {
      if (r.version === undefined) {
        const chosen = vendorByFallback();
        if (chosen) return chosen;
        continue;
      }
      const n = parseCanonicalInteger(r.version);
      if (n === null || !isVersion(n)) {
        unknown = `Unknown version ${r.version} of ${vendor}; known: ${VERSIONS.join(', ')}`;
        continue;
      }
      if (input.pathVersion && n !== input.pathVersion) continue; // the URL already fixed the version
      if (admits(vendor, n)) return pick(n, true);
      continue;
    }
    if (r.type === 'application/json' || r.type === 'application/*' || r.type === '*/*') {
      if (admits('application/json')) return pick(fallback(), false);
      if (r.type === 'application/json') continue;
      const chosen = vendorByFallback();
      if (chosen) return chosen;
    }
  }
  // On a versioned path (`/v2/...`) only that version is served.
  const served = input.pathVersion ? String(input.pathVersion) : `<${VERSIONS.join('|')}>`;
  return { ok: false, detail: unknown ?? `Acceptable: application/json, ${vendor}; version=${served}` };
}

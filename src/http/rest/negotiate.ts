/**
 * Content negotiation and version selection.
 *
 * Selection order: URL `/v<n>/`, then the vendor media type's `version` (or `v`)
 * parameter in Accept, then the `Api-Version` header, then the account's pinned
 * version, then the newest. An unknown version named by a media type or the header is
 * 406; Accept with nothing acceptable is 406.
 */
import { isVersion, NEWEST, VERSIONS, type ApiVersion } from '../../orders';
import { parseMediaType, splitList, versionOf } from '../mediaType';
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

interface Range {
  type: string;
  version?: string;
  q: number;
  order: number;
}

/** Parses Accept (RFC 9110 12.5.1) into ranges, best first: q descending, then specificity, then order. */
export function parseAccept(header: string): Range[] {
  const ranges: Range[] = [];
  splitList(header).forEach((part, order) => {
    const range = parseMediaType(part);
    if (!range) return;
    const qText = range.params.get('q');
    const q = qText === undefined ? 1 : Number.isFinite(Number(qText)) ? Math.min(Math.max(Number(qText), 0), 1) : 0;
    ranges.push({ type: range.type, version: versionOf(range), q, order });
  });
  const specificity = (r: Range) => (r.type === '*/*' ? 0 : r.type.endsWith('/*') ? 1 : r.version !== undefined ? 3 : 2);
  return ranges.sort((a, b) => b.q - a.q || specificity(b) - specificity(a) || a.order - b.order);
}

/**
 * Whether Accept admits the concrete media type `type` (RFC 9110 12.5.1): no Accept, or an
 * empty one, admits anything; otherwise the most specific range that matches `type` (the
 * type itself, then `major/*`, then `*\/*`) decides, by its q (0 refuses). A header with no
 * range that matches, or none that parses, admits nothing, as in `negotiate`.
 */
export function acceptsType(header: string | undefined, type: string): boolean {
  if (!header || header.trim() === '') return true;
  const major = `${type.slice(0, type.indexOf('/'))}/*`;
  const specificity = (r: Range) => (r.type === type ? 3 : r.type === major ? 2 : r.type === '*/*' ? 1 : 0);
  let best: Range | undefined;
  // parseAccept sorts by q first: among equally specific ranges the first seen has the highest q.
  for (const r of parseAccept(header)) if (specificity(r) > (best ? specificity(best) : 0)) best = r;
  return best !== undefined && best.q > 0;
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

  if (!input.accept || input.accept.trim() === '') return pick(fallback(), false);
  const ranges = parseAccept(input.accept);
  const refused = new Set(ranges.filter((r) => r.q === 0).map((r) => r.type));
  let unknown: string | undefined;
  for (const r of ranges) {
    if (r.q === 0) continue;
    if (r.type === vendor) {
      if (refused.has(vendor)) continue;
      if (r.version === undefined) return pick(fallback(), true);
      const n = Number(r.version);
      if (!isVersion(n)) {
        unknown = `Unknown version ${r.version} of ${vendor}; known: ${VERSIONS.join(', ')}`;
        continue;
      }
      if (input.pathVersion && n !== input.pathVersion) continue; // the URL already fixed the version
      return pick(n, true);
    }
    if ((r.type === 'application/json' || r.type === 'application/*' || r.type === '*/*') && !refused.has('application/json')) {
      return pick(fallback(), false);
    }
  }
  return { ok: false, detail: unknown ?? `Acceptable: application/json, ${vendor}; version=<${VERSIONS.join('|')}>` };
}

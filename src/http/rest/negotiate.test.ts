import fc from 'fast-check';
import { acceptsType, negotiate } from './negotiate';

const base = { family: 'order' as const, pathVersion: null, pinned: null };
const VND = 'application/vnd.orderline.order+json';

describe('version selection', () => {
  it('serves the newest version as application/json when nothing is named', () => {
    expect(negotiate(base)).toEqual({ ok: true, version: 2, vendor: false, contentType: 'application/json' });
    expect(negotiate({ ...base, accept: '*/*' })).toMatchObject({ version: 2, contentType: 'application/json' });
  });
  it('echoes the vendor media type with the version it names (version or v)', () => {
    expect(negotiate({ ...base, accept: `${VND}; version=1` })).toMatchObject({ ok: true, version: 1, contentType: `${VND}; version=1` });
    expect(negotiate({ ...base, accept: `${VND};v=2` })).toMatchObject({ ok: true, version: 2, contentType: `${VND}; version=2` });
  });
  it('a range naming a charset other than UTF-8 matches nothing (every representation is UTF-8), as on /graphql (generated)', () => {
    const other = fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/).filter((c) => !/^utf-?8$/.test(c));
    fc.assert(
      fc.property(other, fc.constantFrom('application/json', VND, `${VND}; version=1`, '*/*', 'application/*'), (charset, type) => {
        expect(negotiate({ ...base, accept: `${type}; charset=${charset}` })).toMatchObject({ ok: false });
        expect(acceptsType(`${type}; charset=${charset}`, 'application/json')).toBe(false);
        // Beside another range, that one decides.
        expect(negotiate({ ...base, accept: `${type}; charset=${charset}, application/json; q=0.1` })).toMatchObject({ ok: true, contentType: 'application/json' });
      }),
    );
    for (const utf8 of ['utf-8', 'UTF-8', 'utf8', '"utf-8"']) expect(negotiate({ ...base, accept: `application/json; charset=${utf8}` })).toMatchObject({ ok: true, contentType: 'application/json' });
  });
  it('follows the order URL, Accept, Api-Version, pinned, newest', () => {
    expect(negotiate({ ...base, pathVersion: 1, apiVersion: 2 })).toMatchObject({ version: 1 });
    expect(negotiate({ ...base, accept: `${VND}; version=2`, apiVersion: 1, pinned: 1 })).toMatchObject({ version: 2 });
    expect(negotiate({ ...base, apiVersion: 1, pinned: 2 })).toMatchObject({ version: 1 });
    expect(negotiate({ ...base, pinned: 1 })).toMatchObject({ version: 1 });
    expect(negotiate({ ...base, accept: VND, pinned: 1 })).toMatchObject({ version: 1, contentType: `${VND}; version=1` });
  });
  it('reads a version parameter as a canonical integer, as Content-Type and Api-Version are read: version=02 names no version', () => {
    for (const spelled of ['02', '0x2', '2.0', '+2', '2e0', ' 2']) {
      expect(negotiate({ ...base, accept: `${VND}; version="${spelled}"` })).toMatchObject({ ok: false, detail: expect.stringContaining(`Unknown version ${spelled}`) });
      expect(acceptsType(`${VND}; version="${spelled}"`, 'application/json')).toBe(false);
    }
    expect(negotiate({ ...base, accept: `${VND}; version=2` })).toMatchObject({ ok: true, version: 2, vendor: true });
  });
  it('an Accept of empty elements only is no Accept (RFC 9110 5.6.1)', () => {
    for (const accept of ['', ' ', ',', ' , ,']) {
      expect(negotiate({ ...base, accept })).toMatchObject({ ok: true, vendor: false });
      expect(acceptsType(accept, 'text/event-stream')).toBe(true);
    }
  });
  it('refuses unknown versions and unacceptable types with a reason', () => {
    expect(negotiate({ ...base, accept: `${VND}; version=9` })).toMatchObject({ ok: false });
    expect(negotiate({ ...base, apiVersion: 3 })).toMatchObject({ ok: false });
    expect(negotiate({ ...base, accept: 'text/html' })).toMatchObject({ ok: false });
    expect(negotiate({ ...base, accept: 'application/json;q=0' })).toMatchObject({ ok: false });
  });
  it('does not serve a vendor version that contradicts the URL version', () => {
    expect(negotiate({ ...base, pathVersion: 1, accept: `${VND}; version=2` })).toMatchObject({ ok: false });
    // The refusal names what the path serves: its own version only, on a versioned path.
    expect(negotiate({ ...base, pathVersion: 2, accept: `${VND}; version=1` })).toEqual({ ok: false, detail: `Acceptable: application/json, ${VND}; version=2` });
    expect(negotiate({ ...base, accept: 'text/html' })).toEqual({ ok: false, detail: `Acceptable: application/json, ${VND}; version=<1|2>` });
    expect(negotiate({ ...base, pathVersion: 1, accept: `${VND}; version=2, application/json;q=0.5` })).toMatchObject({ ok: true, version: 1, contentType: 'application/json' });
  });
  it('prefers higher q values', () => {
    expect(negotiate({ ...base, accept: `application/json;q=0.5, ${VND}; version=1` })).toMatchObject({ version: 1, vendor: true });
  });
  it('never throws and only ever answers a known version (generated Accept headers)', () => {
    fc.assert(
      fc.property(fc.string(), fc.option(fc.integer()), fc.option(fc.integer({ min: 1, max: 2 })), (accept, apiVersion, pinned) => {
        const r = negotiate({ ...base, accept, apiVersion: apiVersion ?? undefined, pinned });
        if (r.ok) expect([1, 2]).toContain(r.version);
      }),
    );
  });
});

describe('refusals and wildcards (RFC 9110 12.5.1)', () => {
  it('serves the vendor type under a wildcard when JSON is refused, and refuses one vendor version only', () => {
    expect(negotiate({ ...base, accept: 'application/json;q=0, */*' })).toMatchObject({ ok: true, version: 2, contentType: `${VND}; version=2` });
    expect(negotiate({ ...base, accept: 'application/json;q=0, application/*' })).toMatchObject({ ok: true, version: 2, vendor: true });
    expect(negotiate({ ...base, accept: `${VND}; version=1;q=0, ${VND}` })).toMatchObject({ ok: true, version: 2, vendor: true });
    expect(negotiate({ ...base, accept: `${VND};q=0, ${VND}; version=1` })).toMatchObject({ ok: true, version: 1, vendor: true });
    expect(negotiate({ ...base, accept: 'application/*;q=0, */*' })).toMatchObject({ ok: false });
    expect(negotiate({ ...base, accept: `application/json;q=0, ${VND}; version=2;q=0, */*` })).toMatchObject({ ok: false });
  });

  // An oracle written apart from the implementation: the q a range list gives one
  // representation is the q of its most specific matching range.
  const VOCABULARY = ['application/json', VND, `${VND}; version=1`, `${VND}; version=2`, `${VND}; version=7`, 'application/*', '*/*', 'text/html', 'text/*'];
  const range = fc
    .tuple(fc.constantFrom(...VOCABULARY), fc.constantFrom('', ';q=0', ';q=0.5', ';q=1'))
    .map(([t, q]) => ({ text: `${t}${q}`, type: t.split(';')[0], version: /version=(\d+)/.exec(t)?.[1], q: q === '' ? 1 : Number(q.slice(3)) }));
  type R = { type: string; version?: string; q: number };
  const qOf = (rs: R[], type: string, version: number | undefined): number => {
    const rank = (r: R) => {
      if (r.type === type) return r.version === undefined ? 3 : version !== undefined && Number(r.version) === version ? 4 : -1;
      if (r.type === `${type.split('/')[0]}/*`) return 2;
      return r.type === '*/*' ? 1 : -1;
    };
    const matching = rs.filter((r) => rank(r) > 0);
    if (matching.length === 0) return 0;
    const top = Math.max(...matching.map(rank));
    return Math.max(...matching.filter((r) => rank(r) === top).map((r) => r.q));
  };
  it('serves only what Accept admits, and answers 406 only when it admits nothing the service offers (generated)', () => {
    fc.assert(
      fc.property(fc.array(range, { minLength: 1, maxLength: 5 }), fc.constantFrom<1 | 2 | null>(null, 1, 2), (rs, pathVersion) => {
        const r = negotiate({ ...base, pathVersion, accept: rs.map((x) => x.text).join(', ') });
        const fallback = pathVersion ?? 2;
        // What the service offers: JSON and the vendor type in the fallback version, and the vendor type in a version a range names with q > 0.
        const named = rs.filter((x) => x.type === VND && x.version !== undefined && x.q > 0).map((x) => Number(x.version));
        const vendorVersions = [fallback, ...named].filter((v) => (v === 1 || v === 2) && (pathVersion === null || v === pathVersion));
        const offered = [{ vendor: false, version: fallback }, ...vendorVersions.map((version) => ({ vendor: true, version }))];
        const admitted = offered.filter((o) => qOf(rs, o.vendor ? VND : 'application/json', o.vendor ? o.version : undefined) > 0);
        if (r.ok) expect(admitted).toContainEqual({ vendor: r.vendor, version: r.version });
        else expect(admitted).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('acceptsType (the SSE route: does Accept admit text/event-stream?)', () => {
  const ES = 'text/event-stream';
  it('admits it when Accept is absent or empty (empty list elements only too), or names it, text/* or */* with q > 0', () => {
    for (const accept of [undefined, '', '  ', ',,,', ES, `${ES}; charset=utf-8`, 'TEXT/Event-Stream', 'text/*', '*/*', `application/json, ${ES};q=0.1`, 'text/html, */*;q=0.8', 'text/*;q=0, text/event-stream']) {
      expect([accept, acceptsType(accept, ES)]).toEqual([accept, true]);
    }
  });
  it('refuses it when nothing admits it, when the most specific range that matches has q=0, or when no range parses', () => {
    for (const accept of ['application/json', 'text/html', `${ES};q=0`, `${ES};q=0, */*`, 'text/*;q=0', '*/*, text/*;q=0', 'garbage', 'garbage, ,']) {
      expect([accept, acceptsType(accept, ES)]).toEqual([accept, false]);
    }
  });

  const range = fc
    .tuple(fc.constantFrom('application/json', 'text/html', 'text/plain', 'image/*', 'application/*', 'garbage'), fc.option(fc.constantFrom('0.1', '0.5', '1', '0'), { nil: undefined }))
    .map(([type, q]) => (q === undefined ? type : `${type};q=${q}`));
  const others = fc.array(range, { maxLength: 5 });
  it('generated headers: listing it with q=0 refuses it whatever else is listed; listing it alone with q > 0 admits it', () => {
    fc.assert(
      fc.property(others, fc.boolean(), (rest, first) => {
        const refused = first ? [`${ES};q=0`, ...rest, '*/*'] : [...rest, '*/*', `${ES};q=0`];
        expect(acceptsType(refused.join(', '), ES)).toBe(false);
        expect(acceptsType([...rest, `${ES};q=0.2`].join(', '), ES)).toBe(true);
      }),
    );
  });
  it('never throws (arbitrary strings)', () => {
    fc.assert(fc.property(fc.string(), (accept) => void acceptsType(accept, ES)));
  });
});

describe('Accept parameters (one media type parser)', () => {
  it('reads quoted and upper-case version parameters, and commas inside quotes', () => {
    expect(negotiate({ ...base, accept: `${VND}; VERSION="1"` })).toMatchObject({ ok: true, version: 1, vendor: true });
    expect(negotiate({ ...base, accept: `${VND}; note="a, b"; v=1` })).toMatchObject({ ok: true, version: 1, vendor: true });
  });
});

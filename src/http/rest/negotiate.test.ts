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
  it('follows the order URL, Accept, Api-Version, pinned, newest', () => {
    expect(negotiate({ ...base, pathVersion: 1, apiVersion: 2 })).toMatchObject({ version: 1 });
    expect(negotiate({ ...base, accept: `${VND}; version=2`, apiVersion: 1, pinned: 1 })).toMatchObject({ version: 2 });
    expect(negotiate({ ...base, apiVersion: 1, pinned: 2 })).toMatchObject({ version: 1 });
    expect(negotiate({ ...base, pinned: 1 })).toMatchObject({ version: 1 });
    expect(negotiate({ ...base, accept: VND, pinned: 1 })).toMatchObject({ version: 1, contentType: `${VND}; version=1` });
  });
  it('refuses unknown versions and unacceptable types with a reason', () => {
    expect(negotiate({ ...base, accept: `${VND}; version=9` })).toMatchObject({ ok: false });
    expect(negotiate({ ...base, apiVersion: 3 })).toMatchObject({ ok: false });
    expect(negotiate({ ...base, accept: 'text/html' })).toMatchObject({ ok: false });
    expect(negotiate({ ...base, accept: 'application/json;q=0' })).toMatchObject({ ok: false });
  });
  it('does not serve a vendor version that contradicts the URL version', () => {
    expect(negotiate({ ...base, pathVersion: 1, accept: `${VND}; version=2` })).toMatchObject({ ok: false });
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

describe('acceptsType (the SSE route: does Accept admit text/event-stream?)', () => {
  const ES = 'text/event-stream';
  it('admits it when Accept is absent or empty, or names it, text/* or */* with q > 0', () => {
    for (const accept of [undefined, '', '  ', ES, `${ES}; charset=utf-8`, 'TEXT/Event-Stream', 'text/*', '*/*', `application/json, ${ES};q=0.1`, 'text/html, */*;q=0.8', 'text/*;q=0, text/event-stream']) {
      expect([accept, acceptsType(accept, ES)]).toEqual([accept, true]);
    }
  });
  it('refuses it when nothing admits it, when the most specific range that matches has q=0, or when no range parses', () => {
    for (const accept of ['application/json', 'text/html', `${ES};q=0`, `${ES};q=0, */*`, 'text/*;q=0', '*/*, text/*;q=0', 'garbage', ',,,']) {
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

import fc from 'fast-check';
import { evaluate, judgeRead, parseTagCondition, readMatches, strongMatch, weakMatch, parseTag } from './conditional';

const cur = (selected: string, all: string[] = [selected]) => ({ selected, all: () => all });

describe('entity tag comparison (RFC 9110 13.1)', () => {
  it('matches strongly only when both tags are strong and identical', () => {
    expect(strongMatch(parseTag('"a"'), parseTag('"a"'))).toBe(true);
    expect(strongMatch(parseTag('W/"a"'), parseTag('"a"'))).toBe(false);
    expect(strongMatch(parseTag('W/"a"'), parseTag('W/"a"'))).toBe(false);
    expect(strongMatch(parseTag('"a"'), parseTag('"b"'))).toBe(false);
  });
  it('matches weakly whenever the opaque parts are identical', () => {
    expect(weakMatch(parseTag('W/"a"'), parseTag('"a"'))).toBe(true);
    expect(weakMatch(parseTag('W/"a"'), parseTag('W/"a"'))).toBe(true);
    expect(weakMatch(parseTag('"a"'), parseTag('"b"'))).toBe(false);
  });
  it('parses lists, ignores empty elements and rejects garbage', () => {
    expect(parseTagCondition('"a", W/"b",,"c"')).toEqual({
      any: false,
      tags: [
        { weak: false, opaque: '"a"' },
        { weak: true, opaque: '"b"' },
        { weak: false, opaque: '"c"' },
      ],
    });
    expect(parseTagCondition('*')).toEqual({ any: true });
    expect(parseTagCondition('a')).toEqual({ invalid: true });
    expect(parseTagCondition('')).toEqual({ invalid: true });
  });
});

describe('precondition evaluation (RFC 9110 13.2.2)', () => {
  it('answers 304 to GET and HEAD when If-None-Match matches, weakly', () => {
    expect(evaluate({ method: 'GET', ifNoneMatch: 'W/"x"', current: cur('"x"') })).toBe('not_modified');
    expect(evaluate({ method: 'HEAD', ifNoneMatch: '"y", "x"', current: cur('"x"') })).toBe('not_modified');
    expect(evaluate({ method: 'GET', ifNoneMatch: '*', current: cur('"x"') })).toBe('not_modified');
    expect(evaluate({ method: 'GET', ifNoneMatch: '"y"', current: cur('"x"') })).toBe('proceed');
  });
  it('answers 412 to other methods when If-None-Match matches', () => {
    expect(evaluate({ method: 'PUT', ifNoneMatch: '"x"', current: cur('"x"') })).toBe('precondition_failed');
  });
  it('requires a strong match for If-Match, lists and * included', () => {
    expect(evaluate({ method: 'PUT', ifMatch: '"x"', current: cur('"x"') })).toBe('proceed');
    expect(evaluate({ method: 'PUT', ifMatch: 'W/"x"', current: cur('"x"') })).toBe('precondition_failed');
    expect(evaluate({ method: 'PUT', ifMatch: '"a", "x"', current: cur('"x"') })).toBe('proceed');
    expect(evaluate({ method: 'PUT', ifMatch: '*', current: cur('"x"') })).toBe('proceed');
    expect(evaluate({ method: 'PUT', ifMatch: 'garbage', current: cur('"x"') })).toBe('precondition_failed');
  });
  it('accepts any current representation tag for If-Match, but only the selected one for If-None-Match', () => {
    const c = cur('"1-v2j"', ['"1-v1j"', '"1-v2j"']);
    expect(evaluate({ method: 'PATCH', ifMatch: '"1-v1j"', current: c })).toBe('proceed');
    expect(evaluate({ method: 'GET', ifNoneMatch: '"1-v1j"', current: c })).toBe('proceed');
  });
  it('evaluates If-Match before If-None-Match', () => {
    expect(evaluate({ method: 'GET', ifMatch: '"no"', ifNoneMatch: '"x"', current: cur('"x"') })).toBe('precondition_failed');
  });
  it('never proceeds on a write whose If-Match names no current tag (generated tags)', () => {
    const tag = fc.stringMatching(/^[a-z0-9-]{1,12}$/).map((s) => `"${s}"`);
    fc.assert(
      fc.property(fc.array(tag, { minLength: 1, maxLength: 5 }), tag, (sent, current) => {
        const outcome = evaluate({ method: 'PUT', ifMatch: sent.join(', '), current: cur(current) });
        expect(outcome).toBe(sent.includes(current) ? 'proceed' : 'precondition_failed');
      }),
    );
  });
  it('never throws on arbitrary header values', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.constantFrom('GET', 'PUT'), (im, inm, method) => {
        expect(['proceed', 'not_modified', 'precondition_failed']).toContain(evaluate({ method, ifMatch: im, ifNoneMatch: inm, current: cur('"x"') }));
      }),
    );
  });
  it('refuses a write whose If-None-Match names any representation of the current state (RFC 9110 13.1.2)', () => {
    const current = cur('"1-2-v2j"', ['"1-2-v1j"', '"1-2-v1n"', '"1-2-v2j"', '"1-2-v2n"']);
    for (const inm of ['*', '"1-2-v1n"', 'W/"1-2-v2j"', '"0-0-v2j", "1-2-v1j"']) {
      expect(evaluate({ method: 'PUT', ifMatch: '"1-2-v2j"', ifNoneMatch: inm, current })).toBe('precondition_failed');
      expect(evaluate({ method: 'PATCH', ifNoneMatch: inm, current })).toBe('precondition_failed');
    }
    expect(evaluate({ method: 'PUT', ifMatch: '"1-2-v2j"', ifNoneMatch: '"1-1-v2j"', current })).toBe('proceed');
    // A read still compares only the representation it selected.
    expect(evaluate({ method: 'GET', ifNoneMatch: '"1-2-v1n"', current })).toBe('proceed');
  });

  it('builds the current tags only when a list of tags must be compared with them', () => {
    const all = jest.fn(() => ['"1-2-v1j"', '"1-2-v2j"']);
    const current = { selected: '"1-2-v2j"', all };
    expect(evaluate({ method: 'PATCH', ifMatch: '*', current })).toBe('proceed');
    expect(evaluate({ method: 'GET', ifNoneMatch: '"1-2-v2j"', current })).toBe('not_modified');
    expect(all).not.toHaveBeenCalled();
    expect(evaluate({ method: 'PATCH', ifMatch: '"0-1-v2j", "0-2-v2j", "1-2-v1j"', current })).toBe('proceed');
    expect(all).toHaveBeenCalledTimes(1);
  });
});

describe('If-Match on a read (readMatches)', () => {
  const opaque = fc.stringMatching(/^[a-z0-9-]{0,8}$/).map((s) => `"${s}"`);
  const tag = fc.tuple(fc.boolean(), opaque).map(([weak, o]) => (weak ? `W/${o}` : o));
  it('holds exactly when a listed tag is the selected strong tag, or for *; never without a tag to match (generated)', () => {
    fc.assert(
      fc.property(fc.array(tag, { minLength: 1, maxLength: 4 }), fc.option(opaque, { nil: undefined }), (listed, etag) => {
        const header = listed.join(', ');
        expect(readMatches(header, etag)).toBe(etag !== undefined && listed.includes(etag));
        expect(readMatches('*', etag)).toBe(true);
      }),
    );
  });
  it('fails an unparseable field', () => {
    expect(readMatches('nope', '"nope"')).toBe(false);
    expect(readMatches('', '"a"')).toBe(false);
  });
});

describe('the conditional step of a read (judgeRead), as REST operations and /graphql take it', () => {
  const opaque = fc.stringMatching(/^[a-z0-9-]{0,8}$/).map((s) => `"${s}"`);
  const tag = fc.tuple(fc.boolean(), opaque).map(([weak, o]) => (weak ? `W/${o}` : o));
  const list = fc.option(
    fc.array(tag, { minLength: 1, maxLength: 3 }).map((l) => l.join(', ')),
    { nil: undefined },
  );
  const method = fc.constantFrom('GET', 'HEAD', 'POST', 'PATCH', 'DELETE');
  const status = fc.constantFrom(200, 201, 204, 304, 400, 404, 412, 500);
  it('judges If-Match before If-None-Match, on 2xx and 304 reads only; a 304 only for a 200 with a tag (generated)', () => {
    fc.assert(
      fc.property(method, status, fc.option(opaque, { nil: undefined }), list, list, (m, s, etag, im, inm) => {
        const headers = { ...(im === undefined ? {} : { 'if-match': im }), ...(inm === undefined ? {} : { 'if-none-match': inm }) };
        const verdict = judgeRead(m, headers, s, etag);
        const read = (m === 'GET' || m === 'HEAD') && ((s >= 200 && s < 300) || s === 304);
        const expected = !read
          ? undefined
          : im !== undefined && !readMatches(im, etag)
            ? 'precondition_failed'
            : inm !== undefined && s === 200 && etag !== undefined && evaluate({ method: m, ifNoneMatch: inm, current: cur(etag, []) }) === 'not_modified'
              ? 'not_modified'
              : undefined;
        expect(verdict).toBe(expected);
      }),
    );
  });
  it('answers 304 for a held weak tag and 412 for a wrong If-Match even when If-None-Match would match', () => {
    expect(judgeRead('GET', { 'if-none-match': 'W/"a"' }, 200, '"a"')).toBe('not_modified');
    expect(judgeRead('HEAD', { 'if-none-match': '*' }, 200, '"a"')).toBe('not_modified');
    expect(judgeRead('GET', { 'if-match': '"b"', 'if-none-match': '"a"' }, 200, '"a"')).toBe('precondition_failed');
    expect(judgeRead('GET', { 'if-match': '"a"' }, 404, undefined)).toBeUndefined();
  });
});

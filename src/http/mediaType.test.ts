import fc from 'fast-check';
import { parseMediaType, splitList, versionOf } from './mediaType';
import { baseMediaType } from './body';

const params = (value: string) => Object.fromEntries(parseMediaType(value)?.params ?? []);

describe('parseMediaType', () => {
  it('lowercases the type and parameter names, keeps values as written', () => {
    expect(parseMediaType('Application/JSON; Charset=UTF-8')).toEqual({ type: 'application/json', params: new Map([['charset', 'UTF-8']]) });
    expect(parseMediaType('application/vnd.orderline.order+json')?.params.size).toBe(0);
  });

  it('unquotes quoted strings (RFC 9110 5.6.4): escapes, and ; , = inside quotes', () => {
    expect(params('a/b; v="2"')).toEqual({ v: '2' });
    expect(params('a/b; x="a;b=c,d"; y=z')).toEqual({ x: 'a;b=c,d', y: 'z' });
    expect(params('a/b; x="q\\"uo\\\\te"')).toEqual({ x: 'q"uo\\te' });
    expect(params('a/b; x=""')).toEqual({ x: '' });
  });

  it('allows optional whitespace around ; and empty parameters', () => {
    expect(params(' a/b ;version=1 ;  v=2\t')).toEqual({ version: '1', v: '2' });
    expect(params('a/b;')).toEqual({});
    expect(params('a/b; ; c=d;')).toEqual({ c: 'd' });
  });

  it('refuses a parameter named twice, in any case (RFC 6838 4.3: which was meant is not for the server to guess)', () => {
    for (const v of ['a/b; version=1; VERSION=2', 'a/b; charset=utf-8; charset=utf-8', 'a/b; q=1; x=2; q=0']) expect(parseMediaType(v)).toBeNull();
  });

  it('refuses what is not a media type', () => {
    for (const bad of ['', 'json', 'a/', '/b', 'a b/c', 'a/b c', 'a/b; x', 'a/b; =1', 'a/b; x=', 'a/b; x="open', 'a/b; x="a"b', 'a/b; x=a b', 'a/b; x = 1', 'a/b; x="\n"', 'a/b; x=@'])
      expect([bad, parseMediaType(bad)]).toEqual([bad, null]);
  });

  it('reads back every media type it is given in canonical form (generated)', () => {
    const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/);
    const qdtext = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '\t', ';', ',', '=', '"', '\\', '/', 'é'), maxLength: 10 });
    const quote = (s: string) => `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`;
    fc.assert(
      fc.property(token, token, fc.uniqueArray(fc.tuple(token, fc.oneof(token, qdtext), fc.boolean()), { selector: ([n]) => n.toLowerCase(), maxLength: 4 }), (t, s, ps) => {
        const text = `${t}/${s}${ps.map(([n, v, q]) => `; ${n}=${q || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(v) ? quote(v) : v}`).join('')}`;
        expect(parseMediaType(text)).toEqual({ type: `${t}/${s}`.toLowerCase(), params: new Map(ps.map(([n, v]) => [n.toLowerCase(), v])) });
      }),
    );
  });

  it('never throws on arbitrary text, and what it accepts has a token type (generated)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom('a', '/', ';', '=', '"', '\\', ' ', ',', 'v', '1') })), (text) => {
        const m = parseMediaType(text);
        if (m) expect(m.type).toMatch(/^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/);
      }),
    );
  });

  it('answers a text it has seen with the same parse, however many distinct texts came between (generated)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom('a', '/', ';', '=', '"', 'v', '1') }), fc.constant(`a/b; x=${'y'.repeat(300)}`)), { maxLength: 400 }), (texts) => {
        const first = texts.map((t) => parseMediaType(t));
        texts.forEach((t, i) => expect(parseMediaType(t)).toEqual(first[i]));
      }),
      { numRuns: 50 },
    );
    const text = 'application/vnd.orderline.order+json; version=2';
    expect(parseMediaType(text)).toBe(parseMediaType(text)); // remembered, not parsed again
  });
});

describe('versionOf', () => {
  it('reads version, else its synonym v, in any case and quoted or not', () => {
    expect(versionOf('application/vnd.orderline.order+json; version=2')).toBe('2');
    expect(versionOf('application/vnd.orderline.order+json;V="1"')).toBe('1');
    expect(versionOf('a/b; v=1; version=2')).toBe('2');
    expect(versionOf('a/b; xversion=2')).toBeUndefined();
    expect(versionOf('a/b')).toBeUndefined();
    expect(versionOf(undefined)).toBeUndefined();
    expect(versionOf('not a media type; version=2')).toBeUndefined();
  });
});

describe('splitList', () => {
  it('splits at commas outside quoted strings', () => {
    expect(splitList('a/b; x="1,2", c/d')).toEqual(['a/b; x="1,2"', ' c/d']);
    expect(splitList('a/b; x="\\",", c/d')).toEqual(['a/b; x="\\","', ' c/d']);
    expect(splitList('')).toEqual(['']);
  });
});

describe('body.ts readers (Content-Type)', () => {
  it('baseMediaType and versionOf read through parseMediaType', () => {
    expect(baseMediaType('Application/Merge-Patch+JSON; charset=utf-8')).toBe('application/merge-patch+json');
    expect(baseMediaType(undefined)).toBe('');
    expect(baseMediaType('')).toBe('');
    expect(versionOf('application/vnd.orderline.order+json; version="2"')).toBe('2');
    expect(versionOf('application/vnd.orderline.order+json; charset=utf-8')).toBeUndefined();
  });
});

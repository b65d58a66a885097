import fc from 'fast-check';
import { buildSchema } from 'graphql';
import { createHandler } from 'graphql-http';
import { acceptedMediaType, mediaTypeFor } from './engine';
import { acceptsType } from '../http/rest/negotiate';

/** graphql-http's own handler on a one-field schema: the media type it answers a query with, for an Accept header. */
const library = createHandler({ schema: buildSchema('type Query { hello: String }'), rootValue: { hello: 'world' } });
async function libraryChoice(accept: string | undefined): Promise<string | undefined> {
  const [, init] = await library({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', ...(accept === undefined ? {} : { accept }) },
    body: '{"query":"{ hello }"}',
    raw: null,
    context: null,
  });
  return init.status === 406 ? undefined : init.headers?.['content-type'];
}

const entry = fc
  .tuple(
    fc.constantFrom('application/graphql-response+json', 'application/json', 'application/*', '*/*', 'text/html', 'application/xml', 'APPLICATION/JSON', 'Application/GraphQL-Response+JSON'),
    // Not `charset="utf-8"`: graphql-http compares the parameter's text, where RFC 9110 5.6.6 makes it `charset=utf-8`;
    // nor `charset=utf8`, which graphql-http takes for application/json only (both tested below).
    fc.constantFrom('', ';charset=utf-8', '; charset=UTF-8', ';charset=latin1'),
    fc.constantFrom('', ' ', '  '),
  )
  .map(([type, params, space]) => `${space}${type}${params}`);

describe('mediaTypeFor', () => {
  it('admits exactly what REST and the stream admit, by the same rule: empty elements, repeated ranges, wildcards, q (generated)', () => {
    const range = fc.tuple(fc.constantFrom('application/json', 'application/graphql-response+json', 'application/*', '*/*', 'text/html', ''), fc.constantFrom('', ';q=0', ';q=0.5', ';q=1'));
    fc.assert(
      fc.property(fc.array(range, { maxLength: 5 }), (ranges) => {
        const accept = ranges.map(([t, q]) => (t === '' ? '' : `${t}${q}`)).join(', ');
        const chosen = acceptedMediaType(accept);
        expect({ accept, admitted: chosen !== undefined }).toEqual({ accept, admitted: acceptsType(accept, 'application/json') || acceptsType(accept, 'application/graphql-response+json') });
        if (chosen !== undefined) expect(acceptsType(accept, chosen.split(';')[0])).toBe(true);
      }),
    );
    // Two found by review: only empty elements is no Accept; a repeated range's higher q decides, as on REST.
    expect(acceptedMediaType(',')).toBe('application/json; charset=utf-8');
    expect(acceptedMediaType('application/json;q=0, application/json')).toBe('application/json; charset=utf-8');
  });

  it("answers with graphql-http's own choice for every Accept header without q (generated)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.option(
          fc.array(entry, { minLength: 1, maxLength: 4 }).map((es) => es.join(',')),
          { nil: undefined },
        ),
        async (accept) => {
          const chosen = await libraryChoice(accept);
          if (chosen !== undefined) expect(mediaTypeFor(accept)).toBe(chosen);
          else expect(mediaTypeFor(accept)).toBe('application/json; charset=utf-8'); // graphql-http answers 406; ours fall back
        },
      ),
    );
  });

  it('weighs q (RFC 9110 12.5.1): the higher q wins, q=0 refuses, a tie goes to the first listed (generated)', () => {
    const GR = 'application/graphql-response+json; charset=utf-8';
    const JSON_ = 'application/json; charset=utf-8';
    const q = fc.constantFrom(0, 0.1, 0.5, 0.9, 1);
    fc.assert(
      fc.property(q, q, fc.boolean(), (qGr, qJson, grFirst) => {
        const gr = `application/graphql-response+json;q=${qGr}`;
        const json = `application/json;q=${qJson}`;
        const accept = grFirst ? `${gr}, ${json}` : `${json}, ${gr}`;
        const expected = qGr === 0 && qJson === 0 ? JSON_ : qGr > qJson || (qGr === qJson && grFirst) ? GR : JSON_;
        expect(mediaTypeFor(accept)).toBe(expected);
      }),
    );
    // A wildcard's q counts for the type it admits (RFC 9110 12.5.1).
    expect(mediaTypeFor('application/json;q=0.1, */*')).toBe(GR);
    expect(mediaTypeFor('application/json;q=0.5, application/*')).toBe(GR);
    // utf8 names UTF-8 for both types; an Accept of empty list elements is no Accept (RFC 9110 5.6.1).
    expect(mediaTypeFor('application/graphql-response+json;charset=utf8')).toBe(GR);
    expect(mediaTypeFor('application/json;charset=UTF8')).toBe(JSON_);
    expect(mediaTypeFor(' , ,')).toBe(JSON_);
    // A quoted parameter value is the same value.
    expect(mediaTypeFor('application/graphql-response+json; charset="utf-8"')).toBe(GR);
    // application/json refused: a wildcard stands for the other type.
    expect(mediaTypeFor('application/json;q=0, */*')).toBe(GR);
    expect(mediaTypeFor('*/*;q=0.5, application/graphql-response+json;q=0.4')).toBe(JSON_);
  });
});

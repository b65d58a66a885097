import fc from 'fast-check';
import { buildSchema } from 'graphql';
import { createHandler } from 'graphql-http';
import { mediaTypeFor } from './engine';

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
    fc.constantFrom('', ';charset=utf-8', '; charset=UTF-8', ';charset=utf8', ';charset=latin1', ';q=0.5', '; q=0.9; charset=utf-8', ';charset="utf-8"'),
    fc.constantFrom('', ' ', '  '),
  )
  .map(([type, params, space]) => `${space}${type}${params}`);

describe('mediaTypeFor', () => {
  it("answers with graphql-http's own choice for every Accept header it accepts (generated)", async () => {
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
});

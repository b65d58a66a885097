import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { idempotencyRuleProblems } from './idempotency';

type Op = { parameters?: unknown[]; responses: Record<string, unknown> };
type Doc = { paths: Record<string, Record<string, Op>>; components: { responses: Record<string, unknown> } };
const contract = () => YAML.parse(readFileSync(join(__dirname, '../contracts/openapi.yaml'), 'utf8')) as Doc;

describe("the Idempotency-Key rule in the contract (the key's 409 and 422 are declared)", () => {
  it('holds for every operation of contracts/openapi.yaml', () => {
    expect(idempotencyRuleProblems(contract())).toEqual([]);
  });

  it('refuses a keyed operation without its 422, without a 409, or with a 409 without Retry-After', () => {
    const doc = contract();
    delete doc.paths['/v2/orders'].post.responses['422'];
    delete doc.paths['/v1/orders'].post.responses['409'];
    doc.paths['/v2/orders/{orderId}/cancel'].post.responses['409'] = { $ref: '#/components/responses/E409Plain' };
    doc.components.responses.E409Plain = { description: 'a 409 without Retry-After', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
    expect(idempotencyRuleProblems(doc)).toEqual([
      expect.stringContaining('POST /v1/orders: takes Idempotency-Key but declares no "409"'),
      expect.stringContaining('POST /v2/orders: takes Idempotency-Key but declares no "422"'),
      expect.stringContaining('POST /v2/orders/{orderId}/cancel: its "409" must declare Retry-After'),
    ]);
  });

  it('reads the key from an inline parameter and from the path item, in any case', () => {
    const doc = contract();
    const bare = { responses: { '200': { description: 'ok' } } };
    doc.paths['/x'] = { post: { ...bare, parameters: [{ in: 'header', name: 'idempotency-key', schema: { type: 'string' } }] } };
    doc.paths['/y'] = { parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }] as unknown as Op, put: bare };
    doc.paths['/z'] = { post: { ...bare, parameters: [{ in: 'query', name: 'Idempotency-Key' }] } };
    expect(idempotencyRuleProblems(doc)).toEqual([
      expect.stringContaining('POST /x: takes Idempotency-Key but declares no "422"'),
      expect.stringContaining('POST /x: takes Idempotency-Key but declares no "409"'),
      expect.stringContaining('PUT /y: takes Idempotency-Key but declares no "422"'),
      expect.stringContaining('PUT /y: takes Idempotency-Key but declares no "409"'),
    ]);
  });
});

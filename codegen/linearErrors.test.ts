/**
 * The generated validators gather errors in linear time (ajv.ts `linearErrors`): Ajv's own
 * `vErrors.concat(ref.errors)` per failing referenced call made an array of 32,000 bad items,
 * which a 64 KB body holds, cost seconds of blocked event loop. The rewrite must keep every
 * error and its order.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import standaloneCode from 'ajv/dist/standalone';
import fc from 'fast-check';
import { linearErrors } from './ajv';

type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };

const dir = mkdtempSync(join(tmpdir(), 'orderline-linear-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A standalone validator module (CommonJS), loaded as a file. */
async function load(name: string, code: string): Promise<Record<string, Validate>> {
  const file = join(dir, `${name}.js`);
  writeFileSync(file, code);
  return (await import(file)) as Record<string, Validate>;
}

describe('linearErrors', () => {
  const ajv = new Ajv2020({ allErrors: true, strict: false, inlineRefs: false, code: { source: true } });
  ajv.addSchema({ $id: 'item', type: 'object', required: ['sku'], properties: { sku: { type: 'string', pattern: '^[a-z]{1,4}$' }, quantity: { type: 'integer', minimum: 1 } } });
  ajv.addSchema({ type: 'object', properties: { items: { type: 'array', maxItems: 3, items: { $ref: 'item' } }, gift: { $ref: 'item' } } }, 'order');
  const code = standaloneCode(ajv, { order: 'order' });

  it("replaces every concatenation of a referenced schema's errors", () => {
    expect(code).toMatch(/vErrors\.concat\(/);
    expect(linearErrors(code)).not.toMatch(/\.concat\(/);
  });

  it('reports the same errors in the same order as Ajv (generated)', async () => {
    const [ajvs, ours] = [(await load('ajv', code)).order, (await load('linear', linearErrors(code))).order];
    const item = fc.oneof(fc.record({ sku: fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), quantity: fc.oneof(fc.integer({ min: -2, max: 3 }), fc.string()) }, { requiredKeys: [] }), fc.integer(), fc.constant(null));
    fc.assert(
      fc.property(fc.record({ items: fc.array(item, { maxLength: 8 }), gift: item }, { requiredKeys: [] }), (order) => {
        expect(ours(order)).toBe(ajvs(order));
        expect(ours.errors ?? null).toEqual(ajvs.errors ?? null);
      }),
    );
  });

  it('is applied to every committed validator module', () => {
    for (const file of ['generated/openapi/validators.ts', 'generated/openapi/params.ts', 'generated/asyncapi/validators.ts', 'generated/asyncapi/messages.ts']) {
      expect({ file, concat: /vErrors\.concat\(/.test(readFileSync(join(__dirname, '..', file), 'utf8')) }).toEqual({ file, concat: false });
    }
  });
});

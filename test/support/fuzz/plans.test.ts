/**
 * The contract fuzzer on an operation a backend developer adds: a path parameter that is
 * not an order id, and a query list. Its plans must be requests the contract allows.
 */
import fc from 'fast-check';
import { OPERATIONS, type FuzzOperation, type Param } from './contract';
import { happyPlan, validPlan, wirePath, type Plan } from './plans';

const read = OPERATIONS.find((op) => op.route.method === 'GET' && op.route.path === '/v2/orders/{orderId}')!;
const widgetId: Param = { name: 'widgetId', in: 'path', required: true, schema: { type: 'string', pattern: '^w-[0-9]{1,4}$' }, example: 'w-1' };
const tag: Param = { name: 'tag', in: 'query', required: true, schema: { type: 'array', minItems: 2, maxItems: 3, items: { type: 'string', enum: ['red', 'green', 'blue'] } } };
const widgets = (params: Param[]): FuzzOperation => ({ ...read, route: { ...read.route, path: '/widgets/{widgetId}/parts' }, params, operationId: read.operationId });

const samples = (op: FuzzOperation, arb = validPlan(op)): Plan[] => fc.sample(arb, { numRuns: 60, seed: 3 });

describe('fuzz plans for a new operation', () => {
  it('fill a path parameter other than orderId, from its example mostly, with schema-valid text otherwise', () => {
    const op = widgets([widgetId, tag]);
    const paths = samples(op).map((plan) => wirePath(op, plan, 'unused'));
    for (const path of paths) expect(path).toMatch(/^\/widgets\/w-[0-9]{1,4}\/parts$/);
    expect(paths.filter((p) => p === '/widgets/w-1/parts').length).toBeGreaterThan(paths.length / 2);
  });

  it('send a query list once per item (form, explode), never comma-joined', () => {
    for (const plan of samples(widgets([widgetId, tag]))) {
      const tags = plan.query.filter(([k]) => k === 'tag').map(([, v]) => v);
      expect(tags.length).toBeGreaterThanOrEqual(2);
      for (const t of tags) expect(['red', 'green', 'blue']).toContain(t);
    }
  });

  it('take the example on the happy path, and say so when the contract gives none', () => {
    const op = widgets([widgetId]);
    for (const plan of samples(
      op,
      happyPlan(op, () => true),
    ))
      expect(wirePath(op, plan, 'unused')).toBe('/widgets/w-1/parts');
    const bare = widgets([{ ...widgetId, example: undefined }]);
    expect(() =>
      samples(
        bare,
        happyPlan(bare, () => true),
      ),
    ).toThrow(/widgetId declares no example/);
  });

  it('expect on the happy path the success the operation declares (a DELETE answering 204), as the order operations declare 200 and 201', () => {
    const remove: FuzzOperation = {
      ...widgets([widgetId]),
      route: { ...read.route, method: 'DELETE', path: '/widgets/{widgetId}/parts' },
      responses: { '204': { mediaTypes: [], requiredHeaders: [], headers: [] }, '404': read.responses['404'] },
    };
    for (const plan of samples(
      remove,
      happyPlan(remove, () => true),
    ))
      expect(plan.expect).toEqual([204]);
    for (const op of OPERATIONS.filter((o) => o.route.path === '/v2/orders' || o.route.path === '/v2/orders/{orderId}')) {
      for (const plan of samples(
        op,
        happyPlan(op, () => true),
      ))
        expect(plan.expect).toEqual([op.route.method === 'POST' ? 201 : 200]);
    }
  });

  it('fill orderId from the id given, as before', () => {
    expect(wirePath(read, {}, '42')).toBe('/v2/orders/42');
  });
});

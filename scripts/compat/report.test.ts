import { formatFinding, formatReport, summaryLine } from './report';
import type { KindResult } from './types';

const ok = (kind: KindResult['kind']): KindResult => ({ kind, findings: [], checked: 'x', notes: [] });

describe('formatReport', () => {
  it('prints one summary line per kind when compatible, in kind order', () => {
    const text = formatReport([ok('graphql'), ok('openapi'), ok('operations'), ok('asyncapi')]);
    expect(text.split('\n')).toEqual(['compat: compatible with contracts/released/', '  openapi: compatible (x)', '  asyncapi: compatible (x)', '  graphql: compatible (x)', '  operations: compatible (x)']);
  });
  it('lists every finding under its kind and group, each line naming kind, location and field', () => {
    const openapi: KindResult = {
      kind: 'openapi',
      checked: 'x',
      notes: [],
      findings: [
        { kind: 'openapi', group: 'REST v2', location: 'GET /v2/orders/{orderId}', message: 'removed the required property `note`', rule: 'r' },
        { kind: 'openapi', group: 'REST v1', location: 'GET /v1/orders', message: 'removed `discount_code`' },
      ],
    };
    const text = formatReport([openapi, { ...ok('graphql'), notes: ['graphql: a note'] }]);
    expect(text).toMatch(/^compat: 2 breaking changes against contracts\/released\//);
    expect(text).toContain('openapi: 2 breaking changes (x)');
    expect(text).toContain('  REST v1 (1)\n    openapi: GET /v1/orders: removed `discount_code`');
    expect(text).toContain('  REST v2 (1)\n    openapi: GET /v2/orders/{orderId}: removed the required property `note` [r]');
    expect(text).toContain('graphql: compatible (x; 1 note)');
    expect(text).toContain('Notes (not failing):\n  graphql: a note');
  });
  it('formats a finding on one self-contained line', () => {
    expect(formatFinding({ kind: 'graphql', location: 'Order.note', message: "Field 'note' was removed" })).toBe("graphql: Order.note: Field 'note' was removed");
    expect(summaryLine({ ...ok('asyncapi'), findings: [{ kind: 'asyncapi', location: 'l', message: 'm' }] })).toBe('asyncapi: 1 breaking change (x)');
  });
});

import { formatFinding, formatReport, groupByCause, summaryLine } from './report';
import { verbOf } from './causes';
import type { Finding, KindResult } from './types';

const ok = (kind: KindResult['kind']): KindResult => ({ kind, findings: [], checked: 'x', notes: [] });
const cause = { cause: '`OrderV2.note` removed', contract: 'contracts/openapi.yaml', pointer: '/components/schemas/OrderV2/properties/note' };
const removedNote = (location: string, media: string): Finding => ({
  kind: 'openapi',
  group: 'REST v2',
  location,
  message: `removed the required property \`note\` (${media})`,
  rule: 'response-required-property-removed',
  ...cause,
});

describe('formatReport', () => {
  it("closes with each failing kind's own way out, and only theirs", () => {
    const failing = (kind: KindResult['kind']): KindResult => ({ kind, checked: 'x', notes: [], findings: [{ kind, location: 'somewhere', message: 'removed' }] });
    const graphqlOnly = formatReport([ok('openapi'), ok('asyncapi'), failing('graphql'), ok('operations')]);
    expect(graphqlOnly).toContain('compat-accepted.yaml');
    expect(graphqlOnly).not.toContain('Versioning workflow');
    const restAndOps = formatReport([failing('openapi'), ok('asyncapi'), ok('graphql'), failing('operations')]);
    expect(restAndOps).toContain('Versioning workflow');
    expect(restAndOps).toContain('add the new text as a new operation');
    expect(restAndOps).not.toContain('compat-accepted.yaml');
  });

  it('prints one summary line per kind when compatible, in kind order', () => {
    const text = formatReport([ok('graphql'), ok('openapi'), ok('operations'), ok('asyncapi')]);
    expect(text.split('\n')).toEqual(['compat: compatible with contracts/released/', '  openapi: compatible (x)', '  asyncapi: compatible (x)', '  graphql: compatible (x)', '  operations: compatible (x)']);
  });

  it('prints one breaking change per cause, with every operation and message it breaks listed under it', () => {
    const openapi: KindResult = {
      kind: 'openapi',
      checked: 'x',
      notes: [],
      findings: [
        removedNote('GET /v2/orders/{orderId}', 'application/json'),
        { kind: 'openapi', group: 'REST v1', location: 'GET /v1/orders', message: 'removed `discount_code`' },
        removedNote('PATCH /v2/orders/{orderId}', 'application/json'),
      ],
    };
    const asyncapi: KindResult = {
      ...ok('asyncapi'),
      findings: [{ kind: 'asyncapi', group: 'message payloads', location: 'message OrderEventMessage', message: 'removed the required property `order/note` from the message', ...cause }],
    };
    const text = formatReport([asyncapi, openapi, { ...ok('graphql'), notes: ['graphql: a note'] }]);
    expect(text).toMatch(/^compat: 2 breaking changes against contracts\/released\/ \(4 findings\)\n {2}openapi: 3 findings \(x\)\n {2}asyncapi: 1 finding \(x\)\n {2}graphql: compatible \(x; 1 note\)/);
    expect(text).toContain(
      [
        '1. `OrderV2.note` removed (contracts/openapi.yaml /components/schemas/OrderV2/properties/note)',
        '   what it breaks (3):',
        '     REST v2: openapi: GET /v2/orders/{orderId}: removed the required property `note` (application/json) [response-required-property-removed]',
        '     REST v2: openapi: PATCH /v2/orders/{orderId}: removed the required property `note` (application/json) [response-required-property-removed]',
        '     message payloads: asyncapi: message OrderEventMessage: removed the required property `order/note` from the message',
        '',
        '2. GET /v1/orders: removed `discount_code`',
        '   what it breaks (1):',
        '     REST v1: openapi: GET /v1/orders: removed `discount_code`',
      ].join('\n'),
    );
    expect(text).toContain('Notes (not failing):\n  graphql: a note');
  });

  it('groups by contract, node and cause: the same words elsewhere are another change', () => {
    const elsewhere: Finding = { ...removedNote('GET /v1/orders/{orderId}', 'x'), pointer: '/components/schemas/OrderV1/properties/note' };
    const causes = groupByCause([{ ...ok('openapi'), findings: [removedNote('GET /a', 'x'), elsewhere, removedNote('GET /b', 'x')] }]);
    expect(causes.map((c) => [c.pointer, c.findings.length, c.rules])).toEqual([
      ['/components/schemas/OrderV2/properties/note', 2, ['response-required-property-removed']],
      ['/components/schemas/OrderV1/properties/note', 1, ['response-required-property-removed']],
    ]);
  });

  it('formats a finding on one self-contained line', () => {
    expect(formatFinding({ kind: 'graphql', location: 'Order.note', message: "Field 'note' was removed" })).toBe("graphql: Order.note: Field 'note' was removed");
    expect(summaryLine({ ...ok('asyncapi'), findings: [{ kind: 'asyncapi', location: 'l', message: 'm' }] })).toBe('asyncapi: 1 finding (x)');
  });
});

describe('verbOf: what a rule says happened, for the headline', () => {
  it('names a value made non-nullable, a required body added and a new required property as such', () => {
    expect(
      [
        'request-property-became-not-nullable',
        'request-body-added-required',
        'new-required-request-property',
        'request-property-became-required',
        'response-property-enum-value-added',
        'OBJECT_TYPE_INTERFACE_REMOVED',
        'DIRECTIVE_LOCATION_REMOVED',
        'response-property-const-removed',
        'request-object-size-narrowed',
        'response-property-range-unset',
        'request-property-default-changed',
      ].map(verbOf),
    ).toEqual(['made non-nullable', 'made required', 'made required', 'made required', 'extended', 'lost an interface', 'lost a location', 'lost its const', 'narrowed', 'widened', 'default changed']);
  });
});

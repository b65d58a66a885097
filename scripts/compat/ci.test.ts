import { ANNOTATION_LINES, githubAnnotations, junitXml, markdownSummary } from './ci';
import type { Finding, KindResult } from './types';

const ok = (kind: KindResult['kind']): KindResult => ({ kind, findings: [], checked: 'x', notes: [] });
const cause = { cause: '`OrderV2.note` removed', contract: 'contracts/openapi.yaml', pointer: '/components/schemas/OrderV2/properties/note' };
const removed = (location: string): Finding => ({ kind: 'openapi', group: 'REST v2', location, message: 'removed the required property `note`', rule: 'response-required-property-removed', ...cause });
const breaking: KindResult[] = [
  { ...ok('openapi'), findings: [removed('GET /v2/orders/{orderId}'), removed('PATCH /v2/orders/{orderId}')] },
  { ...ok('asyncapi'), findings: [{ kind: 'asyncapi', group: 'message payloads', location: 'message OrderEventMessage', message: 'removed `order/note` <x>', rule: 'response-required-property-removed', ...cause }] },
  { ...ok('graphql'), findings: [{ kind: 'graphql', location: 'Order.note', message: "Field 'note' was removed", rule: 'FIELD_REMOVED BREAKING', cause: '`Order.note` removed', contract: 'contracts/schema.graphql' }] },
  ok('operations'),
];

describe('the report for CI', () => {
  it('GitHub annotations: one ::error per breaking change on its contract line, naming rule and what it breaks', () => {
    const lines = githubAnnotations(breaking, (contract, pointer) => (contract === 'contracts/openapi.yaml' && pointer.endsWith('/note') ? 1933 : undefined));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      '::error file=contracts/openapi.yaml,line=1933,title=compat%3A OrderV2.note removed::' +
        'OrderV2.note removed [response-required-property-removed] breaks 3 released operation(s), media type(s) or message(s):%0A' +
        '- openapi: GET /v2/orders/{orderId}: removed the required property `note` [response-required-property-removed]%0A' +
        '- openapi: PATCH /v2/orders/{orderId}: removed the required property `note` [response-required-property-removed]%0A' +
        '- asyncapi: message OrderEventMessage: removed `order/note` <x> [response-required-property-removed]',
    );
    // No line for a file the gate cannot map (SDL): the annotation is on the file.
    expect(lines[1]).toMatch(/^::error file=contracts\/schema.graphql,title=compat%3A Order.note removed::Order.note removed \[FIELD_REMOVED BREAKING\] breaks 1 /);
  });

  it('GitHub annotations: a long list is cut, and %, CR, LF, : and , are escaped as the toolkit does', () => {
    const many = Array.from({ length: ANNOTATION_LINES + 3 }, (_, i) => removed(`GET /x/${i}`));
    const [line] = githubAnnotations([{ ...ok('openapi'), findings: many.map((f) => ({ ...f, cause: '100% a:b,c\r\n' })) }], () => undefined);
    expect(line).toMatch(/^::error file=contracts\/openapi.yaml,title=compat%3A 100%25 a%3Ab%2Cc%0D%0A::100%25 a:b,c%0D%0A /);
    expect(line.split('%0A- ').length - 1).toBe(ANNOTATION_LINES + 1);
    expect(line).toContain('... and 3 more (see the job summary)');
    expect(line).not.toMatch(/[\r\n]/);
  });

  it('Markdown summary: kinds table, then one section per breaking change listing what it breaks', () => {
    const text = markdownSummary(breaking);
    expect(text).toMatch(/^## Compatibility gate: 2 breaking changes\n\n\| contract kind \| result \|\n\|---\|---\|\n\| openapi \| 2 findings \(x\) \|\n/);
    expect(text).toContain(
      [
        '### `OrderV2.note` removed',
        '',
        'In `contracts/openapi.yaml /components/schemas/OrderV2/properties/note`; rule `response-required-property-removed`. It breaks:',
        '',
        '- REST v2: **GET /v2/orders/{orderId}**: removed the required property `note`',
        '- REST v2: **PATCH /v2/orders/{orderId}**: removed the required property `note`',
        '- message payloads: **message OrderEventMessage**: removed `order/note` &lt;x>',
      ].join('\n'),
    );
    expect(markdownSummary([ok('openapi')])).toMatch(/^## Compatibility gate: compatible\n/);
  });

  it('JUnit XML: a passing case per compatible kind, a failing case per breaking change, escaped', () => {
    const text = junitXml(breaking);
    expect(text).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="compat" tests="3" failures="2">/);
    expect(text).toContain('<testcase classname="compat.operations" name="operations: compatible (x)"/>');
    expect(text).toContain(
      '<testcase classname="contracts/openapi.yaml" name="`OrderV2.note` removed"><failure message="`OrderV2.note` removed: breaks 3" type="response-required-property-removed">contracts/openapi.yaml /components/schemas/OrderV2/properties/note\nopenapi: GET /v2/orders/{orderId}',
    );
    expect(text).toContain('removed `order/note` &lt;x&gt; [response-required-property-removed]</failure></testcase>');
    // Balanced: every opened element is closed.
    expect((text.match(/<testcase /g) ?? []).length).toBe(3);
    expect((text.match(/<\/testcase>|<testcase [^>]*\/>/g) ?? []).length).toBe(3);
  });
});

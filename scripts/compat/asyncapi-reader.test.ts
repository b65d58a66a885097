import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { forDiff, readAsyncApi, referencedFiles } from './asyncapi-reader';

const ROOT = join(__dirname, '..', '..');
const FILE = join(ROOT, 'contracts', 'asyncapi.yaml');

describe('readAsyncApi', () => {
  it('judges as client-to-server exactly the messages codegen validates as client messages', async () => {
    // codegen/asyncapi.ts cannot be imported under jest (openapi-typescript is ESM-only): what it generated is read instead.
    const source = readFileSync(join(ROOT, 'generated', 'asyncapi', 'messages.ts'), 'utf8');
    const clientMessages = (/export type ClientMessage = ([^;]*);/.exec(source)?.[1] ?? '')
      .split('|')
      .map((n) => n.trim())
      .filter(Boolean);
    expect(clientMessages.length).toBeGreaterThan(0);
    const { messages } = await readAsyncApi(FILE);
    const toServer = Object.entries(messages)
      .filter(([, m]) => m.directions.includes('client-to-server'))
      .map(([n]) => n);
    expect(toServer.sort()).toEqual(clientMessages.sort());
    for (const [name, m] of Object.entries(messages)) {
      expect(m.directions).toEqual(clientMessages.includes(name) ? ['client-to-server'] : ['server-to-client']);
    }
  });
  it('dereferences the payload $ref into openapi.yaml and drops parser bookkeeping', async () => {
    const { messages } = await readAsyncApi(FILE);
    const order = (messages.OrderEventMessage.payload as { properties: { order: { properties: object } } }).properties.order;
    expect(Object.keys(order.properties)).toEqual(expect.arrayContaining(['total_cents', 'note', 'discount']));
    expect(JSON.stringify(messages)).not.toMatch(/x-parser-|"\$ref"/);
  });
});

describe('forDiff', () => {
  it("keys an operation's messages by name and drops components", () => {
    const doc = forDiff({
      asyncapi: '3.0.0',
      operations: { op: { action: 'receive', messages: [{ name: 'A' }, { name: 'B' }] } },
      components: { messages: {} },
    });
    expect(doc).toEqual({ asyncapi: '3.0.0', operations: { op: { action: 'receive', messages: { A: { name: 'A' }, B: { name: 'B' } } } } });
  });
});

describe('referencedFiles', () => {
  it('lists the files asyncapi.yaml reaches with relative $refs', () => {
    expect(referencedFiles(readFileSync(FILE, 'utf8'))).toEqual(['openapi.yaml']);
  });
});

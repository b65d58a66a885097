import { asMessageText, checkPayloads, messagesView, type ClientSurface, type Message } from './payloads';

const obj = (properties: Record<string, object>, required: string[] = []) => ({ type: 'object', additionalProperties: false, required, properties });
const server = (payload: object): Message => ({ payload, directions: ['server-to-client'] });
const client = (payload: object): Message => ({ payload, directions: ['client-to-server'] });
const surface = (messages: Record<string, Message>, queries: ClientSurface['queries'] = {}): ClientSurface => ({ messages, queries });

describe('messagesView', () => {
  it('puts a server message in a 200 response and a client message in a required request body', () => {
    const view = messagesView(surface({ Ping: server(obj({})), Hello: client(obj({})) })) as { paths: Record<string, { post: Record<string, unknown> }> };
    expect(view.paths['/messages/Ping'].post.requestBody).toBeUndefined();
    expect(view.paths['/messages/Ping'].post.responses).toHaveProperty(['200', 'content', 'application/json', 'schema']);
    expect(view.paths['/messages/Hello'].post.requestBody).toMatchObject({ required: true });
    expect(view.paths['/messages/Hello'].post.responses).not.toHaveProperty('200');
  });
});

describe('asMessageText', () => {
  it('speaks of the message, not of a response or request body', () => {
    expect(asMessageText('removed the required property `reason` from the response with the `200` status')).toBe('removed the required property `reason` from the message');
    expect(asMessageText("the `seq` response's property type/format changed from `integer`/`` to `string`/`` for status `200`")).toBe('the `seq` property type/format changed from `integer`/`` to `string`/``');
    expect(asMessageText('the request property `since` became required')).toBe('the property `since` became required');
  });
});

describe('checkPayloads', () => {
  const base = {
    Event: server(obj({ type: { type: 'string' }, seq: { type: 'integer' } }, ['type', 'seq'])),
    Subscribe: client(obj({ channel: { type: 'string' }, since: { type: 'integer' } }, ['channel'])),
  };
  it('passes identical messages and additive changes', async () => {
    expect(await checkPayloads(surface(base), surface(base))).toEqual([]);
    const added = {
      Event: server(obj({ type: { type: 'string' }, seq: { type: 'integer' }, hint: { type: 'string' } }, ['type', 'seq'])),
      Subscribe: client(obj({ channel: { type: 'string' }, since: { type: 'integer' }, limit: { type: 'integer' } }, ['channel'])),
      New: server(obj({})),
    };
    expect(await checkPayloads(surface(base), surface(added))).toEqual([]);
  });
  it('fails a field removed from a server message, a retype, a client field made required and a removed message', async () => {
    const rev = {
      Event: server(obj({ type: { type: 'integer' } }, ['type'])),
      Subscribe: client(obj({ channel: { type: 'string' }, since: { type: 'integer' } }, ['channel', 'since'])),
    };
    const findings = await checkPayloads(surface({ ...base, Gone: server(obj({})) }), surface(rev));
    const lines = findings.map((f) => `${f.location}: ${f.message}`);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^message Event: removed the required property `seq`/),
        expect.stringMatching(/^message Event: .*`type`.*changed from `string`.* to `integer`/),
        expect.stringMatching(/^message Subscribe: .*`since` became required/),
        'message Gone: message removed',
      ]),
    );
    expect(findings.every((f) => f.kind === 'asyncapi' && f.group === 'message payloads')).toBe(true);
  });
  it('fails a server message field whose format changed to one its readers do not parse (date-time -> date)', async () => {
    const at = (format: string) => ({ Event: server(obj({ at: { type: 'string', format } }, ['at'])) });
    const lines = (await checkPayloads(surface(at('date-time')), surface(at('date')))).map((f) => `${f.location}: ${f.message}`);
    expect(lines).toEqual(['message Event: the property `at` format changed from `date-time` to `date`: a client that parses it as date-time fails']);
  });
});

describe('handshake queries', () => {
  const query = { type: 'object', properties: { since: { type: 'integer', minimum: 0 }, access_token: { type: 'string' } } };
  it('passes a new optional query parameter', async () => {
    const more = { ...query, properties: { ...query.properties, compress: { type: 'boolean' } } };
    expect(await checkPayloads(surface({}, { orders: query }), surface({}, { orders: more }))).toEqual([]);
  });
  it('fails a removed or newly required query parameter, naming channel and parameter', async () => {
    const rev = { ...query, properties: { access_token: { type: 'string' } }, required: ['access_token'] };
    const findings = await checkPayloads(surface({}, { orders: query }), surface({}, { orders: rev }));
    expect(findings.map((f) => f.location)).toEqual(Array(2).fill('channel orders (WebSocket handshake query)'));
    expect(findings.map((f) => f.message).join('\n')).toMatch(/since[\s\S]*access_token|access_token[\s\S]*since/);
  });
});

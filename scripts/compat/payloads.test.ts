import { asMessageText, checkPayloads, messagesView, type Message } from './payloads';

const obj = (properties: Record<string, object>, required: string[] = []) => ({ type: 'object', additionalProperties: false, required, properties });
const server = (payload: object): Message => ({ payload, directions: ['server-to-client'] });
const client = (payload: object): Message => ({ payload, directions: ['client-to-server'] });

describe('messagesView', () => {
  it('puts a server message in a 200 response and a client message in a required request body', () => {
    const view = messagesView({ Ping: server(obj({})), Hello: client(obj({})) }) as { paths: Record<string, { post: Record<string, unknown> }> };
    expect(view.paths['/messages/Ping'].post.requestBody).toBeUndefined();
    expect(view.paths['/messages/Ping'].post.responses).toHaveProperty(['200', 'content', 'application/json', 'schema']);
    expect(view.paths['/messages/Hello'].post.requestBody).toMatchObject({ required: true });
    expect(view.paths['/messages/Hello'].post.responses).not.toHaveProperty('200');
  });
});

describe('asMessageText', () => {
  it('speaks of the message, not of a response or request body', () => {
    expect(asMessageText('removed the required property `reason` from the response with the `200` status')).toBe(
      'removed the required property `reason` from the message',
    );
    expect(asMessageText('the `seq` response\'s property type/format changed from `integer`/`` to `string`/`` for status `200`')).toBe(
      'the `seq` property type/format changed from `integer`/`` to `string`/``',
    );
    expect(asMessageText('the request property `since` became required')).toBe('the property `since` became required');
  });
});

describe('checkPayloads', () => {
  const base = {
    Event: server(obj({ type: { type: 'string' }, seq: { type: 'integer' } }, ['type', 'seq'])),
    Subscribe: client(obj({ channel: { type: 'string' }, since: { type: 'integer' } }, ['channel'])),
  };
  it('passes identical messages and additive changes', async () => {
    expect(await checkPayloads(base, base)).toEqual([]);
    const added = {
      Event: server(obj({ type: { type: 'string' }, seq: { type: 'integer' }, hint: { type: 'string' } }, ['type', 'seq'])),
      Subscribe: client(obj({ channel: { type: 'string' }, since: { type: 'integer' }, limit: { type: 'integer' } }, ['channel'])),
      New: server(obj({})),
    };
    expect(await checkPayloads(base, added)).toEqual([]);
  });
  it('fails a field removed from a server message, a retype, a client field made required and a removed message', async () => {
    const rev = {
      Event: server(obj({ type: { type: 'integer' } }, ['type'])),
      Subscribe: client(obj({ channel: { type: 'string' }, since: { type: 'integer' } }, ['channel', 'since'])),
    };
    const findings = await checkPayloads({ ...base, Gone: server(obj({})) }, rev);
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
});

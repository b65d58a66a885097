import fc from 'fast-check';
import { validateClientMessage } from '../../generated/asyncapi/validators';
import { invalidMessageText } from './ws';

const textOf = (msg: unknown): string => {
  expect(validateClientMessage(msg)).toBe(false);
  return invalidMessageText(msg, validateClientMessage.errors);
};

describe('invalidMessageText', () => {
  it('names the fault of the message its type names, not the other branch of the schema', () => {
    expect(textOf({ type: 'ping' })).toBe('type must be "subscribe" or "unsubscribe", not "ping"');
    expect(textOf({ type: 'Subscribe', channel: 'order:1' })).toBe('type must be "subscribe" or "unsubscribe", not "Subscribe"');
    expect(textOf({ channel: 'order:1' })).toBe('type must be "subscribe" or "unsubscribe", not absent');
    expect(textOf({ type: 'unsubscribe', channel: 'order:1', since: 1 })).toBe('Not a valid unsubscribe message: the message has no member "since"');
    expect(textOf({ type: 'subscribe' })).toMatch(/^Not a valid subscribe message: the message must have required property 'channel'$/);
  });

  it('never echoes more than a short piece of what the client sent, and never names the type constant for a known type (generated)', () => {
    fc.assert(
      fc.property(fc.record({ type: fc.oneof(fc.constantFrom('subscribe', 'unsubscribe'), fc.string({ maxLength: 500 })), channel: fc.anything(), since: fc.anything() }, { requiredKeys: [] }), (msg) => {
        fc.pre(!validateClientMessage(msg));
        const text = invalidMessageText(msg, validateClientMessage.errors);
        expect(text.length).toBeLessThan(200);
        if (msg.type === 'subscribe' || msg.type === 'unsubscribe') expect(text).not.toMatch(/\/type/);
      }),
    );
  });
});

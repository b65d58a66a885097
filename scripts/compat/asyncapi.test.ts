import { describePointer, withDirections } from './asyncapi';
import type { Message } from './payloads';

describe('describePointer', () => {
  it.each([
    ['/channels/orders/messages/error', 'channel orders, message error'],
    ['/operations/receiveOrders/channel/address', 'operation receiveOrders, channel, address'],
    ['/channels/order~1stream', 'channel order/stream'],
    ['/servers/ws/host', 'server ws, host'],
  ])('%s -> %s', (pointer, text) => expect(describePointer(pointer)).toBe(text));
});

describe('withDirections', () => {
  const m = (directions: Message['directions']): Message => ({ payload: {}, directions });
  it('keeps known directions, borrows the other side’s, else judges both ways', () => {
    const out = withDirections({ A: m(['client-to-server']), B: m([]), C: m([]) }, { B: m(['server-to-client']) });
    expect(out.A.directions).toEqual(['client-to-server']);
    expect(out.B.directions).toEqual(['server-to-client']);
    expect(out.C.directions).toEqual(['client-to-server', 'server-to-client']);
  });
});

import { checkChannelParameters } from './channelParameters';

const doc = (orderId: Record<string, unknown>, components: Record<string, unknown> = {}) => ({
  channels: { orderStream: { address: '/api/orders/{orderId}/stream', parameters: { orderId } } },
  components: { parameters: components },
});

describe("a channel's address parameters", () => {
  it('fail when an enum now bounds one that took any value, or loses a value', () => {
    expect(checkChannelParameters(doc({}), doc({ enum: ['1'] }))).toMatchObject([{ rule: 'channel-parameter-enum-added', location: 'channel orderStream, parameter orderId' }]);
    expect(checkChannelParameters(doc({ enum: ['1', '2'] }), doc({ enum: ['2'] }))).toMatchObject([{ rule: 'channel-parameter-enum-value-removed', message: expect.stringContaining('`1`') }]);
  });
  it('pass a value added, an enum dropped, a description edited', () => {
    expect(checkChannelParameters(doc({ enum: ['1'] }), doc({ enum: ['1', '2'] }))).toEqual([]);
    expect(checkChannelParameters(doc({ enum: ['1'] }), doc({}))).toEqual([]);
    expect(checkChannelParameters(doc({ description: 'a' }), doc({ description: 'b' }))).toEqual([]);
  });
  it('follow a $ref to the parameter', () => {
    const ref = { $ref: '#/components/parameters/OrderId' };
    expect(checkChannelParameters(doc(ref, { OrderId: {} }), doc(ref, { OrderId: { enum: ['7'] } }))).toHaveLength(1);
  });
});

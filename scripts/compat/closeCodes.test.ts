import { checkCloseCodes } from './closeCodes';

const doc = (codes: number[]) => ({ channels: { orders: { 'x-close-codes': Object.fromEntries(codes.map((c) => [String(c), 'why'])) } } });

describe('checkCloseCodes', () => {
  it('fails a close code removed or renumbered, naming channel and code', () => {
    expect(checkCloseCodes(doc([1001, 1013]), doc([1001, 4013]))).toEqual([expect.objectContaining({ rule: 'close-code-removed', location: 'channel orders, close code 1013' })]);
  });
  it('passes a code added, the same list, and a channel removed (judged elsewhere)', () => {
    expect(checkCloseCodes(doc([1001]), doc([1001, 1013]))).toEqual([]);
    expect(checkCloseCodes(doc([1001, 1013]), doc([1013, 1001]))).toEqual([]);
    expect(checkCloseCodes(doc([1001]), { channels: {} })).toEqual([]);
  });
});

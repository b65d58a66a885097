/**
 * The idempotency-keys port's behaviour, one suite for every adapter. `pair` opens a
 * first store on fresh data and a second handle on the same data (another connection
 * pool or file handle: another instance), both migrated. Time is the `now` the caller
 * passes, so nothing waits. Keys are completed by the orders port's writes, so the
 * stores handed in offer those too.
 */
import { IdempotencyLostError } from '../idempotency';
import type { IdempotencyClaimRequest, IdempotencyKeys, StoredResponse } from './idempotencyKeys';
import type { AppliedWrite, OrderFields, Orders } from './orders';
import type { MakesAccounts } from './fixtures.contract';

export type IdempotencyKeysStore = IdempotencyKeys & Pick<Orders, 'createOrder' | 'writeOrder' | 'listOrders'> & MakesAccounts;
export type IdempotencyKeysFactory = () => Promise<{ a: IdempotencyKeysStore; b: IdempotencyKeysStore; close: () => Promise<void> }>;

const fields: OrderFields = { status: 'pending', items: [], currency: 'EUR', discount: null, note: 'idem' };
const T0 = 1_700_000_000_000;
const req = (over: Partial<IdempotencyClaimRequest> = {}): IdempotencyClaimRequest => ({ key: 'k-1', fingerprint: 'fp-A', now: T0, lockMs: 60_000, ttlMs: 86_400_000, ...over });
const respond = ({ order }: AppliedWrite): StoredResponse => ({
  status: 201,
  headers: { Location: `/orders/${order.id}`, 'Content-Type': 'application/json' },
  body: JSON.stringify({ id: order.id, note: order.note }),
});

export function runIdempotencyKeysContract(name: string, pair: IdempotencyKeysFactory): void {
  describe(`IdempotencyKeys contract: ${name}`, () => {
    let a: IdempotencyKeysStore;
    let b: IdempotencyKeysStore;
    let close: () => Promise<void>;
    let account: number;
    beforeEach(async () => {
      ({ a, b, close } = await pair());
      account = (await a.ensureAccount('alice')).id;
    });
    afterEach(() => close());

    it('claims a new key, stores the response with the create in one transaction, then replays it', async () => {
      const claim = await a.claimIdempotencyKey(account, req());
      if (claim.kind !== 'claimed') throw new Error(claim.kind);
      const { order } = await a.createOrder(account, fields, { key: 'k-1', token: claim.token, respond });
      const again = await b.claimIdempotencyKey(account, req({ now: T0 + 1000 }));
      expect(again).toEqual({ kind: 'replay', response: { status: 201, headers: { Location: `/orders/${order.id}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ id: order.id, note: 'idem' }) } });
    });

    it('answers in_flight while the first request holds its lock, mismatch for another request, and keeps keys per account', async () => {
      expect((await a.claimIdempotencyKey(account, req())).kind).toBe('claimed');
      expect(await b.claimIdempotencyKey(account, req({ now: T0 + 59_999 }))).toEqual({ kind: 'in_flight' });
      expect(await b.claimIdempotencyKey(account, req({ fingerprint: 'fp-B' }))).toEqual({ kind: 'mismatch' });
      const bob = (await a.ensureAccount('bob')).id;
      expect((await b.claimIdempotencyKey(bob, req())).kind).toBe('claimed');
    });

    it('lets a retry take over the key of a request that died before committing; the dead one can no longer complete', async () => {
      const first = await a.claimIdempotencyKey(account, req());
      const second = await b.claimIdempotencyKey(account, req({ now: T0 + 60_000 }));
      if (first.kind !== 'claimed' || second.kind !== 'claimed') throw new Error('claims');
      expect(second.token).not.toBe(first.token);
      // The first request's write comes late: it must not create an order the key does not answer for.
      const before = (await a.listOrders(account, 0, 100)).orders.length;
      await expect(a.createOrder(account, fields, { key: 'k-1', token: first.token, respond })).rejects.toBeInstanceOf(IdempotencyLostError);
      expect((await a.listOrders(account, 0, 100)).orders.length).toBe(before);
      await b.createOrder(account, fields, { key: 'k-1', token: second.token, respond });
      expect((await a.claimIdempotencyKey(account, req({ now: T0 + 61_000 }))).kind).toBe('replay');
    });

    it('completes a key after a write that could not (its own claim only, once), and leaves one the write completed as it is', async () => {
      const stored: StoredResponse = { status: 201, headers: { Location: '/widgets/w-1' }, body: '{"id":"w-1"}' };
      const claim = await a.claimIdempotencyKey(account, req({ key: 'w-1' }));
      if (claim.kind !== 'claimed') throw new Error(claim.kind);
      expect(await b.completeIdempotencyKey(account, 'w-1', 'not-the-token', stored)).toBe(false);
      expect(await b.claimIdempotencyKey(account, req({ key: 'w-1' }))).toEqual({ kind: 'in_flight' });
      expect(await b.completeIdempotencyKey(account, 'w-1', claim.token, stored)).toBe(true);
      expect(await a.claimIdempotencyKey(account, req({ key: 'w-1' }))).toEqual({ kind: 'replay', response: stored });
      expect(await a.completeIdempotencyKey(account, 'w-1', claim.token, { ...stored, body: 'other' })).toBe(false);
      // A key an order write completed keeps that response.
      const order = await a.claimIdempotencyKey(account, req({ key: 'o-1' }));
      if (order.kind !== 'claimed') throw new Error(order.kind);
      await a.createOrder(account, fields, { key: 'o-1', token: order.token, respond });
      expect(await b.completeIdempotencyKey(account, 'o-1', order.token, stored)).toBe(false);
      const replay = await b.claimIdempotencyKey(account, req({ key: 'o-1' }));
      expect(replay.kind === 'replay' && replay.response.headers.Location).toMatch(/^\/orders\/\d+$/);
    });

    it('releases a key only for its own claim, so a failed request can be retried at once', async () => {
      const claim = await a.claimIdempotencyKey(account, req());
      if (claim.kind !== 'claimed') throw new Error(claim.kind);
      await b.releaseIdempotencyKey(account, 'k-1', 'not-the-token');
      expect(await b.claimIdempotencyKey(account, req())).toEqual({ kind: 'in_flight' });
      await b.releaseIdempotencyKey(account, 'k-1', claim.token);
      expect((await b.claimIdempotencyKey(account, req())).kind).toBe('claimed');
    });

    it('completes a key with an applied write (cancel), and a write that does not apply leaves the key claimed', async () => {
      const { order } = await a.createOrder(account, fields);
      const claim = await a.claimIdempotencyKey(account, req({ key: 'c-1' }));
      if (claim.kind !== 'claimed') throw new Error(claim.kind);
      const refused = await a.writeOrder(account, order.id, () => ({ apply: false, reason: 'conflict' as const }), { key: 'c-1', token: claim.token, respond });
      expect(refused.ok).toBe(false);
      expect(await b.claimIdempotencyKey(account, req({ key: 'c-1' }))).toEqual({ kind: 'in_flight' });
      const done = await a.writeOrder(account, order.id, (cur) => ({ apply: true, eventType: 'order.cancelled', fields: { ...cur, status: 'cancelled' } }), { key: 'c-1', token: claim.token, respond });
      expect(done.ok).toBe(true);
      expect((await b.claimIdempotencyKey(account, req({ key: 'c-1' }))).kind).toBe('replay');
    });

    it('expires keys: an expired key is claimed anew, and the sweep deletes expired ones only', async () => {
      const claim = await a.claimIdempotencyKey(account, req({ ttlMs: 1000 }));
      if (claim.kind !== 'claimed') throw new Error(claim.kind);
      await a.createOrder(account, fields, { key: 'k-1', token: claim.token, respond });
      await a.claimIdempotencyKey(account, req({ key: 'k-2', ttlMs: 5000 }));
      expect((await b.claimIdempotencyKey(account, req({ now: T0 + 999 }))).kind).toBe('replay');
      expect(await b.sweepIdempotencyKeys(T0 + 1000, 100)).toBe(1);
      expect(await b.sweepIdempotencyKeys(T0 + 1000, 100)).toBe(0);
      expect(await b.claimIdempotencyKey(account, req({ key: 'k-2', now: T0 + 1000 }))).toEqual({ kind: 'in_flight' });
      expect((await b.claimIdempotencyKey(account, req({ now: T0 + 1000 }))).kind).toBe('claimed');
      const stale = await a.claimIdempotencyKey(account, req({ key: 'k-2', fingerprint: 'other', now: T0 + 5000 }));
      expect(stale.kind).toBe('claimed'); // expired: even another request may use the key again
    });

    it('of 20 concurrent claims of one key over two instances, exactly one wins and one order is created', async () => {
      const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claimIdempotencyKey(account, req({ key: 'race' }))));
      const won = claims.filter((c) => c.kind === 'claimed');
      expect(won).toHaveLength(1);
      expect(claims.filter((c) => c.kind === 'in_flight')).toHaveLength(19);
    });
  });
}

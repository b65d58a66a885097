/**
 * What the port contract suites share: order fields, a decision, and the shape of the
 * stores they are handed. Test code (excluded from the build with every `*.contract.ts`).
 */
import type { Accounts } from './accounts';
import type { StoreLifecycle } from './lifecycle';
import type { OrderFields, OrderRecord, WriteDecision } from './orders';

export const fields = (over: Partial<OrderFields> = {}): OrderFields => ({
  status: 'pending',
  items: [{ sku: 'A', quantity: 1, unit_price_cents: 100 }],
  currency: 'EUR',
  discount: null,
  note: null,
  ...over,
});

/** A decision that sets the note, as a handler's merge patch would. */
export const setNote =
  (note: string) =>
  (cur: OrderRecord): WriteDecision<never> => ({
    apply: true,
    fields: { status: cur.status, items: cur.items, currency: cur.currency, discount: cur.discount, note },
    eventType: 'order.updated',
  });

/** Every adapter counts the statements it runs, so a suite can check a batch read is one. */
export interface Counted {
  readonly queryCount: number;
}

/** A suite closes each store it was handed. */
export type Closable = Pick<StoreLifecycle, 'close'>;

/** Orders belong to an account: suites make theirs with this. */
export type MakesAccounts = Pick<Accounts, 'ensureAccount'>;

/** Statements `read` ran on `store`. */
export async function statementsOf(store: Counted, read: () => Promise<unknown>): Promise<number> {
  const before = store.queryCount;
  await read();
  return store.queryCount - before;
}

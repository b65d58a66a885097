/**
 * Order status transitions: pending -> paid -> shipped -> delivered, and
 * pending | paid -> cancelled. The status set is open for readers, but a writer may
 * only move along these edges; staying in the same status is not a transition.
 */
export const TRANSITIONS: Readonly<Record<string, readonly string[]>> = {
  pending: ['paid', 'cancelled'],
  paid: ['shipped', 'cancelled'],
  shipped: ['delivered'],
  delivered: [],
  cancelled: [],
};

export function canTransition(from: string, to: string): boolean {
  return from === to || (TRANSITIONS[from] ?? []).includes(to);
}

/**
 * Statuses an order can be cancelled from: those with an edge to `cancelled`. Derived, so
 * the `cancel` link (representation.ts) and the cancel decision (decide.ts) cannot
 * disagree when an edge changes. One edge, not any path: a cancel is a single move.
 */
export const CANCELLABLE: ReadonlySet<string> = new Set(Object.keys(TRANSITIONS).filter((from) => TRANSITIONS[from].includes('cancelled')));

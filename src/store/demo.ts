import type { OrderFields } from './store';

/**
 * The deterministic demo data set `npm start` loads once into an empty store: two
 * accounts, twelve users with a friends graph, posts, comments and orders. No
 * randomness, so every checkout starts from the same data.
 */
export const DEMO_ACCOUNTS = ['demo', 'acme'] as const;

export const DEMO_USERS = Array.from({ length: 12 }, (_, i) => ({
  id: `u${i + 1}`,
  name: ['Ada', 'Brian', 'Chen', 'Dana', 'Emil', 'Fatima', 'Goran', 'Hana', 'Ivo', 'Jun', 'Kiri', 'Lena'][i],
  // u1 acts for account 1 (demo), u2 for account 2 (acme).
  account: i === 0 ? 'demo' : i === 1 ? 'acme' : null,
}));

/** Symmetric friendships: each user is friends with the next 2 users around a ring (4 friends each). */
export const DEMO_FRIENDS: [string, string][] = DEMO_USERS.flatMap((u, i) =>
  [1, 2].flatMap((d) => {
    const f = DEMO_USERS[(i + d) % DEMO_USERS.length].id;
    return [
      [u.id, f],
      [f, u.id],
    ] as [string, string][];
  }),
);

export const DEMO_POSTS = DEMO_USERS.flatMap((u, i) => Array.from({ length: 2 + (i % 3) }, (_, j) => ({ id: `p${i + 1}-${j + 1}`, authorId: u.id, title: `${u.name}'s post ${j + 1}` })));

export const DEMO_COMMENTS = DEMO_POSTS.flatMap((p, i) =>
  Array.from({ length: 2 + (i % 2) }, (_, j) => ({
    id: `c${p.id.slice(1)}-${j + 1}`,
    postId: p.id,
    authorId: DEMO_USERS[(i + j + 3) % DEMO_USERS.length].id,
    body: `Comment ${j + 1} on ${p.title}`,
  })),
);

const item = (sku: string, quantity: number, unit_price_cents: number) => ({ sku, quantity, unit_price_cents });

export const DEMO_ORDERS: { account: (typeof DEMO_ACCOUNTS)[number]; fields: OrderFields }[] = [
  { account: 'demo', fields: { status: 'pending', items: [item('BOOK-1', 2, 1500)], currency: 'EUR', discount: null, note: 'first order' } },
  { account: 'demo', fields: { status: 'paid', items: [item('MUG-7', 1, 900), item('TEA-2', 3, 450)], currency: 'EUR', discount: { code: 'WELCOME10', percent: 10 }, note: null } },
  { account: 'demo', fields: { status: 'shipped', items: [item('LAMP-3', 1, 4999)], currency: 'EUR', discount: null, note: 'leave at the door' } },
  { account: 'demo', fields: { status: 'delivered', items: [item('PEN-9', 10, 120)], currency: 'EUR', discount: null, note: null } },
  { account: 'demo', fields: { status: 'cancelled', items: [item('BAG-4', 1, 2500)], currency: 'EUR', discount: null, note: null } },
  { account: 'acme', fields: { status: 'pending', items: [item('BOLT-1', 500, 3)], currency: 'EUR', discount: null, note: null } },
  { account: 'acme', fields: { status: 'paid', items: [item('NUT-2', 500, 2)], currency: 'EUR', discount: null, note: 'invoice monthly' } },
];

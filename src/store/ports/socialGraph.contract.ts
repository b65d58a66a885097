/**
 * The social-graph port's behaviour on the demo graph, one suite every adapter runs
 * with its own factory.
 */
import type { StoreLifecycle } from './lifecycle';
import type { SocialGraph } from './socialGraph';
import { statementsOf, type Closable, type Counted, type MakesAccounts } from './fixtures.contract';

export type SocialGraphStore = SocialGraph & Pick<StoreLifecycle, 'seedDemo'> & MakesAccounts & Counted & Closable;
/** A migrated, empty store (the suite loads the demo graph); the suite closes it. */
export type SocialGraphFactory = () => Promise<SocialGraphStore>;

export function runSocialGraphContract(name: string, newStore: SocialGraphFactory): void {
  describe(`SocialGraph contract: ${name}`, () => {
    let store: SocialGraphStore;
    beforeEach(async () => {
      store = await newStore();
      await store.seedDemo();
    });
    afterEach(() => store.close());

    it('reads users in a batch aligned with the input, null where missing', async () => {
      const users = await store.usersByIds(['u3', 'nope', 'u1', 'u3']);
      expect(users.map((u) => u?.id ?? null)).toEqual(['u3', null, 'u1', 'u3']);
      expect(users[2]!.accountId).not.toBeNull();
      expect(await store.usersByIds([])).toEqual([]);
      const twelve = await store.usersByIds(Array.from({ length: 12 }, (_, i) => `u${i + 1}`));
      expect(twelve.every((u) => u !== null && u.name.length > 0)).toBe(true);
    });

    it('reads friends per user, aligned, at most first each, in a stable order, symmetric', async () => {
      const ids = Array.from({ length: 12 }, (_, i) => `u${i + 1}`);
      const all = await store.friendsOf(ids, 100);
      all.forEach((list, i) => {
        expect(list.length).toBeGreaterThanOrEqual(3);
        expect(list.length).toBeLessThanOrEqual(5);
        for (const f of list) expect(all[ids.indexOf(f.id)].map((x) => x.id)).toContain(ids[i]);
      });
      const two = await store.friendsOf(['u1', 'nope', 'u3', 'u1'], 2);
      expect(two.map((f) => f.length)).toEqual([2, 0, 2, 2]);
      expect(two[0]).toEqual(all[0].slice(0, 2)); // the first 2 of the same stable order
      expect(two[3]).toEqual(two[0]); // a repeated id gets the same answer
    });

    it('reads posts per author and comments per post, aligned, at most first each', async () => {
      const posts = await store.postsOf(['u1', 'u2', 'nope'], 10);
      expect(posts[0].length).toBeGreaterThanOrEqual(2);
      expect(posts[0].length).toBeLessThanOrEqual(4);
      expect(posts[0].every((p) => p.authorId === 'u1')).toBe(true);
      expect(posts[1].every((p) => p.authorId === 'u2')).toBe(true);
      expect(posts[2]).toEqual([]);
      expect((await store.postsOf(['u1', 'u2'], 1)).map((p) => p.length)).toEqual([1, 1]);

      const postIds = [...posts[0], ...posts[1]].map((p) => p.id);
      const comments = await store.commentsOf(postIds, 10);
      comments.forEach((list, i) => {
        expect(list.length).toBeGreaterThanOrEqual(2);
        expect(list.length).toBeLessThanOrEqual(3);
        expect(list.every((c) => c.postId === postIds[i])).toBe(true);
      });
      const one = await store.commentsOf([postIds[0], 'nope'], 1);
      expect(one.map((l) => l.length)).toEqual([1, 0]);
      expect(one[0][0]).toEqual(comments[0][0]);
    });

    it('reads the user an account acts as, null for an account without one', async () => {
      const demo = await store.ensureAccount('demo');
      const acme = await store.ensureAccount('acme');
      expect(await store.userOfAccount(demo.id)).toMatchObject({ id: 'u1', accountId: demo.id });
      expect(await store.userOfAccount(acme.id)).toMatchObject({ id: 'u2', accountId: acme.id });
      const lone = await store.ensureAccount('lone');
      expect(await store.userOfAccount(lone.id)).toBeNull();
      expect(await store.userOfAccount(lone.id + 1000)).toBeNull();
    });

    it('reads every batch in one query (the friends of ten users, their posts, comments), an empty one in none', async () => {
      const ten = ['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8', 'u9', 'u10'];
      expect(await statementsOf(store, () => store.friendsOf(ten, 5))).toBe(1);
      expect(await statementsOf(store, () => store.usersByIds(ten))).toBe(1);
      expect(await statementsOf(store, () => store.postsOf(ten, 5))).toBe(1);
      expect(await statementsOf(store, () => store.commentsOf(['p1-1', 'p1-2', 'p2-1', 'p3-1'], 5))).toBe(1);
      for (const empty of [() => store.usersByIds([]), () => store.friendsOf([], 5), () => store.postsOf([], 5), () => store.commentsOf([], 5)]) {
        expect(await statementsOf(store, empty)).toBe(0);
      }
    });
  });
}

/**
 * The social-graph port: the demo graph GraphQL serves (users, friends, posts,
 * comments) and the user an account acts as. Types only. Readable by any
 * authenticated caller: nothing here is account-scoped.
 *
 * The batch readers follow DataLoader's contract: the answer is aligned with the ids
 * (one entry per id, in order, a repeated id answered the same), an empty batch
 * answers `[]` without a query, a non-empty one is one query whatever its size (so a
 * GraphQL level costs one statement), and a batch above `MAX_BATCH` ids rejects with a
 * RangeError rather than answering part of it. `first` caps the children per parent
 * (at most `MAX_ROWS`), in a stable order.
 */

export interface User {
  id: string;
  name: string;
  /** The account this user acts for, if any: `viewer` and `User.orders` go through it. */
  accountId: number | null;
}
export interface Post {
  id: string;
  authorId: string;
  title: string;
}
export interface Comment {
  id: string;
  postId: string;
  authorId: string;
  body: string;
}

export interface SocialGraph {
  /** Each id's user, null where none. */
  usersByIds(ids: readonly string[]): Promise<(User | null)[]>;
  /** Each user's friends (symmetric: a friend's list holds the user back), at most `first` each. */
  friendsOf(userIds: readonly string[], first: number): Promise<User[][]>;
  /** Each user's posts, at most `first` each. */
  postsOf(userIds: readonly string[], first: number): Promise<Post[][]>;
  /** Each post's comments, at most `first` each. */
  commentsOf(postIds: readonly string[], first: number): Promise<Comment[][]>;
  /** The user bound to an account (the GraphQL `viewer`), or null. */
  userOfAccount(accountId: number): Promise<User | null>;
}

/**
 * `npx tsx bench/sqlite-reads.ts`: what one indexed one-row read costs on a WAL file, alone
 * (autocommit: the statement opens and closes a read transaction of its own) and inside a
 * read transaction shared by N reads (BEGIN, N reads, COMMIT), which is what
 * `SqliteStore.turnRead` does with the reads of one turn of the event loop. Also `PRAGMA
 * data_version`, the cheapest "did anything change?" check SQLite offers, which costs
 * about as much as the read. The read is the order read's own statement, on a second
 * connection (as a second process would read), in alternating rounds; prints µs per read.
 * Then a bound LIMIT written `LIMIT ?` against `LIMIT +?` (statements.ts says why), on the
 * GraphQL benchmark's friends read (4 rows), inside a read transaction.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { envNumber } from './lib/env';

const READS = envNumber('SQLITE_READS', 200_000);
const ROUNDS = envNumber('SQLITE_ROUNDS', 3);

const dir = mkdtempSync(join(tmpdir(), 'orderline-sqlite-reads-'));
const file = join(dir, 'reads.sqlite');
const writer = new Database(file);
writer.pragma('journal_mode = WAL');
writer.pragma('synchronous = NORMAL');
writer.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL, revision INTEGER NOT NULL)');
writer.exec('CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL, account_id INTEGER NULL UNIQUE)');
writer.exec('CREATE TABLE friends (user_id TEXT NOT NULL, friend_id TEXT NOT NULL, PRIMARY KEY (user_id, friend_id)) WITHOUT ROWID');
for (let u = 1; u <= 12; u++) writer.prepare('INSERT INTO users (id, name) VALUES (?, ?)').run(`u${u}`, `user ${u}`);
for (let f = 2; f <= 5; f++) writer.prepare('INSERT INTO friends (user_id, friend_id) VALUES (?, ?)').run('u1', `u${f}`);
const insert = writer.prepare('INSERT INTO orders (id, account_id, revision) VALUES (?, 1, 1)');
for (let id = 1; id <= 100; id++) insert.run(id);

const db = new Database(file);
const read = db.prepare<[number, number], number>('SELECT revision FROM orders WHERE id = ? AND account_id = ? LIMIT 1').pluck();
const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
const begin = db.prepare('BEGIN');
const commit = db.prepare('COMMIT');

function usPerRead(run: (i: number) => void): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < READS; i++) run(i);
  return Number(process.hrtime.bigint() - start) / READS / 1000;
}

const shared = (n: number) => (i: number) => {
  if (i % n === 0) begin.run();
  read.get(1 + (i % 50), 1);
  if (i % n === n - 1) commit.run();
};
const cases: [string, (i: number) => void][] = [
  ['alone (autocommit)', (i) => read.get(1 + (i % 50), 1)],
  ['PRAGMA data_version alone', () => dataVersion.get()],
  ['in a transaction of 2 reads', shared(2)],
  ['in a transaction of 10 reads', shared(10)],
  ['in a transaction of 50 reads', shared(50)],
];
const friends = (limit: string) =>
  db.prepare<unknown[]>(`SELECT f.user_id AS parent, u.id, u.name, u.account_id FROM friends f JOIN users u ON u.id = f.friend_id WHERE f.user_id = ? ORDER BY f.friend_id LIMIT ${limit}`);
const [bare, plus] = [friends('?'), friends('+?')];
const inTransaction = (run: () => void) => (i: number) => {
  if (i % 50 === 0) begin.run();
  run();
  if (i % 50 === 49) commit.run();
};
cases.push(['friends, LIMIT ?', inTransaction(() => bare.all('u1', 5))], ['friends, LIMIT +?', inTransaction(() => plus.all('u1', 5))]);
const results = new Map<string, number[]>(cases.map(([name]) => [name, []]));
for (let round = 0; round < ROUNDS; round++) for (const [name, run] of cases) results.get(name)!.push(usPerRead(run));
console.log(`${READS} reads per case, ${ROUNDS} alternating rounds, µs per read (each round):`);
for (const [name, us] of results) console.log(`  ${name.padEnd(30)} ${us.map((u) => u.toFixed(2)).join('  ')}`);
db.close();
writer.close();
rmSync(dir, { recursive: true, force: true });

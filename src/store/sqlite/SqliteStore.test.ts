import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runStoreContract } from '../store.contract';
import { SqliteStore } from './SqliteStore';

const dirs: string[] = [];
const fresh = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-sqlite-'));
  dirs.push(dir);
  return new SqliteStore(join(dir, 'orderline.sqlite'));
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

runStoreContract('SqliteStore (file)', fresh);

describe('SqliteStore specifics', () => {
  it('runs in WAL mode on a real file', async () => {
    const s = await fresh();
    await s.migrate();
    expect(s.journalMode()).toBe('wal');
    await s.close();
  });
  it('reads the friends of ten users in one query', async () => {
    const s = await fresh();
    await s.migrate();
    await s.seedDemo();
    const before = s.queryCount;
    await s.friendsOf(['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8', 'u9', 'u10'], 5);
    expect(s.queryCount - before).toBe(1);
    await s.close();
  });
});

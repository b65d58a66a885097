/**
 * kill -9 between the commit of an idempotent create and its response: the client never
 * got an answer; after a restart its retry with the same key gets the stored response
 * (Idempotent-Replayed), and exactly one order exists. The real server runs as a child
 * process on a SQLite file; test/support/crashAfterCommit.ts kills it right after the commit.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store';
import { startServerProcess as startServer } from '../support/serverProcess';

const root = join(__dirname, '../..');

describe('idempotent create across kill -9', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-idem-crash-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers the retry after a restart with the stored response, and there is one order', async () => {
    const body = JSON.stringify({ note: 'crash-after-commit', items: [{ sku: 'K', quantity: 3, unit_price_cents: 99 }] });
    const key = 'crash-key-1';
    const crashing = await startServer(dir, [join(root, 'test/support/crashAfterCommit.ts')]);
    expect(crashing.token).toBeDefined(); // a first start mints the demo token; the restart below mints none
    const headers = { authorization: `Bearer ${crashing.token}`, 'content-type': 'application/json', 'idempotency-key': key };
    const exited = new Promise<NodeJS.Signals | null>((r) => crashing.child.once('exit', (_code, signal) => r(signal)));
    await expect(fetch(`${crashing.url}/orders`, { method: 'POST', headers, body })).rejects.toThrow(); // no response ever came
    expect(await exited).toBe('SIGKILL');

    const again = await startServer(dir);
    try {
      const retry = await fetch(`${again.url}/orders`, { method: 'POST', headers, body });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      const order = (await retry.json()) as { id: number; note: string; total_cents: number };
      expect(order).toMatchObject({ note: 'crash-after-commit', total_cents: 297 });
      expect(retry.headers.get('location')).toBe(`/orders/${order.id}`);
    } finally {
      again.child.kill('SIGTERM');
      await new Promise((r) => again.child.once('exit', r));
    }
    const store = new SqliteStore(join(dir, 'orderline.sqlite'));
    await store.migrate();
    const demo = await store.ensureAccount('demo');
    const mine = (await store.listOrders(demo.id, 0, 100)).orders.filter((o) => o.note === 'crash-after-commit');
    expect(mine).toHaveLength(1);
    await store.close();
  }, 60_000);
});

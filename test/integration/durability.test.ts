/**
 * Invariant 1: a write acknowledged with 2xx survives kill -9 and a restart, with its
 * event. The real server runs as a child process on a SQLite file; it
 * is killed with SIGKILL in the middle of concurrent writes, then the file is opened
 * again and every acknowledged write is looked for.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store';
import { startServerProcess as startServer } from '../support/serverProcess';

describe('durability', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-durability-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every acknowledged write, with its event, across kill -9', async () => {
    const { child, url, token } = await startServer(dir);
    expect(token).toBeDefined();
    const headers = { authorization: `Bearer ${token}` };
    const created: number[] = [];
    const patched: { id: number; revision: number }[] = [];
    let stop = false;

    const creator = async () => {
      while (!stop) {
        try {
          const res = await fetch(`${url}/orders`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"note":"d"}' });
          if (res.status === 201) created.push(((await res.json()) as { id: number }).id);
        } catch {
          return; // the server is gone: this write was never acknowledged
        }
      }
    };
    const patcher = async (id: number) => {
      while (!stop) {
        try {
          const res = await fetch(`${url}/orders/${id}`, {
            method: 'PATCH',
            headers: { ...headers, 'content-type': 'application/merge-patch+json', 'if-match': '*' },
            body: JSON.stringify({ note: `n${Math.random()}` }),
          });
          if (res.status === 200) {
            const etag = res.headers.get('etag')!; // "<id>-<revision>-v2j"
            patched.push({ id, revision: Number(etag.split('-')[1]) });
          } else await res.arrayBuffer();
        } catch {
          return;
        }
      }
    };
    // Demo orders 1 and 2 are pending/paid; patch them while creating others.
    const load = Promise.all([creator(), creator(), creator(), patcher(1), patcher(2), patcher(1)]);
    // Kill once enough writes were acknowledged (creates and patches both), however fast this machine is.
    while (created.length + patched.length <= 20 || patched.length === 0 || created.length === 0) await new Promise((r) => setTimeout(r, 10));
    const acknowledgedBefore = created.length + patched.length;
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    stop = true;
    await load;
    expect(acknowledgedBefore).toBeGreaterThan(20);
    expect(patched.length).toBeGreaterThan(0);
    expect(created.length).toBeGreaterThan(0);

    // Restart on the same file: the server must come up, and the data must be there.
    const again = await startServer(dir);
    expect(again.token).toBeUndefined(); // a restart mints no demo token; the first one still works:
    expect((await fetch(`${again.url}/orders/1`, { headers })).status).toBe(200);
    expect((await fetch(`${again.url}/healthz`)).status).toBe(200);
    again.child.kill('SIGTERM');
    await new Promise((r) => again.child.once('exit', r));

    const store = new SqliteStore(join(dir, 'orderline.sqlite'));
    await store.migrate();
    const demo = await store.ensureAccount('demo');
    for (const id of created) {
      expect(await store.getOrder(demo.id, id)).not.toBeNull();
      expect((await store.eventsAfter(id, 0, 1)).map((e) => e.type)).toEqual(['order.created']);
    }
    for (const id of [1, 2]) {
      const order = (await store.getOrder(demo.id, id))!;
      const events = await store.eventsAfter(id, 0, 100_000);
      // Gap-free: seq 1..revision, one event per applied write.
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: order.revision }, (_, i) => i + 1));
      for (const p of patched.filter((x) => x.id === id)) expect(order.revision).toBeGreaterThanOrEqual(p.revision);
    }
    await store.close();
  }, 60_000);
});

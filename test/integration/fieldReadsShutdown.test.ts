/**
 * The per-account counts of deprecated-field reads reach the store at shutdown (SIGTERM),
 * not only on the periodic flush: the real server, with a flush interval longer than the
 * test, reads a v1 order, is stopped, and the SQLite file is opened again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store';
import { startServerProcess } from '../support/serverProcess';

describe('deprecated-field read counts at shutdown', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-fieldreads-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are flushed to the store by SIGTERM', async () => {
    const { child, url, token, stdout } = await startServerProcess(dir, [], { FIELD_READS_FLUSH_S: '3600', LOG_LEVEL: 'info' });
    const headers = { authorization: `Bearer ${token}` };
    const created = await fetch(`${url}/orders`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' });
    const { id } = (await created.json()) as { id: number };
    for (let i = 0; i < 3; i++) expect((await fetch(`${url}/v1/orders/${id}`, { headers })).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // A clean stop says so last: a log that ends without this line ended in a kill or a crash.
    const messages = stdout()
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(messages.at(-1)).toBe('shut down: every request answered, the store and bus closed');
    const store = new SqliteStore(join(dir, 'orderline.sqlite'));
    await store.migrate();
    expect(await store.fieldReadTotals('2000-01-01', 10)).toEqual([{ account: 'demo', field: 'discount_code', reads: 3 }]);
    await store.close();
  });
});

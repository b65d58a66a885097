/**
 * The embedded store's file locked by another process (a second worker, `npm run token`,
 * a backup) for longer than SQLITE_BUSY_TIMEOUT_MS: the real server answers each write
 * 503 problem+json with Retry-After, as for a PostgreSQL outage (never a 500), writes
 * nothing, keeps answering reads (WAL), and serves the same writes once the lock is free.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import { expectContract } from '../support/contract';
import { startServerProcess } from '../support/serverProcess';

jest.setTimeout(30_000);

describe('the SQLite file locked by another process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-locked-'));
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers writes 503 with Retry-After while it is held, and serves them once it is free', async () => {
    const started = await startServerProcess(dir, [], { SQLITE_BUSY_TIMEOUT_MS: '0' });
    child = started.child;
    const headers = { authorization: `Bearer ${started.token}` };
    const api = (path: string, init: RequestInit = {}) => fetch(started.url + path, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } });
    const create = () => api('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const patch = (id: number) => api(`/orders/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body: JSON.stringify({ note: 'during' }) });
    const created = await create();
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const etag = created.headers.get('etag');

    const other = new Database(join(dir, 'orderline.sqlite'));
    other.exec('BEGIN IMMEDIATE');
    try {
      for (const [operationId, send] of [
        ['createOrder', create],
        ['patchOrder', () => patch(id)],
        ['cancelOrder', () => api(`/orders/${id}/cancel`, { method: 'POST', headers: { 'if-match': '*' } })],
      ] as const) {
        const res = await send();
        await expectContract(operationId, res.clone());
        expect({ operationId, status: res.status }).toEqual({ operationId, status: 503 });
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        const body = await res.text();
        expect(JSON.parse(body)).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
        expect(body).not.toMatch(/SQLITE|locked|busy/i);
      }
      const read = await api(`/orders/${id}`);
      expect(read.status).toBe(200);
      expect(read.headers.get('etag')).toBe(etag); // unchanged: no write went through
      expect(await read.json()).toMatchObject({ id, status: 'pending', note: null });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }

    const after = await patch(id);
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect(await after.json()).toMatchObject({ id, note: 'during' });
  });
});

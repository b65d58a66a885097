/**
 * Metrics are for operators: served on a listener of their own (METRICS_HOST/METRICS_PORT,
 * behind METRICS_TOKEN when set), never on the public port, and the per-account series of
 * deprecated-field reads are bounded (the top accounts plus `(other)`), with the exact
 * per-account counts written to the store in batches.
 */
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, openSse, openWs, WsClient } from '../support/streams';
import { OTHER_ACCOUNTS } from '../../src/http';

const TOKEN = 'scrape-token-for-the-tests-0123';
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ METRICS_TOP_ACCOUNTS: '1', METRICS_TOKEN: TOKEN });
});
afterAll(() => s.close());

async function readV1(as: 'alice' | 'bob', times: number): Promise<void> {
  const created = await s.fetch('/orders', { as, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const { id } = (await created.json()) as { id: number };
  for (let i = 0; i < times; i++) expect((await s.fetch(`/v1/orders/${id}`, { as })).status).toBe(200);
  expect((await s.fetch('/v1/orders', { as })).status).toBe(200); // the collection carries the field too
}

describe('metrics for operators only', () => {
  it('are not on the public port: GET and HEAD /metrics answer 404 problem+json, naming no account', async () => {
    await readV1('alice', 1);
    for (const as of ['anonymous', 'alice'] as const) {
      const res = await s.fetch('/metrics', { as });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const body = await res.text();
      expect(body).not.toMatch(/orderline_|alice/);
      expect((await s.fetch('/metrics', { as, method: 'HEAD' })).status).toBe(404);
    }
  });

  it('are on the operator listener, behind METRICS_TOKEN', async () => {
    expect((await fetch(`${s.metricsUrl}/metrics`)).status).toBe(401);
    expect((await fetch(`${s.metricsUrl}/metrics`, { headers: { authorization: `Bearer ${s.alice.token}` } })).status).toBe(401); // an API token is not the operator's
    const text = await s.scrape();
    expect(text).toMatch(/^orderline_http_request_duration_seconds_count\{/m);
    // Buckets up to 10 s: a request that waited for the store's timeouts (5 s SQLite lock, 10 s PostgreSQL query) is told from one of 3 s.
    expect(text).toMatch(/^orderline_http_request_duration_seconds_bucket\{le="5",/m);
    expect(text).toMatch(/^orderline_http_request_duration_seconds_bucket\{le="10",/m);
  });
});

describe('what the instance holds open', () => {
  it('open streams by transport and loaded topics are read at scrape time, and fall back when they close', async () => {
    const gauge = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    const before = await s.scrape();
    const { id } = await createOrder(s);
    const ws = await openWs(s);
    if (!(ws instanceof WsClient)) throw new Error(`upgrade refused: ${ws.status}`);
    ws.send({ type: 'subscribe', channel: `order:${id}` });
    await ws.until((m) => m.some((x) => x.type === 'subscribed'));
    const sse = await openSse(s, id);
    const during = await s.scrape();
    expect(gauge(during, 'orderline_open_streams{transport="ws"}')).toBe(gauge(before, 'orderline_open_streams{transport="ws"}') + 1);
    expect(gauge(during, 'orderline_open_streams{transport="sse"}')).toBe(gauge(before, 'orderline_open_streams{transport="sse"}') + 1);
    expect(gauge(during, 'orderline_realtime_topics')).toBeGreaterThanOrEqual(1);
    sse.close();
    ws.ws.close();
    await ws.closed();
    let after = await s.scrape();
    for (let i = 0; i < 50 && gauge(after, 'orderline_open_streams{transport="sse"}') !== gauge(before, 'orderline_open_streams{transport="sse"}'); i++) {
      await new Promise((r) => setTimeout(r, 20));
      after = await s.scrape();
    }
    expect(gauge(after, 'orderline_open_streams{transport="ws"}')).toBe(gauge(before, 'orderline_open_streams{transport="ws"}'));
    expect(gauge(after, 'orderline_open_streams{transport="sse"}')).toBe(gauge(before, 'orderline_open_streams{transport="sse"}'));
  });
});

describe('deprecated-field reads per account', () => {
  it('label at most METRICS_TOP_ACCOUNTS accounts; the rest count in (other); the store gets exact counts at flush', async () => {
    await s.fieldReads.flush();
    const stored = async () => Object.fromEntries((await s.store.fieldReadTotals('2000-01-01', 100)).map((r) => [r.account, r.reads]));
    const base = await stored();
    await readV1('alice', 2);
    await readV1('bob', 3);
    const text = await s.scrape();
    expect(text).toMatch(/^orderline_deprecated_field_reads_total\{account="alice",field="discount_code"\} \d+$/m);
    expect(text).not.toMatch(/account="bob"/);
    expect(text).toContain(`orderline_deprecated_field_reads_total{account="${OTHER_ACCOUNTS}",field="discount_code"} 4`);
    expect(await stored()).toEqual(base); // nothing written on the request path
    await s.fieldReads.flush();
    expect(await stored()).toEqual({ ...base, alice: (base.alice ?? 0) + 3, bob: 4 });
  });
});

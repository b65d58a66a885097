import type { GetReadyRequest } from '../../../generated/openapi/handlers';
import { healthHandlers } from './health';

const req: GetReadyRequest = { operationId: 'getReady', pathVersion: null, params: {}, query: {}, headers: {} };
const ctx = { method: 'GET', path: '/readyz' };

describe('/readyz', () => {
  it('counts a probe that does not answer in time as unreachable: 503 naming it, not a wait as long as the dependency hangs', async () => {
    const never = () => new Promise<boolean>(() => undefined);
    const { getReady } = healthHandlers({ probes: { store: never, bus: async () => true }, probeMs: 1 });
    const res = await getReady(req, ctx);
    expect(res).toMatchObject({ status: 503, body: { checks: { store: false, bus: true } } });
  });
  it('is ready when every probe answers true in time, and not when one answers false or throws', async () => {
    const ok = healthHandlers({ probes: { store: async () => true, bus: async () => true } });
    expect(await ok.getReady(req, ctx)).toMatchObject({ status: 200, body: { status: 'ready' } });
    const down = healthHandlers({ probes: { store: async () => false, bus: () => Promise.reject(new Error('x')) } });
    expect(await down.getReady(req, ctx)).toMatchObject({ status: 503, body: { checks: { store: false, bus: false } } });
  });
});

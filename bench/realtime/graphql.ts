/**
 * GraphQL subscriptions (graphql-transport-ws on /graphql) against the service's plain
 * WebSocket channel and against GraphQL Yoga on graphql-ws (bench/baseline/graphql-ws-yoga.ts):
 *
 * - `gql-fanout-cpu`: server CPU per delivered event, BENCH_RT_PEER_CONNECTIONS subscribers
 *   of order 1 on each server, writes at BENCH_RT_PEER_RATE/s, rounds alternating: the
 *   service's plain /orders channel (lean reader), the service's `OrderEvents` subscription
 *   (the contract's operation, lean graphql-transport-ws reader), Yoga on graphql-ws (same
 *   reader and operation; POST /publish of one real service message). Goal: the
 *   subscription within 1.15x of the plain channel. At another count than the default the
 *   keys end in `-<count>`, as the peers phase's.
 * - `gql-idle-memory`: idle memory per subscription (BENCH_RT_CONNECTIONS, orders 1-5)
 *   beside the plain channel's and Yoga's, each server started fresh.
 */
import { startBaseline, startService } from '../lib/server';
import { Clients } from './clients';
import { idleMemory, kb, mb, type MemResult } from './memory';
import { compare, sampleOf, withServers, type Side, type SideResult } from './peers';
import { type Row, scaledScenario } from './rows';
import { patchOrder1, publishRaw, tokenOf, withServer } from './servers';
import { DEFAULT_PEER_CONNECTIONS, PEER_CONNECTIONS, PEER_RATE, ROUNDS, SECONDS, SERVICE_ENV, log } from './settings';

const startYoga = () => startBaseline('graphql-ws-yoga.ts', '/healthz');
const fig = (x: SideResult) => `${x.all.serverUsPerMsg.toFixed(2)} µs per delivered event (p99 ${x.all.p99.toFixed(0)} ms)`;
const memFig = (m: MemResult) => `${kb(m.rssPerConn)} RSS (heap ${kb(m.heapPerConn)}) per subscription`;
const memNote = (name: string, m: MemResult) =>
  `${name} RSS ${mb(m.before.rss)} -> ${mb(m.after.rss)} MB, opened ${m.open.opened}${m.open.failed ? `, ${m.open.failed} failed (${m.open.firstError})` : ''}, ${m.live} open at the end`;

export async function graphqlPhase(clients: Clients): Promise<Row[]> {
  const rows: Row[] = [];
  const [plain, gql, yoga] = await withServer(
    () => startService(SERVICE_ENV),
    async (svc) => {
      const token = await tokenOf(svc);
      const sample = await sampleOf(clients, svc, token);
      log(`graphql payload sample: ${Buffer.byteLength(sample)} bytes`);
      return withServers([() => startService(SERVICE_ENV), startYoga], async ([svcGql, peer]) => {
        const gqlToken = await tokenOf(svcGql);
        const sides: Side[] = [
          { name: 'service-ws', srv: svc, token, client: 'lean', publish: patchOrder1(svc, token) },
          { name: 'service-gql', srv: svcGql, token: gqlToken, client: 'gql-lean', publish: patchOrder1(svcGql, gqlToken) },
          { name: 'yoga-gql', srv: peer, token: 'none', client: 'gql-lean', publish: publishRaw(peer, sample) },
        ];
        return compare(clients, sides, 'ws');
      });
    },
  );
  const byRound = [plain, gql, yoga].map((x, i) => `${['plain', 'subscription', 'Yoga'][i]} ${x.rounds.map((r) => r.serverUsPerMsg.toFixed(1)).join(', ')}`).join('; ');
  const ratio = gql.all.serverUsPerMsg / plain.all.serverUsPerMsg;
  const common = `${PEER_CONNECTIONS} subscribers of order 1 per server, ${PEER_RATE} writes/s, ${ROUNDS} x ${SECONDS} s alternating; µs/event by round: ${byRound}`;
  const key = (base: string) => scaledScenario(base, PEER_CONNECTIONS, DEFAULT_PEER_CONNECTIONS);
  rows.push({
    scenario: key('gql-fanout-cpu'),
    service: 'GraphQL subscription OrderEvents (graphql-transport-ws on /graphql), PATCH /orders/1; server CPU per delivered event',
    baseline: "the service's plain WebSocket channel (/orders, `subscribe` order:1), same subscribers and rate, read by the same lean reader",
    serviceFig: fig(gql),
    baselineFig: fig(plain),
    ratio,
    goal: `<= 1.15x the plain channel (${ratio <= 1.15 ? 'met' : 'missed'})`,
    notes: common,
  });
  rows.push({
    scenario: key('gql-fanout-cpu-peer'),
    service: `as ${key('gql-fanout-cpu')} (same run)`,
    baseline: 'GraphQL Yoga 5 on graphql-ws useServer (bench/baseline/graphql-ws-yoga.ts), the same OrderEvents operation and reader, POST /publish of one real service message',
    serviceFig: fig(gql),
    baselineFig: fig(yoga),
    ratio: gql.all.serverUsPerMsg / yoga.all.serverUsPerMsg,
    goal: 'reference: the library users would pick instead (ratio = service / peer, lower is better)',
    notes: common,
  });
  const plainMem = await idleMemory(clients, 'ws', 'service');
  const gqlMem = await idleMemory(clients, 'ws', 'service', { start: () => startService(SERVICE_ENV) });
  const yogaMem = await idleMemory(clients, 'ws', 'peer', { start: startYoga });
  rows.push({
    scenario: 'gql-idle-memory',
    service: `GraphQL subscriptions OrderEvents: ${gqlMem.open.opened} idle subscriptions (orders 1-5), one per connection, RSS delta / subscriptions`,
    baseline: `the service's plain WebSocket channel (${memFig(plainMem)}) and Yoga on graphql-ws`,
    serviceFig: memFig(gqlMem),
    baselineFig: memFig(yogaMem),
    ratio: gqlMem.rssPerConn / plainMem.rssPerConn,
    goal: 'reported beside the plain channel (ratio = subscription / plain channel)',
    notes: [memNote('subscription', gqlMem), memNote('plain channel', plainMem), memNote('Yoga', yogaMem)].join('; '),
  });
  return rows;
}

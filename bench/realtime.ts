/**
 * Realtime benchmarks: `npm run --silent build && npx tsx bench/realtime.ts
 * [memory] [fanout] [slow] [peers] [stalled] [graphql] [--write]` (no phase named: all six). Every figure has its
 * baseline measured in the same run, side by side:
 *
 * - memory: idle memory per open connection. The service, then a bare server
 *   (bench/baseline/ws-raw.ts, bench/baseline/sse-raw.ts), each started fresh, hold
 *   BENCH_RT_CONNECTIONS idle subscribed WebSocket (SSE) connections; bytes per connection =
 *   (median VmRSS after - median VmRSS before) / connections, read from /proc/<pid>/status
 *   (heap likewise from /metrics).
 * - fanout: BENCH_RT_FANOUT_CONNECTIONS WebSocket subscribers of order:1 on the service and
 *   on the bare ws server at once; writes (service: PATCH /orders/1; bare: POST /publish of
 *   a real service message with ws's client.send() per client) closed-loop (BENCH_RT_WINDOW
 *   writes in flight, the next when one has reached every subscriber) and at a steady
 *   BENCH_RT_RATE writes/s; delivered messages/s and publish-to-delivery latency.
 * - slow: BENCH_RT_SLOW_CONNECTIONS subscribers of order:1, writes at BENCH_RT_SLOW_RATE/s,
 *   without and with one slow request in flight (a POST /orders body trickled byte by byte
 *   over the window; GraphQL queries at the cost ceiling back to back): the service's
 *   event-loop delay p99 and the publish-to-delivery p99.
 * - peers: server CPU per delivered message (BENCH_RT_PEER_CONNECTIONS subscribers of
 *   order:1 per server, writes at BENCH_RT_PEER_RATE/s): the service's WebSocket against
 *   Socket.IO and its floor (bench/baseline/ws-floor.ts), its SSE against better-sse and its
 *   floor (bench/baseline/sse-floor.ts), each floor one socket.write per delivered message
 *   (realtime/peers.ts). BENCH_RT_PEER_CONNECTIONS may be 10000 (then BENCH_RT_CLIENT_PROCS=3
 *   under `ulimit -n` 20000; checked before opening); at a count other than 2000 the rows'
 *   scenario keys end in `-<count>`, so runs at both counts keep their rows.
 *
 * Connections are held by BENCH_RT_CLIENT_PROCS client processes (bench/lib/realtime-client.ts).
 * One concern per file in bench/realtime/ (settings, clients, servers, memory, fanout, slow,
 * rows); this file is the entry and the section's text. The fan-out machinery
 * (realtime/clients.ts withClients, realtime/fanout.ts fanoutCompare) is shared with
 * bench/scaleout.ts, which runs it on 1 vs 2 cluster workers; a server's CPU is that of all
 * its processes. BENCHMARKS.md is written through bench/lib/report.ts, as the other benches do.
 * With --write the "## Realtime" section of BENCHMARKS.md is rewritten (rows keyed by
 * scenario; rows of phases not run are kept; nothing outside the section is touched).
 */
import { withClients } from './realtime/clients';
import { fanoutPhase } from './realtime/fanout';
import { memoryPhase } from './realtime/memory';
import { peersPhase } from './realtime/peers';
import { graphqlPhase } from './realtime/graphql';
import { stalledPhase } from './realtime/stalled';
import { HEADER, line, orderScenarios, type Row } from './realtime/rows';
import { CONNECTIONS, FANOUT_CONNECTIONS, log, PEER_CONNECTIONS, PEER_RATE, PROCS, RATE, ROUNDS, SAMPLES, SECONDS, SETTLE_S, SLOW_CONNECTIONS, SLOW_RATE, SLOW_SECONDS, WINDOW } from './realtime/settings';
import { slowPhase } from './realtime/slow';
import { editBenchmarks, environment, replaceSection, scenarioOf, sectionOf } from './lib/report';
import { existsSync } from 'node:fs';
import { serviceEntry, targetOverride } from './lib/server';

const ROWS_MARK = '<!-- realtime rows -->';

function settings(): string {
  return (
    `BENCH_RT_CONNECTIONS=${CONNECTIONS}, BENCH_RT_FANOUT_CONNECTIONS=${FANOUT_CONNECTIONS}, BENCH_RT_CLIENT_PROCS=${PROCS}, ` +
    `BENCH_RT_SECONDS=${SECONDS}, BENCH_RT_ROUNDS=${ROUNDS}, BENCH_RT_WINDOW=${WINDOW}, BENCH_RT_RATE=${RATE}, ` +
    `BENCH_RT_SLOW_CONNECTIONS=${SLOW_CONNECTIONS}, BENCH_RT_SLOW_RATE=${SLOW_RATE}, BENCH_RT_SLOW_SECONDS=${SLOW_SECONDS}, ` +
    `BENCH_RT_SETTLE_SECONDS=${SETTLE_S}, BENCH_RT_SAMPLES=${SAMPLES}, BENCH_RT_PEER_CONNECTIONS=${PEER_CONNECTIONS}, BENCH_RT_PEER_RATE=${PEER_RATE}`
  );
}

const METHOD = `## Realtime

Idle memory per connection, fan-out throughput and latency (one slow request
must not stall streams), server CPU per delivered message against Socket.IO and better-sse,
and memory with stalled clients, each with its baseline in the same run (\`bench/realtime.ts\`,
about 10 minutes; \`--write\` rewrites this section only, keeping rows of phases not run):

\`\`\`sh
npm run --silent build && npx tsx bench/realtime.ts --write       # all phases
npx tsx bench/realtime.ts memory --write                           # one phase: memory, fanout, slow, peers, stalled or graphql
BENCH_RT_CONNECTIONS=2000 npx tsx bench/realtime.ts                # smaller, printed only
BENCH_RT_PEER_CONNECTIONS=10000 BENCH_RT_CLIENT_PROCS=3 npx tsx bench/realtime.ts peers --write   # peers at 10000
\`\`\`

Settings (environment; rows below use the defaults, but for rows whose key ends in \`-<count>\`,
measured at \`BENCH_RT_PEER_CONNECTIONS\`=<count>): \`BENCH_RT_CONNECTIONS\` (10000),
\`BENCH_RT_FANOUT_CONNECTIONS\` (= connections), \`BENCH_RT_CLIENT_PROCS\` (2), \`BENCH_RT_SECONDS\` (5),
\`BENCH_RT_ROUNDS\` (2), \`BENCH_RT_WINDOW\` (2), \`BENCH_RT_RATE\` (2 writes/s),
\`BENCH_RT_SLOW_CONNECTIONS\` (1000), \`BENCH_RT_SLOW_RATE\` (20 writes/s), \`BENCH_RT_SLOW_SECONDS\` (5),
\`BENCH_RT_SETTLE_SECONDS\` (5), \`BENCH_RT_SAMPLES\` (5), \`BENCH_RT_OPEN_CONCURRENCY\` (100 per client
process), \`BENCH_RT_WARM_CONNECTIONS\` (200), \`BENCH_RT_STREAM_CLIENT\` (\`lean\`; \`ws\` uses the ws
client in the fan-out and slow phases too), \`BENCH_RT_KINDS\` (\`ws,sse\`: the transports of the memory and
peers phases), \`BENCH_RT_PEERS\` (1; 0 skips the peers in the memory phase), \`BENCH_RT_PEER_CONNECTIONS\`
(2000), \`BENCH_RT_PEER_RATE\` (20 writes/s), \`BENCH_RT_PEER_WRITE_DELAY_MS\` (100), \`BENCH_RT_STALLED_CONNECTIONS\` (2000),
\`BENCH_RT_STALLED_MAX_BUFFER\` (262144), \`BENCH_RT_STALLED_MAX_WRITES\` (3000). Run it with
\`ulimit -n\` above 2 x BENCH_RT_CONNECTIONS + a few hundred (each process holds its own ends). The
peers phase holds every side's subscribers at once (WebSocket 5 sides, SSE 4), dealt over the client
processes: each needs 5 x BENCH_RT_PEER_CONNECTIONS / BENCH_RT_CLIENT_PROCS descriptors and a few
hundred more (at 10000 under a limit of 20000: 3 client processes); the phase checks this before
opening and names the count of processes that fits. At a \`BENCH_RT_PEER_CONNECTIONS\` other than
2000 the peers and \`gql-fanout-cpu\` rows are keyed \`<scenario>-<count>\`
(\`ws-fanout-cpu-peer-10000\`), so the rows of both counts are kept.

### Method

- **Processes.** The service runs as \`npm start\` runs it (\`node dist/src/main.js\`, fresh SQLite
  \`DATA_DIR\`, \`LOG_LEVEL=silent\`) with \`ACCEPT_RATE\`/\`ACCEPT_BURST\` at 1000000 so the accept
  limiter does not pace the bench. The baselines are one-file bare servers run with
  \`node -r tsx/cjs\`: \`bench/baseline/ws-raw.ts\` (a \`ws\` WebSocketServer, \`perMessageDeflate: false\`,
  that answers \`subscribe\` and keeps a Set per channel; no auth) and \`bench/baseline/sse-raw.ts\`
  (node:http holding \`text/event-stream\` responses with the service's headers and \`retry:\` line).
  Connections are held by 2 client processes (\`bench/lib/realtime-client.ts\`), opened 100 at a
  time per process, so no server shares an event loop with a client or with the bench.
- **Idle memory per connection** (\`*-idle-memory\`). Each server is started fresh; 200
  connections are opened and closed (warm-up); then RSS (\`VmRSS\` of the server's pid in
  \`/proc/<pid>/status\`; the pid is found by its listening socket) and V8 heap used
  (\`nodejs_heap_size_used_bytes\` from \`/metrics\`; the baselines expose the same name) are
  sampled 5 times 500 ms apart and the median kept; then 10000 connections are opened, each
  subscribed to one of the demo orders 1-5 (WebSocket: the \`ws\` client, \`perMessageDeflate:
  false\`, \`subscribe\` answered by \`subscribed\`; SSE: raw sockets, the 200 and \`retry:\`), left
  idle 5 s and sampled again. Per connection = (after - before) / opened. A GC cannot be forced
  from outside, so the heap figure may include garbage of the handshakes (waiting 20 s instead
  of 5 s did not change the figures by more than 10%); kernel socket buffers are not in RSS.
  An SSE stream of the service is served on node:http before Koa (\`src/http/edge.ts\`,
  \`src/realtime/sse.ts\`): what it holds is node's IncomingMessage/ServerResponse, one
  \`SseStream\` object (the hub's subscriber with its bounded writer) and one listener; the
  bare server holds node's objects, a URL and two Set entries. Peers (\`*-idle-memory-peer\`,
  same service run): Socket.IO 4 (\`bench/baseline/socketio.ts\`: \`connectionStateRecovery\`
  on, \`transports: ['websocket']\`, no per-message deflate; clients are socket.io-client
  with the websocket transport, each joined to its order's room) and better-sse
  (\`bench/baseline/better-sse.ts\`: a session per request registered to a channel per order,
  retry 2000 ms, keep-alive 15 s as ours).
- **CPU per delivered message against the peers** (\`*-fanout-cpu-peer\`). One service, then
  each peer in turn, 2000 subscribers of order 1 on each, writes at a steady 20/s (the service:
  PATCH /orders/1; the peer: POST /publish of one real \`order.updated\` message of the service,
  note replaced, emitted with \`io.to(room).emit\` / \`channel.broadcast\`), 1 s warm-up, then
  2 rounds x 5 s alternating the sides. Server CPU (utime + stime of its process over the
  round) / messages delivered; the notes give each round and the kernel's (system) share of
  the server's CPU. Clients: every side is read by the same lean reader (WebSocket: raw
  socket, minimal frame reader; against Socket.IO it speaks Engine.IO/Socket.IO packets,
  \`sio-lean\` in \`bench/lib/realtime-client.ts\`, answering its pings; SSE: raw sockets that
  split events on the blank line), so the clients cost the same per message whichever server
  they read. On both transports **the floor** runs in the same rounds
  (\`ws-fanout-cpu-floor\`, \`bench/baseline/ws-floor.ts\`: a \`ws\` server that does nothing
  per delivered message but one \`socket.write\` of a frame built once per publish;
  \`sse-fanout-cpu-floor\`, \`bench/baseline/sse-floor.ts\`: a node:http server with the
  service's head and first \`subscribed\` event, that writes each event, framed once per
  publish as one HTTP chunk as the service's chunked response carries it, with one
  \`socket.write\` per stream), and on WebSocket a second Socket.IO server read by
  socket.io-client (the figure of earlier runs, in the notes). At 20
  messages/s on one topic no two messages reach a socket within a tick, so every server here
  pays one write system call per delivered message, and on loopback that call also runs the
  receiver's TCP processing and wakes its process; the floor is what that alone costs, and a
  server's figure minus the floor is its own. Another side is a service with one subscriber,
  PATCHed at the same rate: its CPU per PATCH, divided by 2000, is what the service's publish
  path (a real write: HTTP, auth, transaction, event row; the peers get a ready message by
  POST /publish) adds to each delivered message. A further side is a second service with
  \`WRITE_DELAY_MS=100\` (\`*-fanout-cpu-peer-batched\`): a connection's writes wait up to
  100 ms and leave in one system call, so at 20 messages/s a socket write carries about two;
  its latency figures say what that costs.
- **GraphQL subscriptions** (\`gql-*\`, \`bench/realtime/graphql.ts\`). The contract's
  \`OrderEvents\` subscription over graphql-transport-ws on \`/graphql\`, read by the same lean
  reader speaking that protocol (\`gql-lean\`), in the same rounds as the service's plain
  \`/orders\` channel (another service instance, lean reader) and GraphQL Yoga 5 on graphql-ws's
  \`useServer\` (\`bench/baseline/graphql-ws-yoga.ts\`: Yoga's documented graphql-ws setup on the
  service's schema, \`createPubSub\` as the source, POST /publish of one real service message
  mapped once to the GraphQL view): 2000 subscribers of order 1 per server, 20 writes/s, CPU per
  delivered event as for the peers above (\`gql-fanout-cpu\` against the plain channel, goal
  1.15x; \`gql-fanout-cpu-peer\` against Yoga). Idle memory per subscription
  (\`gql-idle-memory\`) as for \`*-idle-memory\`, one subscription per connection, beside the
  plain channel's and Yoga's, each server started fresh.
- **Stalled clients** (\`*-stalled-memory\`). A fresh service with \`MAX_BUFFER_BYTES=262144\`;
  2000 subscribers (WebSocket, then SSE) of one order whose events carry ~10 KB stop reading
  (their sockets paused); PATCHes, 4 at a time, until every one of them was closed for
  backpressure (\`orderline_stream_backpressure_closes_total\`) or 3000 writes; the server's
  RSS and heap are sampled every 20 writes. Per connection = (peak RSS - RSS before opening) /
  connections, against the bound MAX_BUFFER_BYTES. Queued bytes are the hub's shared frames,
  so a stalled connection adds its references to them, not copies; the kernel's socket buffers
  (machine-wide TCP memory from /proc/net/sockstat, in the notes) are outside RSS.
- **Fan-out** (\`ws-fanout-*\`). The service and the bare ws server each get 10000 WebSocket
  subscribers of \`order:1\`, all open at once. A write is \`PATCH /orders/1\` (\`If-Match: *\`,
  merge-patch \`{"note":"r=<run> t=<µs>"}\`) on the service; on the bare server it is \`POST
  /publish\` of one real \`order.updated\` message taken from the service (note replaced, same
  size), sent with \`client.send()\` per client. t is the send time on CLOCK_MONOTONIC
  (\`process.hrtime\`, common to all processes of the machine); each client reads t from the
  frame and records receive time - t in a log histogram (1% buckets): latency is
  publish-to-delivery, including the write's own processing. \`ws-fanout-max\`: closed loop,
  2 writes in flight, the next issued when one has reached every subscriber; 2 rounds x 5 s
  alternating baseline and service after 1 s of warm-up each; delivered msgs/s = messages
  received by all subscribers / (last delivery - first send), mean of the rounds; p99 is the
  worst round's. \`ws-fanout-steady\`: open loop at 2 writes/s (20000 msgs/s) for 5 s, below
  both sides' saturation. Here the clients are a lean WebSocket client (raw socket, RFC 6455
  handshake, minimal frame reader, no JSON.parse): with the \`ws\` client the 2 client
  processes needed more CPU than either server and bounded both sides alike. Server CPU is the
  server process's utime+stime over the run (\`/proc/<pid>/stat\`), also given per delivered
  message, the figure that isolates the server from the shared machine.
- **One slow request must not stall streams** (\`slow-*\`). 1000 subscribers of
  \`order:1\` on one service, PATCH at 20/s, three 5 s windows, alternating for 2 rounds (worst
  round reported): nothing else; one \`POST /orders\` whose ~100-byte body is trickled one byte
  at a time over the window (raw socket); GraphQL
  \`{ user(id: "u1") { posts { comments { author { name } } } } }\` back to back, one always in
  flight. "loop p99" is prom-client's \`nodejs_eventloop_lag_p99_seconds\` from the service's
  \`/metrics\`, scraped just before the window (the scrape resets it) and just after; prom-client
  samples every 10 ms, so it reads about 10 ms plus the longest stalls. Delivery p99 as in
  fan-out; ratio = delivery p99 with / without the slow request.
- **Machine.** 2 cores shared by both servers, the 2 client processes and the bench: msgs/s are
  what the whole machine delivers while one server works; absolute numbers vary between
  machines, ratios and CPU per message less.
`;

/** Rewrites the Realtime section, keeping the rows of phases not run. */
function writeSection(rows: Row[], env: string, phases: readonly string[]): void {
  editBenchmarks((text) => {
    const byName = new Map<string, string>();
    for (const l of (sectionOf(text, 'Realtime') ?? '').split('\n')) {
      const name = scenarioOf(l);
      if (name && name !== 'scenario') byName.set(name, l);
    }
    for (const r of rows) byName.set(r.scenario, line(r));
    const names = orderScenarios([...byName.keys()]);
    const section = `${METHOD}\n### Results\n\n` + `Realtime last run: ${env} (phases: ${phases.join(', ')}; ${settings()}).\n\n` + `${HEADER.join('\n')}\n${names.map((n) => byName.get(n)).join('\n')}\n${ROWS_MARK}\n`;
    return replaceSection(text, 'Realtime', section);
  });
}

// ---- main -------------------------------------------------------------------------------------

const PHASES = ['memory', 'fanout', 'slow', 'peers', 'stalled', 'graphql'] as const;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const bad = args.filter((a) => (a.startsWith('--') ? a !== '--write' : !(PHASES as readonly string[]).includes(a)));
  if (bad.length) throw new Error(`unknown argument ${bad.join(' ')}; usage: bench/realtime.ts [${PHASES.join('] [')}] [--write]`);
  if (!targetOverride && !existsSync(serviceEntry)) throw new Error('dist/src/main.js is missing: run npm run build first');
  const named = args.filter((a) => !a.startsWith('--'));
  const phases = named.length ? PHASES.filter((p) => named.includes(p)) : PHASES;
  const env = environment();
  console.log(`bench realtime: ${env}; ${settings()}`);
  if (targetOverride) console.log(`bench realtime: target is BENCH_TARGET_CMD=${targetOverride}`);
  const rows: Row[] = [];
  const started = Date.now();
  await withClients(async (clients) => {
    for (const p of phases) {
      console.error(`${p}:`);
      const t = Date.now();
      const got =
        p === 'memory'
          ? await memoryPhase(clients)
          : p === 'fanout'
            ? await fanoutPhase(clients)
            : p === 'slow'
              ? await slowPhase(clients)
              : p === 'peers'
                ? await peersPhase(clients)
                : p === 'graphql'
                  ? await graphqlPhase(clients)
                  : await stalledPhase(clients);
      log(`${p} took ${((Date.now() - t) / 1000).toFixed(0)} s`);
      rows.push(...got);
    }
  });
  console.log(HEADER.join('\n'));
  for (const r of rows) console.log(line(r));
  console.log(`bench realtime: ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (args.includes('--write')) {
    writeSection(rows, env, phases);
    console.log(`bench realtime: wrote ${rows.length} row(s) to the Realtime section of BENCHMARKS.md`);
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`bench realtime: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  });
}

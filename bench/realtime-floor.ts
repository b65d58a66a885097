/**
 * `npx tsx bench/realtime-floor.ts`: the floor under "server CPU per delivered message"
 * (bench/realtime.ts, `ws-fanout-cpu-peer`): a bare node:net server that does nothing but
 * write one pre-built 405-byte buffer to each of 2,000 connected sockets, 20 times a
 * second, as the fan-out does; clients in two other processes read and discard. Prints
 * the server's user and system CPU per write (process.cpuUsage over 8 s).
 *
 * Why: issue 13 asks for <= 0.5x Socket.IO's CPU per delivered message. At 20 messages/s
 * no two messages reach one socket within a tick, so every delivery is one write system
 * call; this says what that alone costs on the machine at hand, i.e. how much is left for
 * everything the service does beyond it. BENCH_FLOOR_SOCKETS (2000), BENCH_FLOOR_RATE (20),
 * BENCH_FLOOR_SECONDS (8).
 */
import { fork } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { envNumber as num } from './lib/env';

const SOCKETS = num('BENCH_FLOOR_SOCKETS', 2000);
const RATE = num('BENCH_FLOOR_RATE', 20);
const SECONDS = num('BENCH_FLOOR_SECONDS', 8);
const MESSAGE_BYTES = 405; // the fan-out's order.updated frame

function client(port: number, n: number): void {
  let open = 0;
  for (let i = 0; i < n; i++) {
    const s = connect(port, '127.0.0.1', () => {
      if (++open === n) process.send?.('ready');
    });
    s.on('data', () => undefined);
  }
}

function server(): void {
  const sockets: Socket[] = [];
  const srv = createServer((s) => {
    s.setNoDelay(true);
    sockets.push(s);
  });
  srv.listen(0, '127.0.0.1', () => {
    const { port } = srv.address() as AddressInfo;
    const half = Math.ceil(SOCKETS / 2);
    const kids = [half, SOCKETS - half].map((n) => fork(__filename, ['client', String(port), String(n)], { execArgv: ['-r', 'tsx/cjs'] }));
    let ready = 0;
    // A client's connect completes in the kernel before the server's 'connection': wait for both.
    const whenAccepted = (): unknown => (sockets.length < SOCKETS ? setTimeout(whenAccepted, 10) : run());
    for (const k of kids) k.on('message', () => ++ready === kids.length && whenAccepted());
    function run(): void {
      const frame = Buffer.alloc(MESSAGE_BYTES, 'x');
      let writes = 0;
      const t0 = process.cpuUsage();
      const timer = setInterval(() => {
        for (const s of sockets) {
          s.write(frame);
          writes++;
        }
      }, 1000 / RATE);
      setTimeout(() => {
        clearInterval(timer);
        const d = process.cpuUsage(t0);
        console.log(`node:net floor, ${sockets.length} sockets x ${RATE}/s, ${writes} writes of ${MESSAGE_BYTES} B: user ${(d.user / writes).toFixed(2)} µs, system ${(d.system / writes).toFixed(2)} µs, total ${((d.user + d.system) / writes).toFixed(2)} µs per write`);
        for (const k of kids) k.kill();
        process.exit(0);
      }, SECONDS * 1000);
    }
  });
}

if (process.argv[2] === 'client') client(Number(process.argv[3]), Number(process.argv[4]));
else server();

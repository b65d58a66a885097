/**
 * `npx tsx bench/graphql-apq-inprocess.ts`: a hash-only APQ request against the same query
 * as text, through the GraphQL engine alone (graphqlEngine().serve(), no HTTP, no peers),
 * so the difference of a microsecond that wrk cannot resolve on a busy machine shows:
 * process CPU time per request, 9 rounds of 5,000 requests alternating which goes first,
 * the median of the rounds' APQ/text ratios. Both answers are checked equal first.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store';
import { graphqlEngine, LruRegistry, sha256Hex } from '../src/graphql';
import { parseConfig } from '../src/config';
import { SIMPLE } from './graphql-peers';
import { manifest } from '../generated/graphql/persisted';

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'ab-'));
  const store = new SqliteStore(join(dir, 'x.sqlite'), 'normal');
  await store.migrate();
  await store.seedDemo();
  const account = await store.ensureAccount('demo');
  const parsed = parseConfig({ DATA_DIR: dir, NODE_ENV: 'production' });
  if (!parsed.ok) throw new Error(parsed.error);
  const engine = graphqlEngine({ store, registry: new LruRegistry(100), manifest: {}, limits: parsed.config.graphql, production: true });
  const headers = { 'content-type': 'application/json', accept: 'application/graphql-response+json' };
  const mk = (body: string) => ({ method: 'POST' as const, url: '/graphql', headers, body, account });
  // The bench's simple query (56 characters: its hash-only body, 127 bytes, is longer than its
  // text body, 68), and a contract operation as the SDK sends it (name, variables, the text).
  const [fofHash, fof] = Object.entries(manifest).find(([, text]) => text.startsWith('query FriendsOfFriends'))!;
  const cases = [
    { name: 'simple query', text: SIMPLE, hash: sha256Hex(SIMPLE), more: {} },
    { name: 'FriendsOfFriends (contract operation)', text: fof, hash: fofHash, more: { operationName: 'FriendsOfFriends', variables: { id: 'u1' } } },
  ];
  for (const c of cases) {
    const pq = { persistedQuery: { version: 1, sha256Hash: c.hash } };
    const inputs = { text: mk(JSON.stringify({ ...c.more, query: c.text })), apq: mk(JSON.stringify({ ...c.more, extensions: pq })) };
    const reg = await engine.serve(mk(JSON.stringify({ ...c.more, query: c.text, extensions: pq })));
    if (reg[1].status !== 200) throw new Error('register');
    for (const i of Object.values(inputs)) for (let k = 0; k < 3000; k++) await engine.serve(i);
    const a = await engine.serve(inputs.apq),
      t = await engine.serve(inputs.text);
    if (a[0] !== t[0] || a[1].status !== 200) throw new Error(`different answers: ${a[0]} / ${t[0]}`);
    const res: Record<string, number[]> = { text: [], apq: [] };
    for (let r = 0; r < 9; r++) {
      for (const name of r % 2 ? (['apq', 'text'] as const) : (['text', 'apq'] as const)) {
        const N = 5000;
        const t0 = process.cpuUsage();
        for (let i = 0; i < N; i++) await engine.serve(inputs[name]);
        const d = process.cpuUsage(t0);
        res[name].push((d.user + d.system) / N);
      }
    }
    const med = (x: number[]) => [...x].sort((p, q2) => p - q2)[x.length >> 1];
    const pairs = res.text.map((x, i) => res.apq[i] / x);
    console.log(
      `${c.name} (${c.text.length} characters; bodies: text ${inputs.text.body.length} B, hash-only ${inputs.apq.body.length} B): text ${med(res.text).toFixed(1)} µs, apq ${med(res.apq).toFixed(1)} µs, median apq/text ${med(pairs).toFixed(3)}; pairs ${res.text.map((x, i) => `${x.toFixed(1)}/${res.apq[i].toFixed(1)}`).join(', ')}`,
    );
  }
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * Summarizes a V8 `.cpuprofile` (node --cpu-prof) of the service under GraphQL load:
 * each sample's time goes to the innermost frame on its stack that belongs to one of
 * the categories below (so SQLite inside a DataLoader batch counts as SQLite, JSON
 * inside execution as serialization), and the rest to "node http + other". Idle time
 * and start-up (module loading) are left out: shares are of the CPU the process used
 * while serving.
 * Used by bench/graphql-profile.ts.
 */
interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Category by frame; first match wins for a frame, innermost categorized frame wins for a sample. */
const CATEGORIES: [name: string, test: (f: CallFrame) => boolean][] = [
  ['SQLite batch (better-sqlite3 + store)', (f) => /better-sqlite3|store\/(sqlite|rows)/i.test(f.url)],
  ['DataLoader', (f) => /node_modules\/dataloader/.test(f.url) || /graphql\/loaders/.test(f.url)],
  ['serialization (JSON)', (f) => /^(stringify|JSON\.stringify|parse|JSON\.parse)$/.test(f.functionName) && f.url === ''],
  ['auth', (f) => /http\/(auth|authCache)/.test(f.url) || /store\/tokens/.test(f.url)],
  ['cost rules (depth, cost, first)', (f) => /graphql\/(costRule|depthRule|firstArgumentRule|selection)/.test(f.url) || f.functionName === 'limitErrors'],
  ['parse/validate (cache hit or miss)', (f) => /graphql\/documents/.test(f.url) || /graphql\/(language|validation)\//.test(f.url)],
  ['persisted step (APQ)', (f) => /graphql\/persisted|graphql\/registry|graphql\/lru/.test(f.url)],
  ['execution (graphql-js / graphql-jit + resolvers)', (f) => /graphql\/(execution|type|jsutils|utilities)\/|graphql-jit|graphql\/resolvers|graphql\/compiled/.test(f.url)],
  ['graphql-http + our glue', (f) => /graphql-http|src\/graphql\/(engine|route|outcome)/.test(f.url)],
  ['body read and client JSON checks', (f) => /http\/(body|duplicateMembers)/.test(f.url)],
  ['request pipeline (routing, finalize, metrics, log)', (f) => /src\/http\/|generated\/openapi\/routes|prom-client|pino/.test(f.url)],
  [
    'Koa (what the contract does not declare)',
    (f) => /node_modules\/(koa|@koa|koa-compose|statuses|accepts|negotiator|type-is|mime|content-type|on-finished|http-errors|vary|cookies|delegates|only|encodeurl|escape-html|fresh)|src\/app|src\/realtime/.test(f.url),
  ],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
];
const OTHER = 'node http, event loop + other';

export function summarize(profile: Profile): { total: number; rows: [string, number][] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const catOf = new Map<number, string>();
  const categoryOf = (id: number): string => {
    const known = catOf.get(id);
    if (known) return known;
    const node = byId.get(id)!;
    const own = CATEGORIES.find(([, test]) => test(node.callFrame))?.[0];
    const p = parent.get(id);
    const cat = own ?? (p === undefined ? OTHER : categoryOf(p));
    catOf.set(id, cat);
    return cat;
  };
  const startupMemo = new Map<number, boolean>();
  const isStartup = (id: number): boolean => {
    const known = startupMemo.get(id);
    if (known !== undefined) return known;
    const p = parent.get(id);
    const v = /^node:internal\/(main|modules)\//.test(byId.get(id)!.callFrame.url) || (p !== undefined && isStartup(p));
    startupMemo.set(id, v);
    return v;
  };
  const time = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const name = byId.get(id)!.callFrame.functionName;
    if (name === '(idle)' || isStartup(id)) return;
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const cat = name === '(program)' ? OTHER : categoryOf(id);
    time.set(cat, (time.get(cat) ?? 0) + dt);
  });
  return { total, rows: [...time].sort((a, b) => b[1] - a[1]) };
}

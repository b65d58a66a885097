/**
 * The fuzzer's oracle: one exchange (request sent, response read) judged against the
 * contract. Every rule that fails is a `Violation`; a violation that a `KNOWN_GAPS`
 * entry names is counted and reported instead of failing the test, every other one fails
 * it with the operation, the request and the response in the message.
 */
import type { FuzzOperation, OptionsOperation } from './contract';
import { normalizeMediaType } from './contract';
import { Findings } from './findings';

export interface SentRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The body as bytes, when they are not UTF-8 text (`body` then shows what they were made from). */
  bytes?: Buffer;
  /** What the fuzzer meant: `valid`, or the constraint it broke (`body /items/0/sku minLength`). */
  intent: string;
}

export interface Received {
  status: number;
  headers: Headers;
  text: string;
}

export interface Violation {
  /** A stable name of the rule (`status-declared`, `body-schema`, ...). */
  rule: string;
  detail: string;
}

/**
 * A known difference between the contract and the service, reported rather than failing.
 * Each names one operation (or a pattern of them), one rule and the status or reason it
 * covers; anything it does not match stays a failure.
 */
export interface KnownGap {
  id: string;
  /** Why it is a gap and what would close it (a contract change or a fix). */
  reason: string;
  matches(op: FuzzOperation, req: SentRequest, res: Received, v: Violation): boolean;
}

const MAX_SHOWN = 600;
const clip = (t: string, n = MAX_SHOWN) => (t.length > n ? `${t.slice(0, n)}... (${t.length} chars)` : t);

export function describeExchange(op: { operationId: string }, req: SentRequest, res: Received): string {
  const reqHeaders = Object.entries(req.headers)
    .filter(([k]) => k.toLowerCase() !== 'authorization')
    .map(([k, v]) => `  ${k}: ${clip(v, 200)}`)
    .join('\n');
  const resHeaders = [...res.headers.entries()].map(([k, v]) => `  ${k}: ${clip(v, 200)}`).join('\n');
  return [
    `operation ${op.operationId} (${req.intent})`,
    `request: ${req.method} ${clip(req.path, 300)}`,
    reqHeaders,
    req.body !== undefined ? `  body: ${clip(req.body)}` : '',
    `response: ${res.status}`,
    resHeaders,
    `  body: ${clip(res.text)}`,
  ]
    .filter((l) => l !== '')
    .join('\n');
}

/** The statuses the operation may answer: declared, plus 401 and 429 where it requires a token. */
export function declaredStatuses(op: FuzzOperation): Set<string> {
  const s = new Set(Object.keys(op.responses));
  if (op.secured) {
    s.add('401');
    s.add('429');
  }
  return s;
}

function headerValueMatches(schema: { type?: unknown; enum?: unknown }, value: string): boolean {
  if (Array.isArray(schema.enum)) return schema.enum.includes(value);
  if (schema.type === 'integer') return /^-?(0|[1-9][0-9]*)$/.test(value);
  return true;
}

export type Rule = (ok: boolean, name: string, detail: () => string) => void;

/** A 4xx (not HEAD, not 304) is `application/problem+json` with a `code` and its own status. */
function problemRules(res: Received, rule: Rule): void {
  const ct = res.headers.get('content-type');
  const isProblem = ct !== null && normalizeMediaType(ct) === 'application/problem+json';
  rule(isProblem, 'problem-json', () => `a ${res.status} with Content-Type ${ct}`);
  if (!isProblem) return;
  let p: { code?: unknown; status?: unknown } | undefined;
  try {
    p = JSON.parse(res.text) as typeof p;
  } catch {
    /* judged below */
  }
  rule(p !== undefined, 'problem-json', () => 'body is not JSON');
  if (p) {
    rule(typeof p.code === 'string' && p.code !== '', 'problem-code', () => 'no `code` member');
    rule(p.status === res.status, 'problem-status', () => `problem status ${String(p.status)} on a ${res.status}`);
  }
}

/** A GraphQL answer (every status): JSON with `errors` or `data`, and every error carrying an `extensions.code`. */
export function graphqlErrorRules(res: Received, rule: Rule): void {
  const ct = res.headers.get('content-type');
  const json = ct !== null && /^application\/(graphql-response\+)?json\b/.test(normalizeMediaType(ct));
  rule(json, 'graphql-json', () => `a ${res.status} with Content-Type ${ct}`);
  let body: { errors?: unknown; data?: unknown } | undefined;
  try {
    body = JSON.parse(res.text) as typeof body;
  } catch {
    /* judged below */
  }
  rule(typeof body === 'object' && body !== null && ('errors' in body || 'data' in body), 'graphql-json', () => 'the body is not a GraphQL response (JSON with errors or data)');
  if (!body || !Array.isArray(body.errors)) return;
  for (const e of body.errors as { extensions?: { code?: unknown } }[]) {
    rule(typeof e?.extensions?.code === 'string', 'graphql-code', () => `an error without extensions.code: ${JSON.stringify(e).slice(0, 200)}`);
  }
}

/** A tally of judged rules: `rule` judges one (`ok`, or a violation); `verdict` is what was found. */
function rules() {
  const violations: Violation[] = [];
  let checks = 0;
  return {
    rule: (ok: boolean, name: string, detail: () => string): void => {
      checks++;
      if (!ok) violations.push({ rule: name, detail: detail() });
    },
    verdict: (): { violations: Violation[]; checks: number } => ({ violations, checks }),
  };
}

/** Every rule of the contract this exchange breaks, and how many rules were judged. */
export function judge(op: FuzzOperation, req: SentRequest, res: Received): { violations: Violation[]; checks: number } {
  const { rule, verdict } = rules();
  const status = String(res.status);
  const isHead = req.method === 'HEAD';
  rule(res.status < 500, '5xx', () => `a ${res.status}`);
  rule(declaredStatuses(op).has(status), 'status-declared', () => `${status} is not declared (declared: ${[...declaredStatuses(op)].join(', ')})`);
  const declared = op.responses[status];
  const ct = res.headers.get('content-type');
  if (isHead || res.status === 304) {
    rule(res.text === '', 'no-body', () => `${req.method} ${status} carries ${res.text.length} bytes of body`);
  } else if (res.status >= 400 && res.status < 500) {
    problemRules(res, rule);
  }
  if (declared && !isHead && res.status !== 304) {
    const validators = op.route.responses[status] ?? {};
    if (declared.mediaTypes.length === 0) {
      rule(res.text === '', 'body-declared', () => `${status} declares no body, got ${res.text.length} bytes`);
    } else {
      rule(ct !== null, 'media-type', () => `${status} without Content-Type (declared: ${declared.mediaTypes.join(', ')})`);
      if (ct !== null) {
        const got = normalizeMediaType(ct);
        const key = declared.mediaTypes.find((m) => normalizeMediaType(m) === got || normalizeMediaType(m) === got.split(';')[0]);
        rule(key !== undefined, 'media-type', () => `${status} Content-Type ${ct} is not declared (${declared.mediaTypes.join(', ')})`);
        const validate = key === undefined ? undefined : validators[key];
        if (validate) {
          let body: unknown;
          try {
            body = JSON.parse(res.text);
          } catch {
            /* judged below */
          }
          rule(body !== undefined, 'body-schema', () => `${status} ${key} body is not JSON`);
          if (body !== undefined) rule(validate(body), 'body-schema', () => `${status} ${key} body violates the schema: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
        }
      }
    }
  }
  if (declared && res.status < 400) {
    for (const h of declared.requiredHeaders) rule(res.headers.has(h.name), 'header-required', () => `${status} lacks required header ${h.name}`);
    for (const h of declared.headers) {
      const v = res.headers.get(h.name);
      if (v !== null) rule(headerValueMatches(h.schema, v), 'header-schema', () => `${h.name}: ${v} does not match ${JSON.stringify(h.schema)}`);
    }
  }
  return verdict();
}

/**
 * An OPTIONS exchange against its path's `options` operation: a declared status, no body,
 * only declared `Access-Control-*` headers (`Allow` listing exactly the path's methods), the
 * CORS fields only for the allowed origin: a preflight's with `Access-Control-Request-Method`,
 * an actual request's without.
 */
export function judgeOptions(op: OptionsOperation, req: SentRequest, res: Received, allowedOrigin: string): { violations: Violation[]; checks: number } {
  const { rule, verdict } = rules();
  const status = String(res.status);
  const declared = op.responses[status];
  rule(res.status < 500, '5xx', () => `a ${res.status}`);
  rule(declared !== undefined, 'status-declared', () => `${status} is not declared (declared: ${Object.keys(op.responses).join(', ')})`);
  rule(res.text === '', 'no-body', () => `OPTIONS ${status} carries ${res.text.length} bytes of body`);
  if (declared) {
    for (const h of declared.requiredHeaders) rule(res.headers.has(h.name), 'header-required', () => `${status} lacks required header ${h.name}`);
    for (const h of declared.headers) {
      const v = res.headers.get(h.name);
      if (v !== null) rule(headerValueMatches(h.schema, v), 'header-schema', () => `${h.name}: ${v} does not match ${JSON.stringify(h.schema)}`);
    }
    const undeclared = [...res.headers.keys()].filter((k) => k.startsWith('access-control-') && !declared.headers.some((h) => h.name.toLowerCase() === k));
    rule(undeclared.length === 0, 'header-declared', () => `undeclared ${undeclared.join(', ')}`);
  }
  const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim());
  rule([...allow].sort().join() === [...op.allow].sort().join(), 'allow', () => `Allow: ${res.headers.get('allow')}, the contract declares ${op.allow.join(', ')}`);
  const header = (n: string) => Object.entries(req.headers).find(([k]) => k.toLowerCase() === n)?.[1];
  // CORS as for any request: only an allowed origin gets its fields; a preflight the preflight's, any other OPTIONS an actual request's.
  const allowed = header('origin') === allowedOrigin;
  const preflight = allowed && header('access-control-request-method') !== undefined;
  const acao = res.headers.get('access-control-allow-origin');
  rule(allowed ? acao === allowedOrigin : acao === null, 'cors', () => `Access-Control-Allow-Origin: ${acao} for Origin ${header('origin')}`);
  rule(res.headers.has('access-control-allow-methods') === preflight, 'cors', () => `Access-Control-Allow-Methods ${preflight ? 'missing on' : 'sent without'} a preflight from an allowed origin`);
  rule(
    res.headers.has('access-control-expose-headers') === (allowed && !preflight),
    'cors',
    () => `Access-Control-Expose-Headers on ${preflight ? 'a preflight' : allowed ? '(missing) an actual request' : 'a request from another origin'}`,
  );
  return verdict();
}

/** An intent without its values (`header If-Match garbage (12 chars)` -> `header If-Match garbage`): what groups findings. */
export const intentKind = (intent: string): string =>
  intent
    .replace(/\s*\(.*?\)/g, '')
    .replace(/:\s.*$/, '')
    .replace(/\d+/g, 'N')
    .replace(/^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) on \S+$/, '$1')
    .replace(/ of \/\S*$/, '');

export interface Tally {
  requests: number;
  checks: number;
  byOperation: Map<string, { requests: number; statuses: Map<number, number> }>;
  gapHits: Map<string, { count: number; example: string }>;
  /** Violations no known gap covers: thrown at once, or recorded in collect mode. */
  findings: Findings;
}

export const newTally = (collect = false): Tally => ({ requests: 0, checks: 0, byOperation: new Map(), gapHits: new Map(), findings: new Findings(collect) });

/** A rule of the caller's own (e.g. "a schema-valid request is not refused as invalid"), judged. */
export interface Expectation extends Violation {
  ok: boolean;
}

/**
 * Judges an exchange, counts it, and throws on the first violation no known gap covers
 * (in collect mode, records each one by operation and rule instead).
 * `sent: false` judges again an exchange already counted (e.g. a walk's rules over its steps);
 * an OPTIONS exchange is judged by `judgeOptions` against the server's `allowedOrigin`.
 */
export function enforce(
  tally: Tally,
  gaps: readonly KnownGap[],
  op: FuzzOperation | OptionsOperation,
  req: SentRequest,
  res: Received,
  extra: Expectation[] = [],
  { sent = true, allowedOrigin = '' }: { sent?: boolean; allowedOrigin?: string } = {},
): void {
  const judged = 'route' in op ? judge(op, req, res) : judgeOptions(op, req, res, allowedOrigin);
  if (sent) {
    tally.requests++;
    const per = tally.byOperation.get(op.operationId) ?? { requests: 0, statuses: new Map() };
    per.requests++;
    per.statuses.set(res.status, (per.statuses.get(res.status) ?? 0) + 1);
    tally.byOperation.set(op.operationId, per);
  }
  const violations = [...judged.violations, ...extra.filter((e) => !e.ok).map(({ rule, detail }) => ({ rule, detail }))];
  // Each rule judged counts as a check, passed or not: the contract's above, and the caller's own.
  tally.checks += judged.checks + extra.length;
  const open: Violation[] = [];
  for (const v of violations) {
    const gap = 'route' in op ? gaps.find((g) => g.matches(op, req, res, v)) : undefined;
    if (gap) {
      const hit = tally.gapHits.get(gap.id) ?? { count: 0, example: `${req.method} ${req.path} (${req.intent}) -> ${res.status}: ${v.detail}` };
      hit.count++;
      tally.gapHits.set(gap.id, hit);
    } else open.push(v);
  }
  if (open.length > 0) {
    const detail = `Contract violation: ${open.map((v) => `[${v.rule}] ${v.detail}`).join('; ')}\n${describeExchange(op, req, res)}`;
    tally.findings.report(`${op.operationId} [${[...new Set(open.map((v) => v.rule))].join(', ')}] ${intentKind(req.intent)}`, detail);
  }
}

/** A known difference for a request no contract operation owns (a path variant, an undeclared method). */
export interface RawGap {
  id: string;
  reason: string;
  matches(req: SentRequest, res: Received, v: Violation): boolean;
}

/**
 * Judges an exchange that belongs to no operation of the route table (another path's
 * spelling, a method no operation declares, /graphql, the stream, a WebSocket): never a
 * 5xx, every 4xx a problem with a `code` (not for HEAD; GraphQL's shape for `graphql`), and
 * the caller's own rules; counted under `label`.
 */
export function enforceRaw(tally: Tally, gaps: readonly RawGap[], label: string, req: SentRequest, res: Received, extra: Expectation[] = [], shape: 'problem' | 'graphql' | 'websocket' = 'problem'): void {
  tally.requests++;
  const per = tally.byOperation.get(label) ?? { requests: 0, statuses: new Map() };
  per.requests++;
  per.statuses.set(res.status, (per.statuses.get(res.status) ?? 0) + 1);
  tally.byOperation.set(label, per);
  const violations: Violation[] = [];
  const rule: Rule = (ok, name, detail) => {
    tally.checks++;
    if (!ok) violations.push({ rule: name, detail: detail() });
  };
  // `websocket`: an exchange on an open socket, whose `status` is a close code or what the caller counts (its own rules judge it).
  if (shape !== 'websocket') {
    rule(res.status < 500, '5xx', () => `a ${res.status}`);
    if (req.method !== 'HEAD' && res.status >= 400 && res.status < 500) (shape === 'problem' ? problemRules : graphqlErrorRules)(res, rule);
  }
  for (const e of extra) rule(e.ok, e.rule, () => e.detail);
  const open: Violation[] = [];
  for (const v of violations) {
    const gap = gaps.find((g) => g.matches(req, res, v));
    if (!gap) {
      open.push(v);
      continue;
    }
    const hit = tally.gapHits.get(gap.id) ?? { count: 0, example: `${req.method} ${req.path} (${req.intent}) -> ${res.status}: ${v.detail}` };
    hit.count++;
    tally.gapHits.set(gap.id, hit);
  }
  if (open.length > 0) {
    const shown = `${req.method} ${req.path} (${req.intent}) -> ${res.status} ${res.headers.get('content-type') ?? ''} ${res.text.slice(0, 300)}`;
    tally.findings.report(`${label} [${[...new Set(open.map((v) => v.rule))].join(', ')}] ${intentKind(req.intent)}`, `${open.map((v) => `[${v.rule}] ${v.detail}`).join('; ')}\n${shown}`);
  }
}

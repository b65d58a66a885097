/** The rows of the Realtime section of BENCHMARKS.md. */
import { cell } from '../lib/report';
// ---- output -------------------------------------------------------------------------------------

export interface Row {
  scenario: string;
  service: string;
  baseline: string;
  serviceFig: string;
  baselineFig: string;
  ratio?: number;
  goal: string;
  notes: string;
}

export const HEADER = ['| scenario | service | baseline | service figure | baseline figure | ratio | goal | notes |', '|---|---|---|---|---|---|---|---|'];
export const line = (r: Row) =>
  `| ${r.scenario} | ${cell(r.service)} | ${cell(r.baseline)} | ${cell(r.serviceFig)} | ${cell(r.baselineFig)} | ${r.ratio === undefined ? '' : r.ratio.toFixed(2)} | ${cell(r.goal)} | ${cell(r.notes)} |`;

/**
 * A row's scenario key at a subscriber count: the base key at the default count, else the
 * base key and `-<count>` (`ws-fanout-cpu-peer-10000`), so runs at different counts each keep
 * their rows in BENCHMARKS.md.
 */
export const scaledScenario = (base: string, count: number, defaultCount: number) => (count === defaultCount ? base : `${base}-${count}`);

/** The order of the section's rows; a scaled key (`<key>-<count>`) follows its base key, by count. */
export const ROW_ORDER = [
  'ws-idle-memory',
  'ws-idle-memory-peer',
  'sse-idle-memory',
  'sse-idle-memory-peer',
  'ws-fanout-max',
  'ws-fanout-steady',
  'ws-fanout-cpu-peer',
  'ws-fanout-cpu-peer-batched',
  'ws-fanout-cpu-floor',
  'sse-fanout-cpu-peer',
  'sse-fanout-cpu-peer-batched',
  'sse-fanout-cpu-floor',
  'ws-stalled-memory',
  'sse-stalled-memory',
  'slow-none',
  'slow-trickle',
  'slow-graphql',
  'gql-fanout-cpu',
  'gql-fanout-cpu-peer',
  'gql-idle-memory',
];

/** Scenario keys in ROW_ORDER (keys it does not know last, in the order given). */
export function orderScenarios(names: string[]): string[] {
  const rank = (name: string): [number, number] => {
    const at = ROW_ORDER.indexOf(name);
    if (at >= 0) return [at, 0];
    const m = /^(.*)-([0-9]+)$/.exec(name);
    const base = m ? ROW_ORDER.indexOf(m[1]) : -1;
    return base >= 0 ? [base, Number(m![2])] : [ROW_ORDER.length, 0];
  };
  return [...names].sort((a, b) => {
    const [ra, ca] = rank(a);
    const [rb, cb] = rank(b);
    return ra - rb || ca - cb;
  });
}

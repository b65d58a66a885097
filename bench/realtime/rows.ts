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

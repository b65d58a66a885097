import { readFileSync } from 'node:fs';
import { BENCHMARKS_FILE } from './lib/report';
import { REST_MARKERS, storeMarkers, storesOf, table, writeStorePart } from './rest';

describe('bench/rest.ts helpers', () => {
  it('reads the stores from --store, then BENCH_STORE, defaulting to sqlite', () => {
    expect(storesOf([], undefined)).toEqual(['sqlite']);
    expect(storesOf([], 'postgres')).toEqual(['postgres']);
    expect(storesOf(['--store', 'pg'], 'sqlite')).toEqual(['postgres']);
    expect(storesOf(['--write', '--store=all'], undefined)).toEqual(['sqlite', 'postgres']);
    expect(storesOf(['--store', 'postgres,sqlite,postgres'], undefined)).toEqual(['postgres', 'sqlite']);
    expect(() => storesOf(['--store', 'mysql'], undefined)).toThrow(/sqlite, postgres or all/);
    expect(() => storesOf(['--store'], undefined)).toThrow();
  });

  it("replaces one store's part and leaves the other's and the text around them", () => {
    const doc = `intro\n${REST_MARKERS.start}\n${storeMarkers('sqlite').start}\nold sqlite\n${storeMarkers('sqlite').end}\n${storeMarkers('postgres').start}\nold pg\n${storeMarkers('postgres').end}\n${REST_MARKERS.end}\nafter\n`;
    const out = writeStorePart(doc, 'postgres', 'new pg');
    expect(out).toBe(doc.replace('old pg', 'new pg'));
  });

  it('lays out an older REST part (one table, no store markers) anew before writing', () => {
    const doc = `intro\n${REST_MARKERS.start}\n| old | table |\n${REST_MARKERS.end}\nafter\n`;
    const out = writeStorePart(doc, 'sqlite', 'new sqlite');
    expect(out).not.toContain('| old | table |');
    expect(out).toContain(`${storeMarkers('sqlite').start}\nnew sqlite\n${storeMarkers('sqlite').end}`);
    expect(out).toContain(`${storeMarkers('postgres').start}\n### PostgreSQL\n\nNot measured yet.\n${storeMarkers('postgres').end}`);
    expect(out.startsWith(`intro\n${REST_MARKERS.start}\n`)).toBe(true);
    expect(out.endsWith(`${REST_MARKERS.end}\nafter\n`)).toBe(true);
  });

  it('has both stores marked inside the REST part of BENCHMARKS.md', () => {
    const md = readFileSync(BENCHMARKS_FILE, 'utf8');
    const rest = md.slice(md.indexOf(REST_MARKERS.start), md.indexOf(REST_MARKERS.end));
    for (const s of ['sqlite', 'postgres'] as const) {
      expect(rest).toContain(storeMarkers(s).start);
      expect(rest).toContain(storeMarkers(s).end);
    }
  });

  it('tabulates req/s with p99, the ratios to each peer and the failure counts', () => {
    const m = (name: string, rps: number) => ({ name, rps, p99: 2.25, bad: 0 });
    const out = table([{ scenario: 'rest-list', request: 'GET /orders?limit=5', sides: [m('service', 3000), m('fastify', 2000), m('koa', 4000)] }]);
    expect(out.split('\n')[2]).toBe('| rest-list | GET /orders?limit=5 | 3000 (2.3) | 2000 (2.3) | 4000 (2.3) | 1.50 | 0.75 | service 0, fastify 0, koa 0 |');
  });
});

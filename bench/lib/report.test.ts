import { readFileSync } from 'node:fs';
import { BENCHMARKS_FILE, replaceBetween, replaceSection, sectionOf, upsertRows } from './report';

describe('BENCHMARKS.md writer', () => {
  const doc = '# Benchmarks\n\n| a | x |\n<!-- rows -->\n\n## Realtime\n\nold\n| ws-idle-memory | 1 |\n\n## Scale-out\n\nkept\n';

  it('upserts rows by scenario before the marker, leaving other rows', () => {
    const out = upsertRows(
      doc,
      [
        { scenario: 'a', line: '| a | y |' },
        { scenario: 'b', line: '| b | z |' },
      ],
      '<!-- rows -->',
    );
    expect(out).toContain('| a | y |\n| b | z |\n<!-- rows -->');
    expect(out).not.toContain('| a | x |');
  });

  it('replaces one section only, and appends a missing one', () => {
    const out = replaceSection(doc, 'Realtime', '## Realtime\n\nnew\n');
    expect(sectionOf(out, 'Realtime')).toBe('\n\nnew\n\n');
    expect(out).toContain('## Scale-out\n\nkept\n');
    expect(out.startsWith('# Benchmarks\n\n| a | x |\n<!-- rows -->\n\n## Realtime')).toBe(true);
    expect(replaceSection(doc, 'Other', '## Other\n\nx\n').endsWith('kept\n\n## Other\n\nx\n')).toBe(true);
  });

  it('replaces what lies between two markers, keeps them and the rest, and refuses missing markers', () => {
    const text = 'intro\n<!-- x:start -->\nold\nlines\n<!-- x:end -->\nafter\n';
    expect(replaceBetween(text, '<!-- x:start -->', '<!-- x:end -->', 'new')).toBe('intro\n<!-- x:start -->\nnew\n<!-- x:end -->\nafter\n');
    expect(() => replaceBetween(text, '<!-- y:start -->', '<!-- y:end -->', 'new')).toThrow(/no <!-- y:start -->/);
    expect(() => replaceBetween('<!-- x:end -->\n<!-- x:start -->\n', '<!-- x:start -->', '<!-- x:end -->', 'new')).toThrow();
  });

  it("finds every benches' markers in BENCHMARKS.md, and writing back what is there changes nothing", () => {
    const md = readFileSync(BENCHMARKS_FILE, 'utf8');
    for (const [start, end] of [
      ['<!-- rest-peers:start -->', '<!-- rest-peers:end -->'],
      ['<!-- rest-peers-sqlite:start -->', '<!-- rest-peers-sqlite:end -->'],
      ['<!-- rest-peers-postgres:start -->', '<!-- rest-peers-postgres:end -->'],
      ['<!-- graphql-peers -->', '<!-- /graphql-peers -->'],
      ['<!-- limits:start -->', '<!-- limits:end -->'],
      ['<!-- limits-inprocess:start -->', '<!-- limits-inprocess:end -->'],
    ]) {
      const body = md.slice(md.indexOf(start) + start.length + 1, md.indexOf(end) - 1);
      expect(replaceBetween(md, start, end, body)).toBe(md);
    }
  });
});

import { replaceSection, sectionOf, upsertRows } from './report';

describe('BENCHMARKS.md writer', () => {
  const doc = '# Benchmarks\n\n| a | x |\n<!-- rows -->\n\n## Realtime\n\nold\n| ws-idle-memory | 1 |\n\n## Scale-out\n\nkept\n';

  it('upserts rows by scenario before the marker, leaving other rows', () => {
    const out = upsertRows(doc, [{ scenario: 'a', line: '| a | y |' }, { scenario: 'b', line: '| b | z |' }], '<!-- rows -->');
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
});

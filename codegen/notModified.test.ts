import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { notModifiedRuleProblems } from './notModified';

type Response = { headers?: Record<string, unknown> };
type Doc = { paths: Record<string, Record<string, { responses: Record<string, Response> }>> };
const contract = () => YAML.parse(readFileSync(join(__dirname, '../contracts/openapi.yaml'), 'utf8')) as Doc;
const read = (doc: Doc) => doc.paths['/v2/orders/{orderId}'].get.responses;

describe('the 304 rule in the contract', () => {
  it('holds for every operation of contracts/openapi.yaml', () => {
    expect(notModifiedRuleProblems(contract())).toEqual([]);
  });
  it('refuses a 304 that requires a header its 200 does not declare, naming each', () => {
    const doc = contract();
    delete read(doc)['200'].headers!.Vary;
    delete read(doc)['200'].headers!['Cache-Control'];
    expect(notModifiedRuleProblems(doc)).toEqual([expect.stringMatching(/^GET \/v2\/orders\/\{orderId\}: its "304" requires Cache-Control, Vary, which its "200" does not declare/)]);
  });
  it('refuses a 304 without a 200 to stand for', () => {
    const doc = contract();
    delete read(doc)['200'];
    expect(notModifiedRuleProblems(doc)).toEqual([expect.stringContaining('GET /v2/orders/{orderId}: a "304" stands for a "200"')]);
  });
});

describe('codegen applies the 304 rule', () => {
  it('refuses a contract whose 304 requires Vary the 200 does not declare', async () => {
    const root = join(__dirname, '..');
    const dir = mkdtempSync(join(tmpdir(), 'orderline-304-'));
    try {
      cpSync(join(root, 'contracts'), join(dir, 'contracts'), { recursive: true });
      const doc = contract();
      delete read(doc)['200'].headers!.Vary;
      writeFileSync(join(dir, 'contracts/openapi.yaml'), YAML.stringify(doc));
      const run = promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', join(root, 'codegen/index.ts'), '--root', dir, '--no-docs'], { cwd: root });
      await expect(run).rejects.toMatchObject({ stderr: expect.stringMatching(/GET \/v2\/orders\/\{orderId\}: its "304" requires Vary/) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { unavailableRuleProblems } from './unavailable';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>>; components: { responses: Record<string, unknown> } };
const contract = () => YAML.parse(readFileSync(join(__dirname, '../contracts/openapi.yaml'), 'utf8')) as Doc;

describe('the 503 rule in the contract', () => {
  it('holds for every operation of contracts/openapi.yaml', () => {
    expect(unavailableRuleProblems(contract())).toEqual([]);
  });
  it('refuses an operation without a 503, and its own 503 without Retry-After', () => {
    const doc = contract();
    delete doc.paths['/healthz'].get.responses['503'];
    doc.paths['/readyz'].get.responses['503'] = { description: 'mine' };
    expect(unavailableRuleProblems(doc)).toEqual([expect.stringContaining('GET /healthz: no "503"'), expect.stringContaining('GET /readyz: its own "503" must declare Retry-After')]);
  });
  it('refuses an operation without a 412 or a 413, which the pipeline answers to any operation, naming the response to declare', () => {
    const doc = contract();
    delete doc.paths['/healthz'].get.responses['412'];
    delete doc.paths['/orders/{orderId}'].patch.responses['413'];
    delete doc.paths['/orders/{orderId}'].head.responses['413'];
    expect(unavailableRuleProblems(doc)).toEqual([
      'HEAD /orders/{orderId}: no "413" (a body over the limit is refused whatever the operation; declare {$ref: #/components/responses/HeadError})',
      'PATCH /orders/{orderId}: no "413" (a body over the limit is refused whatever the operation; declare {$ref: #/components/responses/E413})',
      'GET /healthz: no "412" (an If-Match is judged on every request; declare {$ref: #/components/responses/E412Read})',
    ]);
  });
  it('refuses an operation without a status the pipeline answers because of what it declares (400, 401, 406, 415, 428, 429), naming the response to declare', () => {
    const doc = contract();
    for (const status of ['400', '401', '406', '415', '428', '429']) delete doc.paths['/v2/orders/{orderId}'].patch.responses[status];
    delete doc.paths['/v2/orders/{orderId}'].head.responses['401'];
    expect(unavailableRuleProblems(doc)).toEqual([
      'HEAD /v2/orders/{orderId}: no "401" (it requires a token; declare {$ref: #/components/responses/HeadE401})',
      'PATCH /v2/orders/{orderId}: no "400" (its parameters and body are validated: what their schemas refuse is a 400; declare {$ref: #/components/responses/E400})',
      'PATCH /v2/orders/{orderId}: no "401" (it requires a token; declare {$ref: #/components/responses/E401})',
      'PATCH /v2/orders/{orderId}: no "429" (it requires a token, and the per-account rate limit applies; declare {$ref: #/components/responses/E429})',
      'PATCH /v2/orders/{orderId}: no "406" (it declares Accept; declare {$ref: #/components/responses/E406})',
      'PATCH /v2/orders/{orderId}: no "415" (it takes a body, whose media type is checked; declare {$ref: #/components/responses/E415})',
      'PATCH /v2/orders/{orderId}: no "428" (it declares If-Match, which a write requires; declare {$ref: #/components/responses/E428})',
    ]);
    // A public operation without parameters or a body needs none of them.
    for (const status of ['400', '401', '406', '415', '428', '429']) delete doc.paths['/healthz'].get.responses[status];
    expect(unavailableRuleProblems(doc).filter((p) => p.includes('/healthz'))).toEqual([]);
  });

  it('refuses a "412" or "413" that refers to a shared response of another status', () => {
    const doc = contract();
    doc.paths['/healthz'].get.responses['412'] = { $ref: '#/components/responses/E413' };
    expect(unavailableRuleProblems(doc)).toEqual(['GET /healthz: its "412" refers to #/components/responses/E413, not a 412 (declare {$ref: #/components/responses/E412Read})']);
  });
  it('refuses a contract without the shared response', () => {
    const doc = contract();
    delete doc.components.responses.E503;
    expect(unavailableRuleProblems(doc)[0]).toContain('E503 is missing');
  });
});

describe('codegen applies the 503 rule', () => {
  it('refuses a contract with an operation that does not declare it', async () => {
    const root = join(__dirname, '..');
    const dir = mkdtempSync(join(tmpdir(), 'orderline-503-'));
    try {
      cpSync(join(root, 'contracts'), join(dir, 'contracts'), { recursive: true });
      const doc = contract();
      delete doc.paths['/healthz'].get.responses['503'];
      writeFileSync(join(dir, 'contracts/openapi.yaml'), YAML.stringify(doc));
      const run = promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', join(root, 'codegen/index.ts'), '--root', dir, '--no-docs'], { cwd: root });
      await expect(run).rejects.toMatchObject({ stderr: expect.stringMatching(/GET \/healthz: no "503"/) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { optionsRuleProblems, OPTIONS_RESPONSE_REF } from './options';

const contract = () => YAML.parse(readFileSync(join(__dirname, '../contracts/openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, unknown>> };

describe('the OPTIONS rule in the contract', () => {
  it('is declared on every path of contracts/openapi.yaml, in the shared form', () => {
    expect(optionsRuleProblems(contract())).toEqual([]);
  });
  it('refuses a path without it, and one that answers it its own way', () => {
    const doc = contract();
    delete doc.paths['/healthz'].options;
    doc.paths['/openapi.json'].options = { operationId: 'x', security: [], responses: { '200': { description: 'mine' } } };
    doc.paths['/readyz'].options = { operationId: 'y', responses: { '204': { $ref: OPTIONS_RESPONSE_REF }, '503': { $ref: '#/components/responses/E503' } } };
    expect(optionsRuleProblems(doc)).toEqual([
      expect.stringContaining('/healthz: no `options` operation'),
      expect.stringContaining('/readyz: `options` must say `security: []`'),
      expect.stringContaining('/openapi.json: `options` must answer only "204"'),
    ]);
  });
});

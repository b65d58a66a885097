import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { sunsetRuleProblems } from './sunset';

type Doc = { info: { 'x-api-versions': { version: number; sunset?: string }[] }; paths: Record<string, Record<string, Record<string, unknown>>> };
const contract = () => YAML.parse(readFileSync(join(__dirname, '../contracts/openapi.yaml'), 'utf8')) as Doc;

describe('the sunset rule in the contract', () => {
  it('holds for contracts/openapi.yaml: every operation of a deprecated version carries its sunset', () => {
    expect(sunsetRuleProblems(contract())).toEqual([]);
  });
  it('refuses an operation of a deprecated version without the marks, or with another day', () => {
    const doc = contract();
    delete doc.paths['/v1/orders'].get.deprecated;
    doc.paths['/v1/orders/{orderId}'].patch['x-sunset'] = '2027-01-01';
    const v1 = doc.info['x-api-versions'].find((v) => v.version === 1);
    expect(v1?.sunset).toBeDefined();
    expect(sunsetRuleProblems(doc)).toEqual([expect.stringContaining('GET /v1/orders: version 1 is deprecated'), expect.stringContaining('PATCH /v1/orders/{orderId}: `x-sunset` must be')]);
  });
});

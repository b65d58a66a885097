import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { deprecationFields, sunsetRuleProblems } from './sunset';

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

  it('refuses an operation deprecated on its own without its dates, and the dates without deprecated: true', () => {
    const doc = contract();
    doc.paths['/orders'].get.deprecated = true;
    doc.paths['/orders'].get['x-sunset'] = '2027-02-30'; // no such day
    doc.paths['/orders'].post['x-deprecated-at'] = '2026-11-01';
    doc.paths['/orders/{orderId}'].get.deprecated = true;
    doc.paths['/orders/{orderId}'].get['x-deprecated-at'] = '2027-02-01';
    doc.paths['/orders/{orderId}'].get['x-sunset'] = '2027-01-01';
    expect(sunsetRuleProblems(doc)).toEqual([
      expect.stringContaining('GET /orders: a deprecated operation says since when in `x-deprecated-at'),
      expect.stringContaining('GET /orders: a deprecated operation says until when in `x-sunset'),
      'POST /orders: `x-deprecated-at` without `deprecated: true`',
      'GET /orders/{orderId}: `x-sunset` comes before `x-deprecated-at`',
    ]);
  });

  it("writes an operation's own dates as the three headers, and none for a version's operation (the version's headers go)", () => {
    const doc = contract();
    const op = { deprecated: true, 'x-deprecated-at': '2026-11-01', 'x-sunset': '2027-03-31', 'x-deprecation-link': 'https://example.test/m' };
    expect(deprecationFields(doc, '/orders', op)).toEqual(['Deprecation', '@1793491200', 'Sunset', 'Wed, 31 Mar 2027 23:59:59 GMT', 'Link', '<https://example.test/m>; rel="deprecation"; type="text/html"']);
    expect(deprecationFields(doc, '/orders', { ...op, 'x-deprecation-link': undefined })).toEqual(['Deprecation', '@1793491200', 'Sunset', 'Wed, 31 Mar 2027 23:59:59 GMT']);
    expect(deprecationFields(doc, '/v1/orders', op)).toBeNull();
    expect(deprecationFields(doc, '/orders', { ...op, deprecated: false })).toBeNull();
    const withThem = contract();
    Object.assign(withThem.paths['/orders'].get, op);
    expect(sunsetRuleProblems(withThem)).toEqual([]);
  });
});

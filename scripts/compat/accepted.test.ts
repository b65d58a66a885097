import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAccepted } from './accepted';
import { GateError } from './types';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'accepted-test-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (text: string) => {
  const f = join(dir, `${Math.random()}.yaml`);
  writeFileSync(f, text);
  return f;
};

describe('readAccepted', () => {
  it('reads the repo file: nothing accepted today', () => {
    expect(readAccepted(join(__dirname, '..', '..', 'contracts', 'compat-accepted.yaml'))).toEqual({ graphql: [] });
  });
  it('treats a missing or empty file as nothing accepted', () => {
    expect(readAccepted(join(dir, 'none.yaml'))).toEqual({ graphql: [] });
    expect(readAccepted(file('# only comments\n'))).toEqual({ graphql: [] });
  });
  it('reads entries with path, message and reason', () => {
    const f = file('graphql:\n  - path: A.b\n    message: "Field b changed"\n    reason: checked clients\n');
    expect(readAccepted(f)).toEqual({ graphql: [{ path: 'A.b', message: 'Field b changed', reason: 'checked clients' }] });
  });
  it.each([
    ['an entry without reason', 'graphql:\n  - path: A.b\n    message: m\n', /needs a non-empty `reason`/],
    ['an empty reason', 'graphql:\n  - path: A.b\n    message: m\n    reason: " "\n', /reason/],
    ['an unknown entry key', 'graphql:\n  - path: A.b\n    message: m\n    reason: r\n    type: X\n', /unknown key\(s\) type/],
    ['an unknown top-level key', 'openapi: []\n', /unknown key\(s\) openapi/],
    ['a list that is not one', 'graphql: yes\n', /must be a list/],
    ['broken YAML', 'graphql: [\n', /not YAML/],
  ])('refuses %s (a typo must not accept a change silently)', (_what, text, message) => {
    expect(() => readAccepted(file(text))).toThrow(GateError);
    expect(() => readAccepted(file(text))).toThrow(message);
  });
});

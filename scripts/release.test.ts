import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { release, ReleaseRefused } from './release';

/** A copy of this repository's contracts (released snapshot included) to release from. */
function copyOfContracts(): string {
  const root = mkdtempSync(join(tmpdir(), 'orderline-release-'));
  cpSync(join(__dirname, '..', 'contracts'), join(root, 'contracts'), { recursive: true });
  return root;
}

const edit = (root: string, file: string, change: (text: string) => string): void => {
  const path = join(root, 'contracts', file);
  writeFileSync(path, change(readFileSync(path, 'utf8')));
};
const versionOf = (root: string, file: string): string => /\n {2}version: (\S+)\n/.exec(readFileSync(join(root, 'contracts', file), 'utf8'))?.[1] ?? '';
const withVersion = (version: string) => (text: string) => text.replace(/\n {2}version: \S+\n/, `\n  version: ${version}\n`);
const described = (text: string) => text.replace('\ninfo:\n', '\ninfo:\n  x-note: changed\n');

describe('npm run release', () => {
  let root: string;
  beforeEach(() => {
    root = copyOfContracts();
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('snapshots unchanged contracts again (same versions, same bytes)', () => {
    expect(release(root)).toContain('contracts/released/openapi.yaml');
  });

  it.each(['openapi.yaml', 'asyncapi.yaml'])('refuses a changed %s under the released info.version, writing nothing', (file) => {
    const before = readFileSync(join(root, 'contracts/released', file), 'utf8');
    edit(root, file, described);
    expect(() => release(root)).toThrow(ReleaseRefused);
    expect(() => release(root)).toThrow(new RegExp(`contracts/${file.replace('.', '\\.')} changed since release ${versionOf(root, file).replace(/\./g, '\\.')} but still says`));
    expect(readFileSync(join(root, 'contracts/released', file), 'utf8')).toBe(before);
  });

  it('releases a changed document once its info.version is raised', () => {
    const [major, minor] = versionOf(root, 'openapi.yaml').split('.').map(Number);
    edit(root, 'openapi.yaml', (t) => withVersion(`${major}.${minor + 1}.0`)(described(t)));
    release(root);
    expect(readFileSync(join(root, 'contracts/released/openapi.yaml'), 'utf8')).toContain('x-note: changed');
  });

  it('refuses a lower info.version than the released one, even with the same content otherwise', () => {
    edit(root, 'asyncapi.yaml', withVersion('0.0.1'));
    expect(() => release(root)).toThrow(/contracts\/asyncapi\.yaml: info\.version 0\.0\.1 is lower than the released/);
  });

  it('refuses a version that is not major.minor.patch, a leading zero included', () => {
    edit(root, 'openapi.yaml', withVersion('"next"'));
    expect(() => release(root)).toThrow(/info\.version must be a version like 1\.2\.3, found "next"/);
    edit(root, 'openapi.yaml', withVersion('03.9.0'));
    expect(() => release(root)).toThrow(/info\.version must be a version like 1\.2\.3, found "03\.9\.0"/);
  });

  it('makes a first release when nothing was released yet', () => {
    rmSync(join(root, 'contracts/released'), { recursive: true });
    expect(release(root).length).toBeGreaterThan(3);
  });
});

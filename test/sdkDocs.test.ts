/**
 * The SDK's documentation, as a client team reads it: the README documents every option
 * the declarations have, its install lines name what the snippets import, it teaches
 * stopping on a failed create, its pack line leaves the checkout clean, and the API
 * reference builds from the declarations (TypeDoc).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPO = join(__dirname, '..');
const sdkReadme = readFileSync(join(REPO, 'sdk/README.md'), 'utf8');
const codeBlocks = (md: string) => [...md.matchAll(/^```(?:ts|cts)\n([\s\S]*?)^```$/gm)].map((m) => m[1]);

describe('the SDK documentation', () => {
  it.each(['retryFetch', 'useGetForHashes', 'cacheSize', 'cache: false', 'onFatal', 'onConnect', 'backoff', 'timeoutMs', 'signal', 'sha256', 'unwrap', 'listOrders', 'headers', 'requestId'])(
    'the README documents %s',
    (name) => {
      expect(sdkReadme).toContain(name);
    },
  );

  it('says where crypto.subtle is missing and what to do (insecure origins)', () => {
    expect(sdkReadme).toMatch(/INSECURE_CONTEXT/);
    expect(sdkReadme).toMatch(/secure contexts/);
  });

  it('install lines name graphql (the peer the snippets import) and @types/ws (for the ws snippet)', () => {
    const install = [...sdkReadme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]).join('\n');
    // The tarball first (the package is on no public registry), then the registry line.
    expect(install).toMatch(/npm install \/tmp\/orderline-sdk-[\d.]+\.tgz graphql/);
    expect(install).toMatch(/npm install @orderline\/sdk graphql/);
    expect(install).toMatch(/@types\/ws/);
  });

  it('links nothing outside the package (the packaged README has no ../)', () => {
    expect(sdkReadme).not.toMatch(/\]\(\.\.\//);
  });

  it('teaches stopping on a failed create, never carrying on with a made-up id', () => {
    for (const doc of ['README.md', 'sdk/README.md']) {
      for (const code of codeBlocks(readFileSync(join(REPO, doc), 'utf8'))) expect(code).not.toMatch(/data\?\.id \?\? 0/);
    }
  });

  it("the README's npm pack writes outside the checkout, and a stray tarball or the built reference is ignored by git", () => {
    for (const doc of ['README.md', 'sdk/README.md']) {
      for (const line of readFileSync(join(REPO, doc), 'utf8')
        .split('\n')
        .filter((l) => /npm pack -w/.test(l)))
        expect(line).toMatch(/--pack-destination/);
    }
    expect(execFileSync('git', ['check-ignore', 'orderline-sdk-0.1.0.tgz', 'sdk/docs/api/index.html'], { cwd: REPO, encoding: 'utf8' }).trim().split('\n')).toHaveLength(2);
  });

  it('the API reference builds from the declarations with TypeDoc and covers the one error type', () => {
    const out = mkdtempSync(join(tmpdir(), 'sdk-api-'));
    try {
      execFileSync(process.execPath, [join(REPO, 'node_modules/typedoc/bin/typedoc'), '--options', 'typedoc.json', '--out', out, '--logLevel', 'Error'], { cwd: join(REPO, 'sdk'), stdio: 'pipe' });
      expect(existsSync(join(out, 'index.html'))).toBe(true);
      expect(existsSync(join(out, 'classes/index.OrderlineError.html')) || existsSync(join(out, 'classes/rest.OrderlineError.html'))).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});

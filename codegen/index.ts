/**
 * `npm run codegen`: contracts/ -> generated/. Deterministic (same input, same bytes)
 * and complete: files under generated/ (and the SDK's sdk/src/generated/) that no generator produced are deleted, so a
 * stale or hand-made file shows up as drift in CI.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { generateOpenApi } from './openapi';
import { generateGraphql } from './graphql';
import { generateAsyncApi } from './asyncapi';
import { generateSdk, SDK_GENERATED } from './sdk';
import { generateDocs } from './docs';
import { generateSdkDocs } from './sdkDocs';

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? listFiles(p) : [p];
  });
}

export async function generateAll(root: string, { docs = true } = {}): Promise<Record<string, string>> {
  const [pages, files] = await Promise.all([
    docs ? generateDocs(root) : {},
    (async () => {
      const parts = await Promise.all([generateOpenApi(root), generateGraphql(root), generateAsyncApi(root)]);
      const server = Object.fromEntries(parts.flatMap((p) => Object.entries(p)));
      const sdk = generateSdk(server, root);
      // The SDK's reference is rendered from the SDK as this run leaves it: every file this run
      // generates is read from memory, the server's too (sdk/src/generated/persisted.ts comes
      // from the GraphQL part), or a new operation would reach the page only on a second run.
      return { ...server, ...sdk, ...(docs ? await generateSdkDocs(root, { ...server, ...sdk }) : {}) };
    })(),
  ]);
  return { ...pages, ...files };
}

/**
 * `--out <dir>` writes the tree under another directory (tests compare runs without touching
 * generated/); `--root <dir>` reads contracts/ from another checkout (tests edit a copy);
 * `--no-docs` leaves out the reference pages (three Redoc builds and the SDK's TypeDoc model, most of codegen's time) for
 * tests that look at other files, and then removes no stale file (the pages would look stale).
 */
async function main(): Promise<void> {
  const flag = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
  const root = flag('--root') ?? join(__dirname, '..');
  const outRoot = flag('--out') ?? root;
  const started = Date.now();
  const docs = !process.argv.includes('--no-docs');
  const files = await generateAll(root, { docs });
  let changed = 0;
  for (const [rel, text] of Object.entries(files)) {
    const p = join(outRoot, rel);
    mkdirSync(dirname(p), { recursive: true });
    if (!existsSync(p) || readFileSync(p, 'utf8') !== text) {
      writeFileSync(p, text);
      changed++;
    }
  }
  const stale = !docs ? [] : [...listFiles(join(outRoot, 'generated')), ...listFiles(join(outRoot, SDK_GENERATED))].filter((p) => !(relative(outRoot, p) in files));
  for (const p of stale) rmSync(p);
  console.log(`codegen: ${Object.keys(files).length} files, ${changed} changed, ${stale.length} stale removed, ${Date.now() - started} ms`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`codegen failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}

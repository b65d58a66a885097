/**
 * Stable generated validators: two contract changes made on two branches must not both
 * rewrite the same generated lines. Ajv numbers its module-level names in compilation
 * order, so before `stableNames` one new operation renumbered `validate64`... through
 * most of validators.ts and params.ts. Here codegen runs (as the CLI, like CI) on an edited
 * copy of contracts/ and the result is compared with the committed generated/ line by line:
 * every changed line must belong to a declaration about the change.
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';

const root = join(__dirname, '..');
const AJV_MODULES = ['generated/openapi/validators.ts', 'generated/openapi/params.ts'];

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed YAML the tests edit freely

/** Runs codegen on a copy of contracts/ edited by `edit`; returns the directory holding generated/. */
async function codegenWith(edit: (doc: Doc) => void): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-stable-'));
  cpSync(join(root, 'contracts'), join(dir, 'contracts'), { recursive: true });
  const file = join(dir, 'contracts/openapi.yaml');
  const doc = YAML.parse(readFileSync(file, 'utf8')) as Doc;
  edit(doc);
  writeFileSync(file, YAML.stringify(doc));
  await promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', join(root, 'codegen/index.ts'), '--root', dir, '--no-docs'], { cwd: root });
  return dir;
}

interface LineChange {
  /** 'old' lines were removed from the committed file, 'new' lines added in the regenerated one. */
  side: 'old' | 'new';
  line: number;
}

/** Line changes between two files, from `git diff --no-index -U0` hunk headers. */
function lineChanges(a: string, b: string): LineChange[] {
  let out = '';
  try {
    execFileSync('git', ['diff', '--no-index', '--no-color', '-U0', a, b], { encoding: 'utf8', maxBuffer: 64 << 20 });
  } catch (err) {
    out = (err as { stdout: string }).stdout; // exit 1: the files differ
  }
  const changes: LineChange[] = [];
  for (const m of out.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm)) {
    const [oldStart, oldLen, newStart, newLen] = [+m[1], m[2] === undefined ? 1 : +m[2], +m[3], m[4] === undefined ? 1 : +m[4]];
    for (let i = 0; i < oldLen; i++) changes.push({ side: 'old', line: oldStart + i });
    for (let i = 0; i < newLen; i++) changes.push({ side: 'new', line: newStart + i });
  }
  return changes;
}

/** Name of the top-level declaration (function, const, export) that contains 1-based `line`. */
function declarationAt(lines: string[], line: number): string {
  for (let i = line - 1; i >= 0; i--) {
    // Ajv does not indent: a module-level line is a function, an export, or a named constant.
    const m = /^(?:function ([\w$]+)\(|export const ([\w$]+)|const ((?:schema|pattern|func|formats|root|wrapper)_[\w$]+) =)/.exec(lines[i]);
    if (m) return m[1] ?? m[2] ?? m[3];
  }
  return '(module header)';
}

/** Declarations touched on either side of the diff of one generated file. */
function touched(dir: string, rel: string): Set<string> {
  const before = join(root, rel);
  const after = join(dir, rel);
  const lines = { old: readFileSync(before, 'utf8').split('\n'), new: readFileSync(after, 'utf8').split('\n') };
  return new Set(lineChanges(before, after).map((c) => declarationAt(lines[c.side], c.line)));
}

const HASHED = /^(?:schema|pattern|func|formats)_[0-9a-f]{8}$/;
const declared = (text: string) => new Set([...text.matchAll(/^const ((?:schema|pattern|func|formats)_[0-9a-f]{8}) =/gm)].map((m) => m[1]));

/**
 * Every touched declaration is named for the change, or is a constant that only exists on one
 * side: a constant's name hashes its value, so a new name is new content and a vanished name
 * is content that changed. A constant present on both sides and touched anyway would have
 * moved, and a validator not named for the change would have been renamed or rewritten.
 */
function expectOnlyAbout(dir: string, about: RegExp): void {
  for (const rel of AJV_MODULES) {
    const before = declared(readFileSync(join(root, rel), 'utf8'));
    const after = declared(readFileSync(join(dir, rel), 'utf8'));
    const unrelated = [...touched(dir, rel)].filter((n) => !about.test(n) && !(HASHED.test(n) && before.has(n) !== after.has(n)));
    expect({ file: rel, unrelated }).toEqual({ file: rel, unrelated: [] });
  }
}

describe('stable Ajv standalone output', () => {
  let withOperation: string;
  let withField: string;
  beforeAll(async () => {
    [withOperation, withField] = await Promise.all([
      codegenWith((doc) => {
        doc.paths['/orders/{id}/audit'] = {
          get: {
            operationId: 'getOrderAudit',
            summary: 'The audit trail of one order',
            parameters: [{ $ref: '#/components/parameters/OrderId' }, { name: 'since', in: 'query', schema: { type: 'integer', minimum: 0 } }],
            responses: {
              '200': { description: 'Audit entries', content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderAudit' } } } },
              '400': { $ref: '#/components/responses/E400' },
              '401': { $ref: '#/components/responses/E401' },
              '412': { $ref: '#/components/responses/E412Read' },
              '413': { $ref: '#/components/responses/E413' },
              '429': { $ref: '#/components/responses/E429' },
              '503': { $ref: '#/components/responses/E503' },
            },
          },
          // Every path declares the one OPTIONS rule (codegen/options.ts); it adds no validator. Every operation its 503, 412 and 413, and the 400, 401 and 429 of what it declares (codegen/unavailable.ts).
          options: { operationId: 'optionsOrderAudit', security: [], responses: { '204': { $ref: '#/components/responses/Options' }, '503': { $ref: '#/components/responses/E503' } } },
        };
        doc.components.schemas.OrderAudit = {
          type: 'object',
          additionalProperties: false,
          required: ['entries'],
          properties: { entries: { type: 'array', items: { type: 'string', maxLength: 200, pattern: '^[a-z ]+$' } } },
        };
      }),
      codegenWith((doc) => {
        doc.components.schemas.OrderV2.properties.gift_wrap = { type: 'boolean' };
      }),
    ]);
  }, 120_000);
  afterAll(() => {
    for (const d of [withOperation, withField]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('adding an operation adds its own validators and changes nothing else in validators.ts and params.ts', () => {
    // Something was added (the check below is not vacuous)...
    expect([...touched(withOperation, 'generated/openapi/validators.ts')]).toEqual(expect.arrayContaining(['validate_OrderAudit', 'validate_defs_OrderAudit']));
    expect([...touched(withOperation, 'generated/openapi/params.ts')]).toEqual(expect.arrayContaining(['validate_getOrderAuditPath', 'validate_getOrderAuditQuery']));
    // ...and nothing else moved, was renamed or renumbered.
    expectOnlyAbout(withOperation, /getOrderAudit|OrderAudit/);
    for (const rel of AJV_MODULES) {
      const removed = lineChanges(join(root, rel), join(withOperation, rel)).filter((c) => c.side === 'old');
      expect({ file: rel, removedLines: removed.length }).toEqual({ file: rel, removedLines: 0 });
    }
  });

  it('adding a field to one schema changes only that schema’s validator and its own constants', () => {
    expect([...touched(withField, 'generated/openapi/validators.ts')]).toContain('validate_defs_OrderV2');
    expectOnlyAbout(withField, /^validate_defs_OrderV2$/);
    // params.ts does not involve OrderV2 at all.
    expect([...touched(withField, 'generated/openapi/params.ts')]).toEqual([]);
  });
});

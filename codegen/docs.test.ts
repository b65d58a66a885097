import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, printSchema } from 'graphql';
import { DOCS_SCRIPT_PATH, graphqlDocsInput, localScript } from './docs';
import { readOperations } from './operations';

const root = join(__dirname, '..');

describe('graphqlDocsInput', () => {
  const input = graphqlDocsInput(root);

  it('is the schema as written, types unchanged', () => {
    const written = buildSchema(readFileSync(join(root, 'contracts/schema.graphql'), 'utf8'));
    const rendered = buildSchema(input);
    const withoutDescription = (sdl: string) => sdl.replace(/^"""[\s\S]*?"""\n/, '');
    expect(withoutDescription(printSchema(rendered))).toBe(withoutDescription(printSchema(written)));
    expect(rendered.description).toContain(written.description);
  });

  it("lists every operation of contracts/operations/ with its hash in the schema's description", () => {
    const description = buildSchema(input).description ?? '';
    const ops = readOperations(root);
    expect(ops.length).toBeGreaterThan(0);
    for (const op of ops) {
      expect(description).toMatch(new RegExp(`### (query|mutation|subscription) ${op.name}\\n`));
      expect(description).toContain(`SHA-256 \`${op.hash}\``);
      expect(description).toContain(op.text.trim());
    }
  });
});

describe('localScript', () => {
  const cdn = 'https://cdn.redocly.com/redoc/v3.0.1/bundles/redoc.standalone.js';
  const page = (n: number) => `<link rel="modulepreload" href="${cdn}" />` + `<script type="module">import { hydrate } from "${cdn}";</script>`.repeat(n - 1);

  it("points the page at this service's copy of the bundle", () => {
    const html = localScript(page(2), 'rest');
    expect(html).not.toContain('cdn.redocly.com');
    expect(html).toBe(`<link rel="modulepreload" href="${DOCS_SCRIPT_PATH}" /><script type="module">import { hydrate } from "${DOCS_SCRIPT_PATH}";</script>`);
  });

  it('fails codegen when build-docs changes how it loads Redoc', () => {
    expect(() => localScript(page(1), 'rest')).toThrow('expected 2 references');
    expect(() => localScript(page(3), 'rest')).toThrow('expected 2 references');
  });

  it('fails codegen when the page would load anything else from another origin', () => {
    expect(() => localScript(`${page(2)}<script src="https://example.com/x.js"></script>`, 'rest')).toThrow('https://example.com/x.js');
  });
});

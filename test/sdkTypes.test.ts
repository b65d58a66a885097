/**
 * The SDK's type-level tests (sdk/test/types/): compiled with the SDK's own strict
 * settings (sdk/tsconfig.json). Each `@ts-expect-error` line there must fail to compile:
 * if a change made it compile (If-Match optional again, a status widened to `string`), the
 * directive is unused, which is an error, and this test fails naming it.
 */
import { join } from 'node:path';
import ts from 'typescript';

const SDK = join(__dirname, '../sdk');

it('the SDK types refuse what the server would refuse, and keep open sets open (sdk/test/types)', () => {
  const config = ts.readConfigFile(join(SDK, 'tsconfig.json'), (p) => ts.sys.readFile(p));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, SDK);
  const program = ts.createProgram({ rootNames: [join(SDK, 'test/types/typing.ts')], options: { ...options, noEmit: true } });
  const diagnostics = ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file ? `${d.file.fileName.slice(SDK.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : ''} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  expect(diagnostics).toEqual([]);
}, 120_000);

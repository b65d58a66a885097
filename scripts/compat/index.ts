/**
 * `npm run compat`: the compatibility gate (README, "Compatibility gate").
 * Compares contracts/ with contracts/released/ (written by `npm run release`) and
 * prints one report naming every breaking change.
 *
 * Exit codes: 0 compatible (one summary line per kind), 1 breaking changes (the
 * report), 2 the gate could not run (missing file, no oasdiff binary, unreadable
 * contract).
 *
 * The four checks are independent and run concurrently: the two oasdiff runs are
 * child processes, so they overlap with the in-process AsyncAPI and GraphQL work.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { CONTRACT_FILES } from '../release';
import { readAccepted } from './accepted';
import { checkAsyncApi } from './asyncapi';
import { checkGraphql, readSchema } from './graphql';
import { checkOpenApi } from './openapi';
import { checkOperations } from './operations';
import { ContractFiles } from './causes';
import { githubAnnotations, junitXml, markdownSummary } from './ci';
import { formatReport } from './report';
import { GateError, type Finding, type KindResult } from './types';

export interface GateOptions {
  /** The folder holding the contracts under review (openapi.yaml, asyncapi.yaml, schema.graphql, operations/). */
  contracts: string;
  /** The released snapshot, same layout; default `<contracts>/released`. */
  released?: string;
  /** The accepted-changes file; default `<contracts>/compat-accepted.yaml`. */
  accepted?: string;
}

export interface GateResult {
  compatible: boolean;
  results: KindResult[];
  findings: Finding[];
}

/** Every file both sides need; all missing ones are named at once. */
function requireFiles(current: string, released: string): void {
  const missing = [current, released].flatMap((dir) => [...CONTRACT_FILES, 'operations'].map((f) => join(dir, f)).filter((p) => !existsSync(p)));
  if (missing.length > 0) {
    const hint = missing.some((p) => p.startsWith(released)) ? ' (run `npm run release` to create the released snapshot)' : '';
    throw new GateError(`missing: ${missing.map((p) => relative(process.cwd(), p) || p).join(', ')}${hint}`);
  }
}

/** Runs every check; a GateError when the gate cannot run. */
export async function runGate(options: GateOptions): Promise<GateResult> {
  const current = options.contracts;
  const released = options.released ?? join(current, 'released');
  requireFiles(current, released);
  const accepted = readAccepted(options.accepted ?? join(current, 'compat-accepted.yaml'));
  const currentSdl = readFileSync(join(current, 'schema.graphql'), 'utf8');
  const releasedSdl = readFileSync(join(released, 'schema.graphql'), 'utf8');
  const newSchema = readSchema(currentSdl, 'contracts/schema.graphql');
  const files = new ContractFiles();
  const results = await Promise.all([
    checkOpenApi(current, released, files),
    checkAsyncApi(current, released, files),
    checkGraphql(currentSdl, releasedSdl, accepted),
    Promise.resolve().then(() => checkOperations(join(current, 'operations'), join(released, 'operations'), newSchema)),
  ]);
  const findings = results.flatMap((r) => r.findings);
  return { compatible: findings.length === 0, results, findings };
}

/**
 * The CLI: prints the report, returns the exit code. For CI (ci.ts), from `env`:
 * `GITHUB_ACTIONS=true` also prints GitHub annotations, `GITHUB_STEP_SUMMARY` gets the
 * Markdown summary appended, `COMPAT_JUNIT=<file>` gets JUnit XML.
 */
export async function main(root: string, out: (s: string) => void = console.log, err: (s: string) => void = console.error, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    const result = await runGate({ contracts: join(root, 'contracts') });
    out(formatReport(result.results));
    if (env.GITHUB_ACTIONS === 'true') {
      const files = new ContractFiles();
      const lines = githubAnnotations(result.results, (contract, pointer) => (contract.endsWith('.yaml') ? files.lineOf(join(root, contract), pointer) : undefined));
      for (const line of lines) out(line);
    }
    if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, markdownSummary(result.results));
    if (env.COMPAT_JUNIT) writeFileSync(env.COMPAT_JUNIT, junitXml(result.results));
    return result.compatible ? 0 : 1;
  } catch (e) {
    if (e instanceof GateError) {
      err(`compat: the gate could not run: ${e.message}`);
      return 2;
    }
    err(`compat: the gate could not run: ${(e as Error).stack ?? String(e)}`);
    return 2;
  }
}

// `npm run compat [-- <root>]`: <root> holds contracts/ and contracts/released/; default this repo.
if (require.main === module) {
  void main(resolve(process.argv[2] ?? join(__dirname, '..', '..'))).then((code) => {
    process.exitCode = code;
  });
}

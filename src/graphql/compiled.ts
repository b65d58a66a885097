/**
 * Execution through graphql-jit (the compiler Mercurius uses) for documents that come
 * back: graphql-js's `execute` re-walks the document, re-collects fields and re-reads
 * argument ASTs on every request; graphql-jit compiles an operation once into a
 * JavaScript function and then only runs resolvers. Compiling costs about a millisecond,
 * so, like Mercurius's `jit: 1`, a document is compiled on its second execution: only
 * the DocumentCache hands the same DocumentNode object back (cache off, or a one-off
 * text, means a fresh object each time), so one-off documents never pay for a compile.
 * The compiled functions hang off the document in a WeakMap and leave with it, which
 * needs V8's compilation cache off (see `compiledExecutor`).
 *
 * Checked against graphql-js by compiled.test.ts (same JSON for data, resolver errors,
 * null propagation, variables that do not coerce, directives, fragments, introspection).
 * Two normalizations keep responses byte-identical: graphql-jit builds `{ data, errors }`
 * where graphql-js builds `{ errors, data }` (outcome.ts reads that order), and variables
 * that do not coerce are answered by graphql-js (graphql-jit words that message
 * differently). graphql-jit's errors have no `extensions` object when there is none to
 * show; the JSON is the same, and our glue reads `extensions` with `?.`.
 *
 * One case graphql-jit gets wrong is left to graphql-js: a nullable variable with a default
 * may stand where a non-null value is needed (`$i: Boolean = true` in `@include(if: $i)`),
 * and a client that sends it as an explicit `null` gets a field error from graphql-js
 * ("must not be null"), where graphql-jit 0.8 takes the null for false and drops the field.
 * A request that sends `null` for such a variable runs on graphql-js.
 *
 * Another: a field aliased `__proto__` (a valid GraphQL name). graphql-jit writes each
 * response key into a plain object, where `__proto__` sets the prototype: the field
 * vanished from the answer, or moved to its end. graphql-js builds results without a
 * prototype, so a document with such an alias is never compiled.
 */
import { BREAK, execute, getOperationAST, Kind, visit, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { setFlagsFromString } from 'node:v8';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';

/** Executions of one document object before it is compiled (Mercurius's `jit` option). */
export const COMPILE_AFTER = 1;

/** An operation graphql-jit compiled. */
interface Operation {
  query: CompiledQuery;
  /** Its variables declared nullable with a default: sent as `null`, graphql-js runs the request (see above). */
  nullableWithDefault: readonly string[];
}

interface Compiled {
  /** Executions seen while not yet compiled. */
  seen: number;
  /** Per operation name ('' = the only one); null when graphql-jit could not compile it. */
  operations: Map<string, Operation | null>;
}

/** The variables of `document`'s operation declared with a nullable type and a default value. */
function nullableWithDefault(document: DocumentNode, operationName: string | undefined): string[] {
  const op = getOperationAST(document, operationName);
  return (op?.variableDefinitions ?? []).filter((v) => v.defaultValue !== undefined && v.type.kind !== Kind.NON_NULL_TYPE).map((v) => v.variable.name.value);
}

/** Whether a field of `document` answers under the response key `__proto__` (see above). */
function aliasesProto(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if (node.alias?.value !== '__proto__') return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
}

/** Whether `variables` sends an explicit null for one of `names`. */
function sendsNull(variables: Readonly<Record<string, unknown>> | null | undefined, names: readonly string[]): boolean {
  if (!variables) return false;
  for (const name of names) if (variables[name] === null) return true;
  return false;
}

type Result = ExecutionResult | Promise<ExecutionResult>;

/** graphql-js's key order: `errors` before `data`. */
function inGraphqlJsOrder(result: ExecutionResult): ExecutionResult {
  return result.errors && 'data' in result ? { errors: result.errors, data: result.data } : result;
}

export interface CompiledExecutorOptions {
  /** Called once per compile (tests observe when compiling happens). */
  onCompile?: (document: DocumentNode, operationName: string | undefined) => void;
}

export function compiledExecutor(schema: GraphQLSchema, options: CompiledExecutorOptions = {}): (args: ExecutionArgs) => Result {
  // graphql-jit builds each operation with `new Function`, and V8 keeps what it compiles
  // from source strings in its compilation cache, keyed by the source, until the heap nears
  // its limit: full collections do not age it. Every distinct document compiled stayed on
  // the heap after the document was gone (Node 20: 120 documents of 40 aliased fields
  // compiled and dropped left 44 MB after 40 full collections, 1,500 left 606 MB; with the
  // cache off, 1 MB), so a client sending new texts grew the process without bound. The
  // cache only pays when the same source is compiled again, which graphql-jit never does
  // and nothing else here compiles code at run time (the validators are generated at
  // build time). V8 reads the flag on every lookup, so setting it here takes effect at
  // once; it applies to the whole process. cacheMemory.test.ts measures it.
  setFlagsFromString('--no-compilation-cache');
  const byDocument = new WeakMap<DocumentNode, Compiled>();

  function compiledFor(document: DocumentNode, operationName: string | null | undefined): Operation | null | undefined {
    const entry = byDocument.get(document);
    if (!entry) {
      byDocument.set(document, { seen: 1, operations: new Map() });
      return undefined;
    }
    const key = operationName ?? '';
    if (entry.operations.has(key)) return entry.operations.get(key);
    if (entry.seen++ < COMPILE_AFTER) return undefined;
    if (aliasesProto(document)) {
      entry.operations.set(key, null);
      return null;
    }
    const compiled = compileQuery(schema, document, operationName ?? undefined);
    options.onCompile?.(document, operationName ?? undefined);
    // Not compilable: graphql-js runs it.
    const operation = isCompiledQuery(compiled) ? { query: compiled, nullableWithDefault: nullableWithDefault(document, operationName ?? undefined) } : null;
    entry.operations.set(key, operation);
    return operation;
  }

  return function compiledExecute(args: ExecutionArgs): Result {
    if (args.schema !== schema) return execute(args);
    const compiled = compiledFor(args.document, args.operationName);
    if (!compiled || sendsNull(args.variableValues, compiled.nullableWithDefault)) return execute(args);
    const result = compiled.query.query(args.rootValue, args.contextValue, args.variableValues ?? {});
    if (result instanceof Promise) return result.then(inGraphqlJsOrder);
    // No `data`: the variables did not coerce, nothing ran. graphql-js words that error
    // differently ("Expected type Int; ..."): it answers, so clients see one message.
    return 'data' in result ? inGraphqlJsOrder(result) : execute(args);
  };
}

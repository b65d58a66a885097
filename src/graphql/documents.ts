/**
 * Parsing and the variable-independent half of validation, cached per exact query
 * text (the pattern of envelop's parser and validation caches). graphql-js's
 * `validate` with its ~30 specified rules costs ~0.3 ms even for a tiny document
 * (visitInParallel over every rule and node kind); a client sends the same few texts
 * over and over, so paying it once per text is most of what makes /graphql cheap.
 * The rules that read variables (depth, cost and `first`, registered together in their
 * own pass) run on every request, cached text or not: invariant 5 holds for every
 * request.
 * Only texts that parse are cached; the cache is bounded in entries and bytes.
 */
import { GraphQLError, parse, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql';
import { Lru } from './lru';

export type Prepared =
  | { ok: true; document: DocumentNode; /** errors of the static rules, [] when valid */ errors: readonly GraphQLError[] }
  | { ok: false; parseError: GraphQLError };

export class DocumentCache {
  private readonly lru: Lru<{ document: DocumentNode; errors: readonly GraphQLError[] }> | undefined;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly staticRules: readonly ValidationRule[],
    private readonly maxTokens: number,
    /** 0 turns caching off (every request parses and validates). */
    size: number,
    maxBytes = 16 * 1024 * 1024,
  ) {
    this.lru = size > 0 ? new Lru(size, maxBytes, (text) => text.length) : undefined;
  }

  prepare(text: string): Prepared {
    const hit = this.lru?.get(text);
    if (hit) return { ok: true, ...hit };
    let document: DocumentNode;
    try {
      document = parse(text, { maxTokens: this.maxTokens });
    } catch (err) {
      return { ok: false, parseError: err instanceof GraphQLError ? err : new GraphQLError('The query could not be parsed') };
    }
    const entry = { document, errors: validate(this.schema, document, this.staticRules) };
    this.lru?.set(text, entry);
    return { ok: true, ...entry };
  }
}

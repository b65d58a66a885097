/**
 * Parsing and the variable-independent half of validation, cached per exact query
 * text (the pattern of envelop's parser and validation caches). graphql-js's
 * `validate` with its ~30 specified rules costs ~0.3 ms even for a tiny document
 * (visitInParallel over every rule and node kind); a client sends the same few texts
 * over and over, so paying it once per text is most of what makes /graphql cheap.
 * The rules that read variables (depth, cost and `first`, registered together in their
 * own pass) are a function of the document and the variables only, so their verdict is
 * kept per text for the last few variable sets seen (`limitErrors`): every request is
 * still judged by them (invariant 5), a repeated request just does not recompute.
 * Only texts that parse are cached; the cache is bounded in entries and bytes.
 */
import { GraphQLError, parse, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql';
import { Lru } from '../lru';

interface Entry {
  document: DocumentNode;
  /** Errors of the static rules, [] when valid. */
  errors: readonly GraphQLError[];
  /** Verdicts of the variable-dependent rules, by the variables' JSON. */
  limits?: Lru<readonly GraphQLError[]>;
}

export type Prepared = ({ ok: true } & Entry) | { ok: false; parseError: GraphQLError };

/** Variable sets remembered per text: enough for a client paging or varying a size, bounded. */
const VERDICTS_PER_TEXT = 16;

export class DocumentCache {
  private readonly lru: Lru<Entry> | undefined;

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
    const entry: Entry = { document, errors: validate(this.schema, document, this.staticRules) };
    if (this.lru) {
      entry.limits = new Lru(VERDICTS_PER_TEXT, Infinity, () => 0);
      this.lru.set(text, entry);
    }
    return { ok: true, ...entry };
  }

  /** The variable-dependent rules' verdict for this document and these variables (computed, or remembered). */
  limitErrors(prepared: Entry, variables: unknown, rules: () => readonly ValidationRule[]): readonly GraphQLError[] {
    const key = prepared.limits ? JSON.stringify(variables ?? null) : '';
    const known = prepared.limits?.get(key);
    if (known) return known;
    const errors = validate(this.schema, prepared.document, rules());
    prepared.limits?.set(key, errors);
    return errors;
  }
}

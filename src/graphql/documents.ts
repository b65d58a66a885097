/**
 * Parsing and the variable-independent half of validation, cached per exact query
 * text (the pattern of envelop's parser and validation caches). graphql-js's
 * `validate` with its ~30 specified rules costs ~0.3 ms even for a tiny document
 * (visitInParallel over every rule and node kind); a client sends the same few texts
 * over and over, so paying it once per text is most of what makes /graphql cheap.
 * The rules that read variables (depth, cost and `first`, registered together in their
 * own pass) are a function of the document and the variables only, so their verdict is
 * kept per text for the last few variable sets seen (`limitErrors`): every request is
 * still judged by them, a repeated request just does not recompute.
 * Only texts that parse are cached. Both caches (texts, verdicts) are lru-cache instances
 * bounded in entries and in bytes (2 per UTF-16 unit of the strings they hold; a
 * document's AST grows with its text, which the parser's token limit bounds): the
 * verdicts are keyed by the variables' JSON, which a client chooses freely, so an
 * entry bound alone would let one client pin gigabytes.
 */
import { GraphQLError, parse, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql';
import { LRUCache } from 'lru-cache';

interface Entry {
  document: DocumentNode;
  /** Errors of the static rules, [] when valid. */
  errors: readonly GraphQLError[];
  /** Names this text in the verdict cache; undefined when caching is off. */
  id?: number;
}

export type Prepared = ({ ok: true } & Entry) | { ok: false; parseError: GraphQLError };

/** Default bounds; `GRAPHQL_DOCUMENT_CACHE_SIZE` sets the number of texts. */
export const DOCUMENT_CACHE_MAX_BYTES = 16 * 1024 * 1024;
/** Verdicts (one per text and variable set) remembered at most: about 16 per cached text. */
export const VERDICTS_PER_TEXT = 16;
export const VERDICT_CACHE_MAX_BYTES = 16 * 1024 * 1024;
/** Variables whose JSON is longer than this are judged every time, never remembered. */
export const VERDICT_MAX_KEY_CHARS = 16 * 1024;

const ENTRY_OVERHEAD = 64;
const errorsBytes = (errors: readonly GraphQLError[]): number => errors.reduce((n, e) => n + ENTRY_OVERHEAD + 2 * e.message.length, 0);

export interface DocumentCacheBounds {
  /** Bytes of cached texts (and their static errors). */
  maxBytes?: number;
  /** Bytes of remembered verdicts (their keys and errors). */
  verdictMaxBytes?: number;
}

export class DocumentCache {
  private readonly lru: LRUCache<string, Entry> | undefined;
  private readonly verdicts: LRUCache<string, readonly GraphQLError[]> | undefined;
  private nextId = 1;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly staticRules: readonly ValidationRule[],
    private readonly maxTokens: number,
    /** 0 turns caching off (every request parses and validates). */
    size: number,
    { maxBytes = DOCUMENT_CACHE_MAX_BYTES, verdictMaxBytes = VERDICT_CACHE_MAX_BYTES }: DocumentCacheBounds = {},
  ) {
    if (size > 0) {
      this.lru = new LRUCache({ max: size, maxSize: maxBytes, sizeCalculation: (entry, text) => ENTRY_OVERHEAD + 2 * text.length + errorsBytes(entry.errors) });
      this.verdicts = new LRUCache({ max: size * VERDICTS_PER_TEXT, maxSize: verdictMaxBytes, sizeCalculation: (errors, key) => ENTRY_OVERHEAD + 2 * key.length + errorsBytes(errors) });
    }
  }

  /** What the caches hold now, in entries and in bytes as they are weighed. */
  get usage(): { texts: number; textBytes: number; verdicts: number; verdictBytes: number } {
    return { texts: this.lru?.size ?? 0, textBytes: this.lru?.calculatedSize ?? 0, verdicts: this.verdicts?.size ?? 0, verdictBytes: this.verdicts?.calculatedSize ?? 0 };
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
      entry.id = this.nextId++;
      this.lru.set(text, entry);
    }
    return { ok: true, ...entry };
  }

  /** The variable-dependent rules' verdict for this document and these variables (computed, or remembered). */
  limitErrors(prepared: Entry, variables: unknown, rules: () => readonly ValidationRule[]): readonly GraphQLError[] {
    const json = this.verdicts && prepared.id !== undefined ? JSON.stringify(variables ?? null) : undefined;
    // An evicted text's verdicts are orphans that age out; a new id is never reused, so never wrong.
    const key = json !== undefined && json.length <= VERDICT_MAX_KEY_CHARS ? `${prepared.id}\u0000${json}` : undefined;
    const known = key === undefined ? undefined : this.verdicts?.get(key);
    if (known) return known;
    const errors = validate(this.schema, prepared.document, rules());
    if (key !== undefined) this.verdicts?.set(key, errors);
    return errors;
  }
}

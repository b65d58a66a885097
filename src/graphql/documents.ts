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
 * bounded in entries and in bytes: the verdicts are keyed by the variables' JSON, which a
 * client chooses freely, so an entry bound alone would let one client pin gigabytes. A
 * text is weighed by what it pins, which is mostly not the text: see DOCUMENT_BYTES.
 */
import { GraphQLError, parse, validate, type DocumentNode, type GraphQLSchema, type Token, type ValidationRule } from 'graphql';
import { LRUCache } from 'lru-cache';

/**
 * graphql-js (16.15) stops validating a selection whose fields would take it over half a
 * million comparisons to check that they merge (OverlappingFieldsCanBeMergedRule's work
 * budget: about 700 fields of one name in one selection), with the bare message
 * "Validation aborted.". Said here in the client's terms: what to change.
 */
const ABORTED = 'Validation aborted.';
function explained(errors: readonly GraphQLError[]): readonly GraphQLError[] {
  if (!errors.some((e) => e.message === ABORTED)) return errors;
  return errors.map((e) =>
    e.message === ABORTED ? new GraphQLError('Validation aborted: a selection repeats fields too many times to check that they merge (graphql-js work limit); ask for each field once', { extensions: e.extensions }) : e,
  );
}

interface Entry {
  document: DocumentNode;
  /** Errors of the static rules, [] when valid. */
  errors: readonly GraphQLError[];
  /** Names this text in the verdict cache; undefined when caching is off. */
  id?: number;
  /** Operations of this document an executor compiled (each compiled form is weighed too). */
  compiled?: number;
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

/**
 * What a cached text pins, an upper estimate from its token count. graphql-js keeps a
 * `loc` on every AST node and the whole token list (error locations need both); the
 * function graphql-jit compiles for a document that comes back (compiled.ts) hangs off the
 * document and leaves with it, one per operation compiled, each charged when it is made
 * (`compiled`) as if it spanned the whole document (fragments can be shared). Measured on
 * Node 20 (heap used after full collections, 30 documents a shape, 1 to 60 aliases of
 * orders with arguments, users with a fragment, the viewer, nested friends): the document
 * 380-650 bytes a token at 60 aliases plus a few KB each; its compiled form 520-1,600
 * bytes a token plus 10-15 KB. Weighing the text alone (2 bytes a UTF-16 unit), as this
 * cache once did, under-counted a 40-alias document about 40-fold, so the byte bound held
 * only in name; cacheMemory.test.ts checks the bound against the heap.
 */
export const DOCUMENT_BYTES = { fixed: 8 * 1024, perToken: 768 };
export const COMPILED_BYTES = { fixed: 24 * 1024, perToken: 2048 };

/** Tokens of a parsed document (its token list, which the parser's `maxTokens` bounds). */
function tokenCount(document: DocumentNode): number {
  let n = 0;
  for (let t: Token | null | undefined = document.loc?.startToken; t; t = t.next) n++;
  return n;
}

function entryBytes(entry: Entry, text: string): number {
  const tokens = tokenCount(entry.document);
  const compiled = (entry.compiled ?? 0) * (COMPILED_BYTES.fixed + COMPILED_BYTES.perToken * tokens);
  return ENTRY_OVERHEAD + 2 * text.length + DOCUMENT_BYTES.fixed + DOCUMENT_BYTES.perToken * tokens + compiled + errorsBytes(entry.errors);
}

export interface DocumentCacheBounds {
  /** Bytes of cached texts, as weighed: their documents, compiled forms and static errors. */
  maxBytes?: number;
  /** Bytes of remembered verdicts (their keys and errors). */
  verdictMaxBytes?: number;
}

export class DocumentCache {
  private readonly lru: LRUCache<string, Entry> | undefined;
  private readonly verdicts: LRUCache<string, readonly GraphQLError[]> | undefined;
  private nextId = 1;
  /** The text each cached document was parsed from, to find its entry again. */
  private readonly textOf = new WeakMap<DocumentNode, string>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly staticRules: readonly ValidationRule[],
    private readonly maxTokens: number,
    /** 0 turns caching off (every request parses and validates). */
    size: number,
    { maxBytes = DOCUMENT_CACHE_MAX_BYTES, verdictMaxBytes = VERDICT_CACHE_MAX_BYTES }: DocumentCacheBounds = {},
  ) {
    if (size > 0) {
      this.lru = new LRUCache({ max: size, maxSize: maxBytes, sizeCalculation: entryBytes });
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
    const entry: Entry = { document, errors: explained(validate(this.schema, document, this.staticRules)) };
    if (this.lru) {
      entry.id = this.nextId++;
      this.lru.set(text, entry);
      this.textOf.set(document, text);
    }
    return { ok: true, ...entry };
  }

  /**
   * An executor compiled an operation of this document and keeps the result while the
   * document lives: its entry is weighed again with one more compiled form, which may
   * evict others (or the entry itself, once it outweighs the whole bound).
   */
  compiled(document: DocumentNode): void {
    const text = this.textOf.get(document);
    const entry = text === undefined ? undefined : this.lru?.peek(text);
    if (text === undefined || !entry || entry.document !== document) return;
    this.lru?.set(text, { ...entry, compiled: (entry.compiled ?? 0) + 1 });
  }

  /** The variable-dependent rules' verdict for this document and these variables (computed, or remembered). */
  limitErrors(prepared: Entry, variables: unknown, operation: string | undefined, rules: () => readonly ValidationRule[]): readonly GraphQLError[] {
    const json = this.verdicts && prepared.id !== undefined ? JSON.stringify(variables ?? null) : undefined;
    // An evicted text's verdicts are orphans that age out; a new id is never reused, so never wrong. The
    // variables are the selected operation's, so its name is part of the key (`operation`: the name, or '').
    const key = json !== undefined && json.length <= VERDICT_MAX_KEY_CHARS ? `${prepared.id}\u0000${operation ?? ''}\u0000${json}` : undefined;
    const known = key === undefined ? undefined : this.verdicts?.get(key);
    if (known) return known;
    const errors = validate(this.schema, prepared.document, rules());
    if (key !== undefined) this.verdicts?.set(key, errors);
    return errors;
  }
}

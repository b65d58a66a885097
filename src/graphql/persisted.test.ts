import fc from 'fast-check';
import { addTypenameToDocument } from '@apollo/client/utilities';
import { parse, print } from 'graphql';
import { manifestMap, resolveOperation, sha256Hex } from './persisted';
import { LruRegistry } from './registry';
import { manifest as manifestRecord } from '../../generated/graphql/persisted';

const manifest = manifestMap(manifestRecord);
const none = manifestMap({});

const pq = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
const Q = '{ viewer { id } }';

describe('resolveOperation: apq', () => {
  it('hash only: unknown -> 200 PERSISTED_QUERY_NOT_FOUND; hash + text -> run and register; then hash only runs it', async () => {
    const reg = new LruRegistry();
    const h = sha256Hex(Q);
    expect(await resolveOperation({ extensions: pq(h) }, 'apq', none, reg)).toEqual({
      ok: false,
      status: 200,
      code: 'PERSISTED_QUERY_NOT_FOUND',
      message: 'PersistedQueryNotFound',
    });
    const withText = await resolveOperation({ query: Q, extensions: pq(h) }, 'apq', none, reg);
    expect(withText).toEqual({ ok: true, text: Q, register: h });
    // registering is the caller's job, after validation: nothing registered yet
    expect(await reg.get(h)).toBeUndefined();
    await reg.set(h, Q);
    expect(await resolveOperation({ extensions: pq(h) }, 'apq', none, reg)).toEqual({ ok: true, text: Q });
  });

  it('a hash in any letter case names the same operation (registered and manifest alike); anything but 64 hex digits is a 400', async () => {
    const reg = new LruRegistry();
    await reg.set(sha256Hex(Q), Q);
    const [hash, text] = [...manifest][0];
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }), (upper) => {
        const cased = (h: string) => [...h].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('');
        expect(resolveOperation({ extensions: pq(cased(sha256Hex(Q))) }, 'apq', manifest, reg)).toEqual({ ok: true, text: Q });
        expect(resolveOperation({ extensions: pq(cased(hash)) }, 'apq', manifest, reg)).toEqual({ ok: true, text });
        expect(resolveOperation({ extensions: pq(cased(hash)) }, 'allowlist', manifest, reg)).toEqual({ ok: true, text });
      }),
    );
    for (const bad of [hash.slice(1), `${hash}0`, `${hash.slice(1)}g`, ` ${hash.slice(1)}`]) {
      expect(resolveOperation({ extensions: pq(bad) }, 'apq', manifest, reg)).toMatchObject({ ok: false, status: 400, code: 'BAD_REQUEST' });
    }
  });

  it('answers a hash this process holds (registered or in the manifest) and a text synchronously: no promise, no hop', async () => {
    const reg = new LruRegistry();
    await reg.set(sha256Hex(Q), Q);
    const [hash, text] = [...manifest][0];
    expect(resolveOperation({ extensions: pq(sha256Hex(Q)) }, 'apq', manifest, reg)).toEqual({ ok: true, text: Q });
    expect(resolveOperation({ extensions: pq(hash) }, 'apq', manifest, reg)).toEqual({ ok: true, text });
    expect(resolveOperation({ query: Q }, 'apq', manifest, reg)).toEqual({ ok: true, text: Q });
    // only an unknown hash asks the registry (Redis when scaled out)
    expect(resolveOperation({ extensions: pq(sha256Hex(`${Q} `)) }, 'apq', manifest, reg)).toBeInstanceOf(Promise);
  });

  it('a text whose SHA-256 differs from the hash is a 400, for every other text (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), async (other) => {
        fc.pre(other !== Q && other !== '');
        const r = await resolveOperation({ query: other, extensions: pq(sha256Hex(Q)) }, 'apq', none, new LruRegistry());
        expect(r).toMatchObject({ ok: false, status: 400, code: 'PERSISTED_QUERY_HASH_MISMATCH' });
      }),
    );
  });

  it('knows the build-time manifest without registration, and refuses malformed extensions', async () => {
    const [hash, text] = [...manifest][0];
    expect(await resolveOperation({ extensions: pq(hash) }, 'apq', manifest, new LruRegistry())).toEqual({ ok: true, text });
    for (const ext of [{ persistedQuery: 'x' }, { persistedQuery: { version: 2, sha256Hash: hash } }, { persistedQuery: { version: 1, sha256Hash: 'abc' } }]) {
      expect(await resolveOperation({ extensions: ext }, 'apq', manifest, new LruRegistry())).toMatchObject({ ok: false, status: 400, code: 'BAD_REQUEST' });
    }
  });
});

describe('resolveOperation: allowlist', () => {
  it("runs the manifest's operations by hash, or by their exact text", async () => {
    for (const [hash, text] of [...manifest]) {
      expect(await resolveOperation({ extensions: pq(hash) }, 'allowlist', manifest, new LruRegistry())).toEqual({ ok: true, text });
      expect(await resolveOperation({ query: text }, 'allowlist', manifest, new LruRegistry())).toEqual({ ok: true, text });
    }
  });

  it('answers a persisted query with no id and no text (a manifest link that found no id) 400 PERSISTED_QUERY_NOT_ALLOWED; a malformed id stays BAD_REQUEST', async () => {
    const reg = new LruRegistry();
    expect(await resolveOperation({ extensions: { persistedQuery: { version: 1 } } }, 'allowlist', manifest, reg)).toMatchObject({ ok: false, status: 400, code: 'PERSISTED_QUERY_NOT_ALLOWED' });
    expect(await resolveOperation({ extensions: { persistedQuery: { version: 1, sha256Hash: 12 } } }, 'allowlist', manifest, reg)).toMatchObject({ ok: false, status: 400, code: 'BAD_REQUEST' });
    expect(await resolveOperation({ extensions: { persistedQuery: { version: 1 } } }, 'apq', manifest, reg)).toMatchObject({ ok: false, status: 400, code: 'BAD_REQUEST' });
  });

  it('refuses anything else with 400 PERSISTED_QUERY_NOT_ALLOWED, even text sent with its hash (no fallback)', async () => {
    const reg = new LruRegistry();
    await reg.set(sha256Hex(Q), Q); // even a registered APQ entry does not count
    for (const params of [{ query: Q }, { extensions: pq(sha256Hex(Q)) }, { query: Q, extensions: pq(sha256Hex(Q)) }]) {
      expect(await resolveOperation(params, 'allowlist', manifest, reg)).toMatchObject({ ok: false, status: 400, code: 'PERSISTED_QUERY_NOT_ALLOWED' });
    }
  });

  it.each(['allowlist', 'apq'] as const)("%s: takes a manifest operation's id with the text Apollo Client's cache sends (`__typename` added), and nothing else beside it (generated)", async (mode) => {
    const ops = [...manifest];
    const reg = new LruRegistry();
    for (const [hash, text] of ops) {
      const apollo = print(addTypenameToDocument(parse(text)));
      expect(apollo).not.toBe(text);
      expect(await resolveOperation({ query: apollo, extensions: pq(hash) }, mode, manifest, reg)).toEqual({ ok: true, text: apollo });
    }
    // Any other change to the text, with a manifest id: a mismatch, never run.
    const edit = fc.oneof(
      fc.constant((t: string) => t.replace('{', '{ __schema { types { name } } ')),
      fc.constant((t: string) => t.replace(/\bid\b/, 'id __typename: name')),
      fc.constant((t: string) => t.replace('{', '{ __typename @include(if: true) ')),
      fc.constant((t: string) => `${t} query Extra { __typename }`),
      fc.stringMatching(/^[a-z]{1,8}$/).map((field) => (t: string) => t.replace(/\b(id|seq)\b/, `$1 ${field}`)),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ops), edit, async ([hash, text], change) => {
        const changed = change(print(addTypenameToDocument(parse(text))));
        const got = await resolveOperation({ query: changed, extensions: pq(hash) }, mode, manifest, reg);
        expect(got).toMatchObject({ ok: false, status: 400, code: 'PERSISTED_QUERY_HASH_MISMATCH' });
      }),
    );
  });

  it("runs a manifest operation's text however it is laid out, with or without `__typename` (a contract file as it stands, a client's printer), and no other text (generated)", async () => {
    const ops = [...manifest.values()];
    const reg = new LruRegistry();
    const layout = fc.oneof(
      fc.constant((t: string) => `${t}\n`), // the contract's .graphql file, final newline and all
      fc.constant((t: string) => t.replace(/\s+/g, ' ')), // one line
      fc.constant((t: string) => `# a comment\n${t.replace(/\n/g, ',\n')}`), // commas and comments are insignificant
      fc.constant((t: string) => print(addTypenameToDocument(parse(t)))), // Apollo Client and urql without the manifest
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ops), layout, async (text, lay) => {
        const sent = lay(text);
        expect(await resolveOperation({ query: sent }, 'allowlist', manifest, reg)).toEqual({ ok: true, text: sent });
        // With the id of the text as sent (a client that hashes its own file, as APQ does): the same.
        expect(await resolveOperation({ query: sent, extensions: pq(sha256Hex(sent)) }, 'allowlist', manifest, reg)).toEqual({ ok: true, text: sent });
        // That id alone names nothing the allowlist holds, unless it is the printed text's.
        if (sha256Hex(sent) !== sha256Hex(text))
          expect(await resolveOperation({ extensions: pq(sha256Hex(sent)) }, 'allowlist', manifest, reg)).toMatchObject({
            ok: false,
            code: 'PERSISTED_QUERY_NOT_ALLOWED',
            message: expect.stringContaining('as graphql-js prints it'),
          });
      }),
    );
    const edit = fc.oneof(
      fc.constant((t: string) => t.replace('{', '{ __schema { types { name } } ')),
      fc.constant((t: string) => t.replace(/\bid\b/, 'id __typename: name')),
      fc.constant((t: string) => t.replace(/\bid\b/, 'id __typename @include(if: true)')),
      fc.constant((t: string) => `${t} query Extra { __typename }`),
      fc.stringMatching(/^[a-z]{1,8}$/).map((field) => (t: string) => t.replace(/\b(id|seq)\b/, `$1 ${field}`)),
      fc.constant((t: string) => t.repeat(3)),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ops), edit, async (text, change) => {
        const got = await resolveOperation({ query: change(text) }, 'allowlist', manifest, reg);
        expect(got).toMatchObject({ ok: false, status: 400, code: 'PERSISTED_QUERY_NOT_ALLOWED' });
      }),
    );
  });
});

import type { Middleware } from 'openapi-fetch';
import { LRUCache } from 'lru-cache';

interface Entry {
  etag: string;
  status: number;
  headers: [string, string][];
  body: string;
}

/**
 * A private HTTP cache for the client (RFC 9111 in miniature): remembers GET
 * responses that carry an ETag and revalidates them with If-None-Match; a 304 is
 * answered from the cache as the 200 it stands for. Keyed by URL and the request
 * headers the server varies on (Accept, Api-Version), bounded by lru-cache (least
 * recently used entries go first).
 *
 * `maxEntries` 0 turns it off and leaves revalidation to the platform's HTTP cache. In a
 * browser on another origin that is the cheaper choice: a request the page sends with
 * If-None-Match gets the Fetch standard's "no-store" cache mode, and Chromium then skips
 * its CORS preflight cache, so every revalidation pays a preflight; a plain GET lets the
 * browser's cache revalidate on the wire itself (the same 304s) under one cached preflight
 * per URL (test/browser/preflight.browser.test.ts).
 */
export class EtagCache {
  private readonly entries: LRUCache<string, Entry> | undefined;
  /** Revalidations answered 304 (for tests and metrics). */
  hits = 0;

  constructor(maxEntries = 500) {
    // lru-cache refuses max 0; no cache at all is what 0 means here.
    this.entries = maxEntries > 0 ? new LRUCache<string, Entry>({ max: maxEntries }) : undefined;
  }

  /** How many responses are held now. */
  get size(): number {
    return this.entries?.size ?? 0;
  }

  private key(req: Request): string {
    return `${req.url}\n${req.headers.get('accept') ?? ''}\n${req.headers.get('api-version') ?? ''}`;
  }

  /** Drops what is cached for a URL (all variants), e.g. after a write. */
  invalidate(url: string): void {
    const entries = this.entries;
    if (entries) for (const k of [...entries.keys()]) if (k.startsWith(`${url}\n`)) entries.delete(k);
  }

  middleware(): Middleware {
    const entries = this.entries;
    if (!entries) return { onRequest: () => undefined };
    return {
      onRequest: ({ request }) => {
        if (request.method !== 'GET' || request.headers.has('if-none-match')) return undefined;
        const hit = entries.peek(this.key(request));
        if (!hit) return undefined;
        const headers = new Headers(request.headers);
        headers.set('if-none-match', hit.etag);
        return new Request(request, { headers });
      },
      onResponse: async ({ request, response }) => {
        const key = this.key(request);
        if (request.method !== 'GET') {
          if (response.ok) this.invalidate(request.url);
          return undefined;
        }
        if (response.status === 304) {
          const hit = entries.get(key); // get: marks it most recently used
          if (!hit) return undefined;
          this.hits++;
          return new Response(hit.body, { status: hit.status, headers: hit.headers });
        }
        const etag = response.headers.get('etag');
        if (response.status === 200 && etag) {
          const body = await response.clone().text();
          entries.set(key, { etag, status: 200, headers: [...response.headers.entries()], body });
        }
        return undefined;
      },
    };
  }
}

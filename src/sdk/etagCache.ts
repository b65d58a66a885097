import type { Middleware } from 'openapi-fetch';

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
 * headers the server varies on (Accept, Api-Version), bounded LRU.
 */
export class EtagCache {
  private readonly entries = new Map<string, Entry>();
  /** Revalidations answered 304 (for tests and metrics). */
  hits = 0;

  constructor(private readonly maxEntries = 500) {}

  private key(req: Request): string {
    return `${req.url}\n${req.headers.get('accept') ?? ''}\n${req.headers.get('api-version') ?? ''}`;
  }

  /** Drops what is cached for a URL (all variants), e.g. after a write. */
  invalidate(url: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(`${url}\n`)) this.entries.delete(k);
  }

  middleware(): Middleware {
    return {
      onRequest: ({ request }) => {
        if (request.method !== 'GET' || request.headers.has('if-none-match')) return undefined;
        const hit = this.entries.get(this.key(request));
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
          const hit = this.entries.get(key);
          if (!hit) return undefined;
          this.hits++;
          this.entries.delete(key);
          this.entries.set(key, hit); // most recently used
          return new Response(hit.body, { status: hit.status, headers: hit.headers });
        }
        const etag = response.headers.get('etag');
        if (response.status === 200 && etag) {
          const body = await response.clone().text();
          this.entries.set(key, { etag, status: 200, headers: [...response.headers.entries()], body });
          if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
        }
        return undefined;
      },
    };
  }
}

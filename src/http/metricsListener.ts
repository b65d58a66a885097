/**
 * The operator listener: `GET /metrics` (Prometheus text), on a port of its own
 * (`METRICS_HOST`, default 127.0.0.1, and `METRICS_PORT`), never on the public one. Metrics
 * name accounts (`orderline_deprecated_field_reads_total{account=...}`), so only operators
 * reach them: loopback by default, and a bearer token (`METRICS_TOKEN`) when it is set,
 * which the configuration requires off loopback.
 *
 * A few lines of node:http rather than a second pipeline: one path, two methods (GET, HEAD),
 * and problem+json for everything else, from the same problem writer as the public port
 * (without its request id, CORS and log line: operators, not clients, call it). A refused
 * request is told to `onRefused` (`refusalLog`: a warning, at most one per 5 s), so failed
 * scrape logins and scanners of the operator port leave a trace.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { throttle } from '../logger';
import { bearerTokenOf } from './auth';
import { loggedPath } from './finalize';
import { PROBLEM_MEDIA_TYPE, refusal, STORE_RETRY_AFTER_S, type Refusal } from './problem';
import { problemText } from './respond';

export const METRICS_PATH = '/metrics';

export interface MetricsListenerOptions {
  /** The exposition text of one scrape (this process's registry, or a cluster's aggregate). */
  scrape: () => Promise<string>;
  /** prom-client's exposition content type. */
  contentType: string;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token?: string;
  /** Told why a scrape could not be collected (answered 503). */
  onError?: (err: unknown) => void;
  /** Told of each request refused (404, 405, 401). */
  onRefused?: (refused: MetricsRefusal) => void;
}

/** A refused request to the operator port, as logged. */
export interface MetricsRefusal {
  status: number;
  method: string | undefined;
  path: string;
  remoteAddress: string | undefined;
}

/** `onRefused` as a warning in the log: the first, then at most one per `everyMs`, with how many it stands for (`suppressed`). */
export function refusalLog(logger: { warn(fields: object, message: string): void }, everyMs = 5000): (refused: MetricsRefusal) => void {
  const gate = throttle(everyMs);
  return (refused) => {
    const passed = gate();
    if (passed) logger.warn({ ...refused, ...passed }, 'metrics request refused');
  };
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

function refuse(res: ServerResponse, r: Refusal): void {
  const body = problemText(r);
  res.writeHead(r.problem.status, { ...r.headers, 'Content-Type': PROBLEM_MEDIA_TYPE, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(body);
}

export function metricsListener(opts: MetricsListenerOptions): RequestListener {
  // Compared as SHA-256 digests with timingSafeEqual: equal lengths, no early exit on the first differing byte.
  const expected = opts.token === undefined ? undefined : digest(opts.token);
  const authorized = (req: IncomingMessage): boolean => {
    if (!expected) return true;
    const sent = bearerTokenOf(req.headers.authorization, undefined);
    return sent !== undefined && timingSafeEqual(digest(sent), expected);
  };

  return function serveMetrics(req, res) {
    const path = (req.url ?? '').split('?')[0];
    const refused = (r: Refusal): void => {
      opts.onRefused?.({ status: r.problem.status, method: req.method, path: loggedPath(path), remoteAddress: req.socket.remoteAddress });
      refuse(res, r);
    };
    if (path !== METRICS_PATH) return refused(refusal('NOT_FOUND', `This listener serves ${METRICS_PATH} only`));
    if (req.method !== 'GET' && req.method !== 'HEAD') return refused(refusal('METHOD_NOT_ALLOWED', undefined, { Allow: 'GET, HEAD' }));
    if (!authorized(req)) return refused(refusal('UNAUTHORIZED', 'Metrics need the operator token (METRICS_TOKEN)', { 'WWW-Authenticate': 'Bearer realm="metrics"' }));
    opts.scrape().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': opts.contentType, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        opts.onError?.(err);
        refuse(res, refusal('SERVICE_UNAVAILABLE', 'Metrics could not be collected', { 'Retry-After': String(STORE_RETRY_AFTER_S) }));
      },
    );
  };
}

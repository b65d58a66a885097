/**
 * The HTTP capability's public face: what the rest of the service (app composition,
 * main, realtime, GraphQL, tests) may use. The request pipeline (pipeline.ts) and its
 * stages live beside this file; the REST binding of contracts/openapi.yaml lives in `rest/`.
 */
export { bearerTokenOf, missingToken, resolveToken, streamToken } from './auth';
export { AuthCache } from './authCache';
export { answerExpectations, DEFAULT_BODY_LIMIT, dropRequestBody, MAX_JSON_DEPTH, parseClientJson, readRequestText, sendsBody } from './body';
export { parseCorsOrigins } from './cors';
export { Drain, DRAIN_GRACE_MS, SHUTDOWN_RETRY_AFTER_S, shuttingDown } from './drain';
export { Finalizer, requestIdFor, requestIdOf, splitTarget, type Exchange } from './finalize';
export { koaShell } from './koaShell';
export { HttpTimer, Metrics } from './metrics';
export { instanceScrape, lendRegistryToPrimary } from './clusterMetrics';
export { FieldReadTally, OTHER_ACCOUNTS, startFieldReadFlusher } from './fieldReads';
export { metricsListener, METRICS_PATH } from './metricsListener';
export { authenticator, createPipeline, type TransportRoute } from './pipeline';
export { isRefusal, problem, PROBLEM_MEDIA_TYPE, refusal, refusalOf, type Problem, type ProblemCode, type Refusal } from './problem';
export { rateLimiter, type RateLimiter } from './rateLimit';
export { connectionClosing, NOT_RUN, problemText, send, sendProblem } from './respond';
export { answerClientErrors, ignoreUpgrade, isWebSocketHandshake, refuseOnSocket, writeRefusal, type RawAnswerLog } from './upgrade';
export { framingRefusal } from './framing';
export { contentTag, notModified, readMatches, writePreconditions } from './conditional';
export { createHttpServer } from './server';
export { orderReads, restOperations, type OrderReads, type RestDeps, type HandlerContext, type AccountContext } from './rest';
export { startIdempotencySweeper } from './rest/idempotency';
export { acceptsType } from './rest/negotiate';
export { decodePathSegment } from './rest/operations';

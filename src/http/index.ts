/**
 * The HTTP capability's public face: what the rest of the service (app composition,
 * main, realtime, GraphQL, tests) may use. The request pipeline (pipeline.ts) and its
 * stages live beside this file; the REST binding of contracts/openapi.yaml lives in `rest/`.
 */
export { missingToken, resolveToken, streamToken } from './auth';
export { AuthCache } from './authCache';
export { DEFAULT_BODY_LIMIT, dropRequestBody, parseClientJson, readRequestText, sendsBody } from './body';
export { parseCorsAllowHeaders, parseCorsOrigins } from './cors';
export { Drain, DRAIN_GRACE_MS, shuttingDown } from './drain';
export { Finalizer, noteArrival, requestIdOf, splitTarget, type Exchange } from './finalize';
export { koaShell, unreachableRoutes, type UnreachableRoute } from './koaShell';
export { HttpTimer, Metrics } from './metrics';
export { instanceScrape, lendRegistryToPrimary } from './clusterMetrics';
export { FieldReadTally, OTHER_ACCOUNTS, startFieldReadFlusher } from './fieldReads';
export { metricsListener, refusalLog } from './metricsListener';
export { authenticator, createPipeline, type TransportRoute } from './pipeline';
export { isRefusal, problem, PROBLEM_MEDIA_TYPE, refusal, refusalOf, type Problem, type ProblemCode, type Refusal } from './problem';
export { rateLimiter, type RateLimiter } from './rateLimit';
export { connectionClosing, NOT_RUN, send, sendProblem } from './respond';
export { afterPendingResponses, ignoreUpgrade, isWebSocketHandshake, responseOn, writeRefusal, type RawAnswerLog } from './upgrade';
export { framingRefusal } from './framing';
export { contentTag, judgeRead, notModified, writePreconditions } from './conditional';
export { createHttpServer } from './server';
export { orderReads, restOperations, type OrderReads, type RestDeps, type HandlerContext, type AccountContext } from './rest';
export { startIdempotencySweeper } from './rest/idempotency';
export { acceptsType } from './rest/negotiate';
export { decodePathSegment } from './rest/operations';
export { readQuery, type Query } from './query';

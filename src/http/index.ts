/**
 * The HTTP edge's public face: what the rest of the service (app composition, main,
 * realtime, tests) may use. Cross-cutting middleware lives beside this file; the REST
 * binding of contracts/openapi.yaml lives in `rest/`.
 */
export { accountForToken, authenticate, authenticateRequest, bearerToken, bearerTokenOf, cachedAccount } from './auth';
export { AuthCache } from './authCache';
export { DEFAULT_BODY_LIMIT, readRequestText } from './body';
export { corsMiddleware, parseCorsOrigins, simpleCors } from './cors';
export { EdgeEssentials, edgeListener, type EdgeRoute } from './edge';
export { HttpTimer, Metrics, metricsMiddleware } from './metrics';
export { scrapeWholeInstance, serveInstanceMetrics } from './clusterMetrics';
export { HttpProblem, httpProblem, problem, PROBLEM_MEDIA_TYPE, PROBLEMS, type Problem, type ProblemCode } from './problem';
export { problemMiddleware } from './problemMiddleware';
export { writeProblem } from './problemResponse';
export { rateLimit, rateLimiter, rateLimitHeaders, type RateLimiter, type RateLimitDecision } from './rateLimit';
export { requestLog } from './requestLog';
export { orderReadRoute, orderReads, restRouter, type OrderReads, type RestDeps, type HandlerContext } from './rest';
export { startIdempotencySweeper } from './rest/idempotency';
export { acceptsType } from './rest/negotiate';

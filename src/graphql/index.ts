/** The GraphQL capability: /graphql, its validation rules, persisted operations. */
export { graphqlEngine, GRAPHQL_PATH, type GraphqlEngine, type GraphqlEngineDeps, type GraphqlLimits } from './engine';
export { graphqlRoute } from './route';
export { graphqlSubscriptions } from './subscriptions';
export { LruRegistry, isPeekable, type PeekableRegistry, type PersistedQueryRegistry } from './registry';
export { RedisRegistry, type RedisKv, type RedisRegistryOptions } from './redisRegistry';
export { GRAPHQL_CODES } from './errors';
export { sha256Hex } from './persisted';
export { costBudget, type CostBudget, type CostExtension } from './costBudget';

/**
 * `@orderline/sdk`: the REST, GraphQL and realtime clients of orderline, typed from its
 * contracts. Each is also its own entry (`@orderline/sdk/rest`, `/graphql`,
 * `/realtime`) for apps that want only one.
 *
 * @packageDocumentation
 */
export * from './rest.js';
export * from './graphql.js';
export * from './realtime.js';

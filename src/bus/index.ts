/** The bus capability's public entry: the port and its adapters. */
export type { Bus, BusHandlers } from './bus';
export { MemoryBus } from './memory';
export { DeploymentClashError, RedisBus, connectRedis, type RedisBusOptions } from './redis';

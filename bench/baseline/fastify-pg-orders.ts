/** Peer: fastify-peer.ts on PostgreSQL (peer-pg.ts: PEER_DATABASE_URL, its own PEER_DATABASE_SCHEMA, pg.Pool). */
import { run, serveFastifyPeer } from './fastify-peer';
import { openPgPeerStore } from './peer-pg';

run(async () => serveFastifyPeer(await openPgPeerStore()));

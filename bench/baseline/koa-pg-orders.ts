/** Peer: koa-peer.ts on PostgreSQL (peer-pg.ts: PEER_DATABASE_URL, its own PEER_DATABASE_SCHEMA, pg.Pool). */
import { serveKoaPeer } from './koa-peer';
import { openPgPeerStore } from './peer-pg';

openPgPeerStore().then(serveKoaPeer, (err) => {
  console.error(err);
  process.exit(1);
});

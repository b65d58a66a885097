/** Peer: koa-peer.ts on its own SQLite file in DATA_DIR (peer-data.ts). */
import { serveKoaPeer } from './koa-peer';
import { openPeerStore } from './peer-data';

serveKoaPeer(openPeerStore());

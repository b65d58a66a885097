/** Peer: fastify-peer.ts on its own SQLite file in DATA_DIR (peer-data.ts). */
import { run, serveFastifyPeer } from './fastify-peer';
import { openPeerStore } from './peer-data';

run(() => serveFastifyPeer(openPeerStore()));

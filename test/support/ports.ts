import { createServer } from 'node:net';

/** A port that was free a moment ago: listen on 0, note the port, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      if (address === null || typeof address === 'string') return srv.close(() => reject(new Error('no TCP address')));
      srv.close(() => resolve(address.port));
    });
  });
}

import fc from 'fast-check';
import { LOGGED_PATH_CHARS, loggedPath } from './finalize';

describe('loggedPath', () => {
  it('keeps a path whole up to the bound, else its start and its length: a log line stays short, whatever the client sends (generated)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3 * LOGGED_PATH_CHARS }), (path) => {
        const logged = loggedPath(path);
        if (path.length <= LOGGED_PATH_CHARS) expect(logged).toBe(path);
        else expect(logged).toBe(`${path.slice(0, LOGGED_PATH_CHARS)}... (${path.length} characters)`);
        expect(logged.length).toBeLessThanOrEqual(LOGGED_PATH_CHARS + 40);
      }),
    );
  });
});

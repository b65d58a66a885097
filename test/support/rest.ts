/** Request options the REST integration tests share. */
export const json = (body: unknown, extra: Record<string, string> = {}) => ({
  headers: { 'content-type': 'application/json', ...extra },
  body: JSON.stringify(body),
});

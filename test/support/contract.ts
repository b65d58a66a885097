/**
 * Validates a live response against contracts/openapi.yaml through the generated route
 * table: the status must be declared for the operation, and a JSON body must match the
 * schema declared for its status and media type.
 */
import { routes } from '../../generated/openapi/routes';
import type { OperationId } from '../../generated/openapi/handlers';

export async function expectContract(operationId: OperationId, res: Response): Promise<unknown> {
  const spec = routes.find((r) => r.operationId === operationId);
  if (!spec) throw new Error(`unknown operation ${operationId}`);
  const declared = spec.responses[String(res.status)];
  if (!declared) throw new Error(`${operationId}: status ${res.status} is not in the contract (declared: ${Object.keys(spec.responses).join(', ')})`);
  const text = await res.text();
  if (spec.method === 'HEAD' || res.status === 304) {
    if (text !== '') throw new Error(`${operationId}: ${res.status} ${spec.method} must have no body, got ${text.length} bytes`);
    return undefined;
  }
  const ct = (res.headers.get('content-type') ?? '').replace(/;\s*charset=utf-8$/i, '');
  const key = Object.keys(declared).find((k) => k.replace(/\s/g, '') === ct.replace(/\s/g, ''));
  if (Object.keys(declared).length > 0 && !key) throw new Error(`${operationId}: ${res.status} Content-Type ${ct} not declared (${Object.keys(declared).join(', ')})`);
  const body = text === '' ? undefined : JSON.parse(text);
  if (key) {
    const validate = declared[key];
    if (!validate(body)) throw new Error(`${operationId}: ${res.status} ${key} body violates the contract: ${JSON.stringify(validate.errors)}\n${text}`);
  }
  return body;
}

/**
 * Which realtime messages a client sends is read from the contract's `send` operations, as
 * the compatibility gate reads it: a message a developer adds there is validated as a client
 * message, not typed as one the server sends. codegen runs on a copy (openapi-typescript,
 * which it imports, is ESM-only under jest).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';

type Doc = {
  channels: Record<string, { messages: Record<string, unknown> }>;
  operations: Record<string, { messages: unknown[] }>;
  components: { messages: Record<string, unknown> };
};

it('a message added to the send operation is a ClientMessage', async () => {
  const root = join(__dirname, '..');
  const dir = mkdtempSync(join(tmpdir(), 'orderline-client-messages-'));
  try {
    cpSync(join(root, 'contracts'), join(dir, 'contracts'), { recursive: true });
    const file = join(dir, 'contracts/asyncapi.yaml');
    const doc = YAML.parse(readFileSync(file, 'utf8')) as Doc;
    doc.components.messages.PingMessage = { name: 'PingMessage', payload: { type: 'object', required: ['type'], properties: { type: { type: 'string', const: 'ping' } } } };
    doc.channels.orders.messages.ping = { $ref: '#/components/messages/PingMessage' };
    doc.operations.sendSubscription.messages.push({ $ref: '#/channels/orders/messages/ping' });
    writeFileSync(file, YAML.stringify(doc));
    await promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', join(root, 'codegen/index.ts'), '--root', dir, '--no-docs'], { cwd: root });
    const messages = readFileSync(join(dir, 'generated/asyncapi/messages.ts'), 'utf8');
    expect(/export type ClientMessage = ([^;]*);/.exec(messages)?.[1]).toBe('PingMessage | SubscribeMessage | UnsubscribeMessage');
    expect(/export type ServerMessage = ([^;]*);/.exec(messages)?.[1]).not.toContain('PingMessage');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);

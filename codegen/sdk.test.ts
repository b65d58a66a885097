import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { GRAPHQL_CODES } from '../src/graphql/errors';
import { PROBLEMS } from '../src/http/problem';
import { CLOSE_GOING_AWAY, CLOSE_POLICY, CLOSE_TRY_AGAIN, ERROR_CODES } from '../src/realtime/ws';
import { RESYNC_REASONS } from '../src/realtime/frames';
import { openEnums } from './sdk';

const contract = YAML.parse(readFileSync(join(__dirname, '../contracts/openapi.yaml'), 'utf8')) as Parameters<typeof openEnums>[0] & {
  components: { schemas: { Problem: { properties: { code: { 'x-extensible-enum': string[] } } } } };
};

const realtime = YAML.parse(readFileSync(join(__dirname, '../contracts/asyncapi.yaml'), 'utf8')) as {
  components: { messages: Record<string, { payload: { properties: Record<string, { 'x-extensible-enum'?: string[] }> } }> };
};
const listOf = (message: string, property: string) => realtime.components.messages[message].payload.properties[property]['x-extensible-enum'];

describe("the SDK's open sets", () => {
  it("list exactly the problem codes the server sends (the contract's x-extensible-enum of Problem.code)", () => {
    expect([...contract.components.schemas.Problem.properties.code['x-extensible-enum']].sort()).toEqual(Object.keys(PROBLEMS).sort());
  });

  it("list exactly the realtime error codes and resync reasons the server sends (the contract's x-extensible-enum lists)", () => {
    expect([...(listOf('ErrorMessage', 'code') ?? [])].sort()).toEqual([...ERROR_CODES].sort());
    expect([...(listOf('ResyncMessage', 'reason') ?? [])].sort()).toEqual([...RESYNC_REASONS].sort());
  });

  it('the /orders channel lists every close code the server closes with (x-close-codes), and only those', () => {
    const channel = (realtime as unknown as { channels: Record<string, { 'x-close-codes'?: Record<string, string> }> }).channels['orders'];
    // The service's own, and the ws library's for a message over maxPayload (1009) and broken frames (1002, 1007).
    const sent = [CLOSE_GOING_AWAY, CLOSE_POLICY, CLOSE_TRY_AGAIN, 1009, 1002, 1007];
    expect(
      Object.keys(channel['x-close-codes'] ?? {})
        .map(Number)
        .sort(),
    ).toEqual([...sent].sort());
  });

  it("list every extensions.code the server's /graphql sends (GraphqlErrorCode)", () => {
    const text = readFileSync(join(__dirname, '../sdk/src/errors.ts'), 'utf8');
    const union = /export type GraphqlErrorCode =([^;]*);/.exec(text)?.[1] ?? '';
    const listed = [...union.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]).sort();
    expect(listed).toEqual(Object.values(GRAPHQL_CODES).sort());
  });

  it('become named open unions: known values plus (string & {})', () => {
    expect(openEnums(contract.components.schemas)).toContain('export type OrderStatus = "pending" | "paid" | "shipped" | "delivered" | "cancelled" | (string & {});');
    expect(openEnums({ ResyncMessage: realtime.components.messages.ResyncMessage.payload })).toContain('export type ResyncMessageReason = "gap_too_old" | "since_ahead" | (string & {});');
    expect(openEnums(contract.components.schemas)).toMatch(/export type ProblemCode = "BAD_REQUEST" \|[^\n]*"PRECONDITION_REQUIRED"[^\n]*\| \(string & \{\}\);/);
  });
});

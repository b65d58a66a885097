/**
 * An event's wire forms, built once per event and shared by every subscriber
 * (centrifuge's prepared messages): the JSON payload, the SSE frame, and the WebSocket
 * text frame with its header. Writing the same Buffer to ten thousand sockets costs no
 * serialization or framing per socket.
 */
import * as wsModule from 'ws';
import type { OrderEvent } from '../store';
import { parseOrderId, toV2 } from '../orders';
import type { OrderEventMessage, ResyncMessage, ServerMessage } from '../../generated/asyncapi/messages';

/** ws's framer: exported by the package at run time, absent from @types/ws. */
const { Sender } = wsModule as unknown as {
  Sender: { frame(data: Buffer, options: { fin: boolean; rsv1: boolean; opcode: number; mask: boolean; readOnly: boolean }): Buffer[] };
};

export const topicOf = (orderId: number): string => `order:${orderId}`;

/**
 * A stream position as a client sends it back (SSE Last-Event-ID, WebSocket `?since=`):
 * 0 (before the first event), or a revision in the order id's canonical form and bound
 * (a revision counts an order's writes: a positive safe integer, like the id). One
 * rule for both transports; null for anything else.
 */
export function parseSeq(text: string): number | null {
  return text === '0' ? 0 : parseOrderId(text);
}

/** `parseSeq` as a test, for callers that check the text before they read it. */
export const SEQ_TEXT: Pick<RegExp, 'test'> = { test: (text: string) => parseSeq(text) !== null };

export interface Frame {
  seq: number;
  /** The committed event it was built from (order events; other transports render it their own way, e.g. GraphQL). */
  event?: OrderEvent;
  /** `id:`, `event:`, `data:` and the blank line. */
  sse: Buffer;
  /** A complete unmasked WebSocket text frame (header + payload). */
  ws: Buffer;
}

export function eventMessage(event: OrderEvent): OrderEventMessage {
  return { type: event.type, channel: topicOf(event.orderId), seq: event.seq, status: event.order.status, order: toV2(event.order, '/orders') };
}

export function resyncMessage(orderId: number, seq: number, reason: ResyncMessage['reason']): ResyncMessage {
  return { type: 'resync', channel: topicOf(orderId), seq, reason };
}

/** One server-to-client frame as a WebSocket text frame, framed once (ws's own framer, unmasked: server side). */
export function wsFrame(payload: string | Buffer): Buffer {
  const data = typeof payload === 'string' ? Buffer.from(payload) : payload;
  return Buffer.concat(Sender.frame(data, { fin: true, rsv1: false, opcode: 1, mask: false, readOnly: true }));
}

/** `id:` (when given), `event:` and `data:` of one SSE event, from the message's JSON. */
const sseText = (type: string, json: string, id: number | null | undefined): Buffer => Buffer.from(`${id == null ? '' : `id: ${id}\n`}event: ${type}\ndata: ${json}\n\n`);

export function sseFrame(message: ServerMessage, id?: number): Buffer {
  return sseText(message.type, JSON.stringify(message), id);
}

export function frameOf(message: ServerMessage & { seq: number | null }, event?: OrderEvent): Frame {
  const json = JSON.stringify(message); // once, for both wire forms
  return { seq: message.seq ?? 0, event, sse: sseText(message.type, json, message.seq), ws: wsFrame(json) };
}

/** A committed event's frame: its wire forms and the event itself. */
export const eventFrame = (event: OrderEvent): Frame => frameOf(eventMessage(event), event);

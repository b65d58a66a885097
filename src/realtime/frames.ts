/**
 * An event's wire forms, built once per event and shared by every subscriber
 * (centrifuge's prepared messages): the JSON payload, the SSE frame, and the WebSocket
 * text frame with its header. Writing the same Buffer to ten thousand sockets costs no
 * serialization or framing per socket.
 */
import type { OrderEvent } from '../store';
import { parseOrderId, toV2 } from '../orders';
import type { OrderEventMessage, ResyncMessage, ServerMessage } from '../../generated/asyncapi/messages';

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

/** What a position must be, for the refusals that name it (SSE Last-Event-ID, WebSocket `since`). */
export const SEQ_RULE = 'an integer from 0 to 2^53 - 1';

/** `parseSeq` as a test, for callers that check the text before they read it. */
export const SEQ_TEXT: Pick<RegExp, 'test'> = { test: (text: string) => parseSeq(text) !== null };

export interface Frame {
  seq: number;
  /** The message's `type` (the SSE `event:` name). */
  type: string;
  /** The message as JSON text: what a replay needs to frame it again (ring.ts keeps only this). */
  json: string;
  /**
   * The committed event it was built from, on live frames only (a replayed frame has its
   * JSON alone): other transports render it their own way (GraphQL subscriptions).
   */
  event?: OrderEvent;
  /** `id:`, `event:`, `data:` and the blank line. */
  sse: Buffer;
  /** `sse` as one HTTP/1.1 chunk (size line, the event, CRLF): what a chunked SSE response writes to its socket (sse.ts). */
  sseChunk: Buffer;
  /** A complete unmasked WebSocket text frame (header + payload). */
  ws: Buffer;
}

export function eventMessage(event: OrderEvent): OrderEventMessage {
  return { type: event.type, channel: topicOf(event.orderId), seq: event.seq, status: event.order.status, order: toV2(event.order, '/orders') };
}

/**
 * The `resync` reasons this server sends: the contract's `x-extensible-enum` of
 * ResyncMessage.reason (open for clients, closed here; a test keeps the two equal).
 */
export const RESYNC_REASONS = ['gap_too_old', 'since_ahead'] as const;
export type ResyncReason = (typeof RESYNC_REASONS)[number];

export function resyncMessage(orderId: number, seq: number, reason: ResyncReason): ResyncMessage {
  return { type: 'resync', channel: topicOf(orderId), seq, reason };
}

const NOTHING = Buffer.alloc(0);

/** One server-to-client frame as a WebSocket text frame, framed once (unmasked: server side; `wsTextFrame`). */
export function wsFrame(payload: string | Buffer): Buffer {
  return wsTextFrame(NOTHING, typeof payload === 'string' ? Buffer.from(payload) : payload);
}

/**
 * A text frame whose payload is `prefix` then `body`, in one buffer: the header written
 * here (RFC 6455 5.2: FIN, opcode 1, unmasked as a server sends; the 7-, 16- or 64-bit
 * length) and each part copied once. For messages that differ per socket only in a short
 * prefix (a GraphQL subscription's `{"id":...}`): the shared body is encoded once per
 * event, and a socket costs one copy of it instead of a string concatenation, a UTF-8
 * encoding and a frame joined again. The one WebSocket framer of the service (`wsFrame`
 * frames a whole message with it); frames.test.ts checks its bytes against what ws itself
 * sends, for every length encoding.
 */
export function wsTextFrame(prefix: Buffer, body: Buffer): Buffer {
  const length = prefix.length + body.length;
  const headerLength = length < 126 ? 2 : length < 0x10000 ? 4 : 10;
  const out = Buffer.allocUnsafe(headerLength + length);
  out[0] = 0x81; // FIN, text
  if (length < 126) out[1] = length;
  else if (length < 0x10000) {
    out[1] = 126;
    out.writeUInt16BE(length, 2);
  } else {
    out[1] = 127;
    out.writeUInt32BE(Math.floor(length / 0x100000000), 2);
    out.writeUInt32BE(length >>> 0, 6);
  }
  prefix.copy(out, headerLength);
  body.copy(out, headerLength + prefix.length);
  return out;
}

/** `id:` (when given), `event:` and `data:` of one SSE event, from the message's JSON. */
const sseText = (type: string, json: string, id: number | null | undefined): Buffer => Buffer.from(`${id == null ? '' : `id: ${id}\n`}event: ${type}\ndata: ${json}\n\n`);

/** Bytes as one chunk of a chunked HTTP/1.1 body (RFC 9112 7.1): hex size, CRLF, the bytes, CRLF; in one buffer. */
export function httpChunk(bytes: Buffer): Buffer {
  const size = `${bytes.length.toString(16)}\r\n`;
  const out = Buffer.allocUnsafe(size.length + bytes.length + 2);
  out.write(size, 0, 'latin1');
  bytes.copy(out, size.length);
  out.write('\r\n', size.length + bytes.length, 'latin1');
  return out;
}

export function sseFrame(message: ServerMessage, id?: number): Buffer {
  return sseText(message.type, JSON.stringify(message), id);
}

export function frameOf(message: ServerMessage & { seq: number | null }, event?: OrderEvent): Frame {
  const json = JSON.stringify(message); // once, for both wire forms
  const sse = sseText(message.type, json, message.seq);
  return { seq: message.seq ?? 0, type: message.type, json, event, sse, sseChunk: httpChunk(sse), ws: wsFrame(json) };
}

/**
 * A frame framed again from what the replay ring keeps (seq, type, JSON text): each wire
 * form is built when first read and only then, so a replay to an SSE client frames SSE
 * alone. The prepared forms pay off for live delivery (one event, many sockets); a
 * replay goes to one subscriber, and keeping both forms per stored event would cost
 * about three times the JSON in memory (bench/ring-memory.ts).
 */
export class ReplayedFrame implements Frame {
  private sseBytes: Buffer | undefined;
  private wsBytes: Buffer | undefined;

  constructor(
    readonly seq: number,
    readonly type: string,
    readonly json: string,
  ) {}

  get sse(): Buffer {
    return (this.sseBytes ??= sseText(this.type, this.json, this.seq));
  }

  get sseChunk(): Buffer {
    return httpChunk(this.sse); // a replay goes to one subscriber: not kept
  }

  get ws(): Buffer {
    return (this.wsBytes ??= wsFrame(this.json));
  }
}

/** A committed event's frame: its wire forms and the event itself. */
export const eventFrame = (event: OrderEvent): Frame => frameOf(eventMessage(event), event);

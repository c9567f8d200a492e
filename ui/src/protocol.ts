// The UI protocol as the core speaks it (paige_core::protocol): every frame is the envelope
// {type, payload, id?, timestamp}; payloads are the generated bindings.

import type { ClientPayloads, ServerPayloads } from "./bindings/protocol";

// Every payload type is generated from the Rust types (ui/src/bindings/protocol.ts); the
// rest of the UI imports them from here.
export type * from "./bindings/protocol";

export type ClientType = keyof ClientPayloads;
export type ServerType = keyof ServerPayloads;

/** One frame as it arrives: known types are typed, others pass through untyped. */
export type ServerFrame = { [T in ServerType]: { type: T; payload: ServerPayloads[T]; id?: string; timestamp: number } }[ServerType];

export interface AnyFrame {
  type: string;
  payload: unknown;
  id?: string;
  timestamp: number;
}

export function encodeFrame<T extends ClientType>(type: T, payload: ClientPayloads[T], id?: string): string {
  const frame: AnyFrame = { type, payload, timestamp: Date.now() };
  if (id !== undefined) frame.id = id;
  return JSON.stringify(frame);
}

/** Parses a server frame; `null` for anything that is not an envelope. */
export function decodeFrame(text: string): AnyFrame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v.type !== "string") return null;
  return { type: v.type, payload: v.payload ?? {}, id: typeof v.id === "string" ? v.id : undefined, timestamp: Number(v.timestamp ?? 0) };
}

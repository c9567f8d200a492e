import { describe, expect, it } from "vitest";
import { decodeFrame, encodeFrame } from "../src/protocol";
import { type SocketLike, WsTransport, defaultBackoff } from "../src/transport";

class FakeSocket implements SocketLike {
  readyState = 0;
  sent: string[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  send(data: string): void {
    this.sent.push(data);
  }
  close(): void {
    this.readyState = 3;
    this.onclose?.({});
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
}

function setup(refused?: () => Promise<boolean>) {
  const sockets: FakeSocket[] = [];
  const timers: (() => void)[] = [];
  const transport = new WsTransport({
    refused,
    url: "ws://127.0.0.1:1/ws?token=t",
    hello: () => encodeFrame("connection:hello", { version: "t", platform: "test", windowSize: { width: 1, height: 1 } }),
    connect: () => {
      const s = new FakeSocket();
      sockets.push(s);
      return s;
    },
    setTimer: (fn) => timers.push(fn),
  });
  return { transport, sockets, timers };
}

describe("WsTransport", () => {
  it("queues frames sent before the socket opens and flushes them after hello", () => {
    const { transport, sockets } = setup();
    transport.send("file:open", { path: "a.js" });
    expect(sockets[0]!.sent).toEqual([]);
    sockets[0]!.open();
    const types = sockets[0]!.sent.map((f) => JSON.parse(f).type);
    expect(types).toEqual(["connection:hello", "file:open"]);
  });

  it("delivers server frames to listeners and drops non-envelopes", () => {
    const { transport, sockets } = setup();
    const got: string[] = [];
    transport.onFrame((f) => got.push(f.type));
    sockets[0]!.open();
    sockets[0]!.onmessage!({ data: JSON.stringify({ type: "fs:save_ack", payload: { path: "a", success: true, timestamp: 1 }, timestamp: 1 }) });
    sockets[0]!.onmessage!({ data: "not json" });
    sockets[0]!.onmessage!({ data: JSON.stringify({ payload: {} }) });
    expect(got).toEqual(["fs:save_ack"]);
  });

  it("reconnects after the socket closes and says hello again", () => {
    const { transport, sockets, timers } = setup();
    const states: string[] = [];
    transport.onState((s) => states.push(s));
    sockets[0]!.open();
    sockets[0]!.close();
    expect(timers).toHaveLength(1);
    timers[0]!();
    sockets[1]!.open();
    expect(JSON.parse(sockets[1]!.sent[0]!).type).toBe("connection:hello");
    expect(states).toEqual(["connecting", "open", "closed", "connecting", "open"]);
  });

  it("does not reconnect after close()", () => {
    const { transport, sockets, timers } = setup();
    sockets[0]!.open();
    transport.close();
    expect(timers).toHaveLength(0);
  });

  it("backs off exponentially up to ten seconds", () => {
    expect([0, 1, 2, 10].map(defaultBackoff)).toEqual([500, 1000, 2000, 10000]);
  });
});

describe("frames", () => {
  it("encode the spec's envelope with a timestamp", () => {
    const frame = JSON.parse(encodeFrame("observer:mute", { muted: true }, "42"));
    expect(frame).toMatchObject({ type: "observer:mute", payload: { muted: true }, id: "42" });
    expect(typeof frame.timestamp).toBe("number");
  });

  it("decode fills a missing payload with an empty object", () => {
    expect(decodeFrame('{"type":"explorer:clear_hints","timestamp":5}')).toEqual({ type: "explorer:clear_hints", payload: {}, id: undefined, timestamp: 5 });
  });

  it("stops retrying and says refused when Paige no longer knows the page's token", async () => {
    const { transport, sockets, timers } = setup(async () => true);
    const states: string[] = [];
    transport.onState((s) => states.push(s));
    sockets[0]!.close();
    await Promise.resolve();
    await Promise.resolve();
    expect(states.at(-1)).toBe("refused");
    expect(timers).toHaveLength(0);
  });

  it("keeps retrying while Paige is down or answers the token, and after a drop of an open socket", async () => {
    let asked = 0;
    const { transport, sockets, timers } = setup(async () => {
      asked += 1;
      return false;
    });
    const states: string[] = [];
    transport.onState((s) => states.push(s));
    sockets[0]!.close();
    await Promise.resolve();
    await Promise.resolve();
    expect(asked).toBe(1);
    expect(timers).toHaveLength(1);
    timers[0]!();
    sockets[1]!.open();
    sockets[1]!.close();
    expect(timers).toHaveLength(2);
    expect(asked).toBe(1);
    expect(states).not.toContain("refused");
  });
});

import { describe, expect, it, vi } from "vitest";

// The Tauri API as the window has it: `invoke` answers after a delay chosen per frame.
const calls: { frame: string; started: number; ended?: number }[] = [];
let inFlight = 0;
let maxInFlight = 0;
vi.mock("@tauri-apps/api/core", () => ({
  invoke: async (_cmd: string, args: { frame: string }) => {
    const call: { frame: string; started: number; ended?: number } = { frame: args.frame, started: calls.length };
    calls.push(call);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    // Earlier frames answer later: concurrent delivery would finish out of order.
    const delay = args.frame.includes("connection:hello") ? 1 : 40 - calls.length * 5;
    await new Promise((r) => setTimeout(r, Math.max(1, delay)));
    inFlight--;
    return null;
  },
}));
vi.mock("@tauri-apps/api/event", () => ({ listen: async () => () => {} }));

const { TauriTransport } = await import("../src/transport");
const { encodeFrame } = await import("../src/protocol");

describe("TauriTransport", () => {
  it("delivers a window's frames one after another, in the order they were sent", async () => {
    const hello = () => encodeFrame("connection:hello", { version: "t", platform: "test", windowSize: { width: 1, height: 1 } });
    const transport = new TauriTransport(hello);
    for (let i = 0; i < 5; i++) transport.send("file:close", { path: `f${i}.rs` });
    await vi.waitFor(() => expect(calls.length).toBe(6), { timeout: 2000 });
    await vi.waitFor(() => expect(inFlight).toBe(0), { timeout: 2000 });
    const paths = calls.slice(1).map((c) => JSON.parse(c.frame).payload.path);
    expect(paths).toEqual(["f0.rs", "f1.rs", "f2.rs", "f3.rs", "f4.rs"]);
    expect(maxInFlight).toBe(1);
  });
});

// One small interface between the UI and the core. In the desktop app frames travel over
// Tauri IPC (the `ui_message` command, the `paige://ui` event); in a plain browser over the
// token-protected WebSocket `/ws` of `paige serve`. Both carry the same catalog.

import type { Events } from "./bindings/shell";
import { type AnyFrame, type ClientPayloads, type ClientType, decodeFrame, encodeFrame } from "./protocol";
import { call } from "./shell";

/** `refused`: Paige answers but no longer knows this page's token (it was rotated, or Paige
 * keeps its UI token in memory only and was restarted): retrying cannot help. */
export type ConnectionState = "connecting" | "open" | "closed" | "refused";

export interface Transport {
  send<T extends ClientType>(type: T, payload: ClientPayloads[T]): void;
  /** Every frame from the core: replies to this UI and broadcasts alike. */
  onFrame(listener: (frame: AnyFrame) => void): () => void;
  onState(listener: (state: ConnectionState) => void): () => void;
  /** Raw terminal output (desktop app only; the browser UI has no terminal). */
  onTerminalOutput(listener: (data: string) => void): () => void;
  readonly hasTerminal: boolean;
  close(): void;
}

class Listeners<T> {
  private set = new Set<(value: T) => void>();
  add(fn: (value: T) => void): () => void {
    this.set.add(fn);
    return () => this.set.delete(fn);
  }
  emit(value: T): void {
    for (const fn of this.set) {
      try {
        fn(value);
      } catch (err) {
        console.error("listener failed", err);
      }
    }
  }
}

/** The minimal WebSocket surface used, so tests can hand in a fake. */
export interface SocketLike {
  readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  send(data: string): void;
  close(): void;
}

export interface WsOptions {
  url: string;
  /** Called after every (re)connect, before queued frames are flushed. */
  hello: () => string;
  connect?: (url: string) => SocketLike;
  /** Delay before reconnect attempt `n` (0-based). */
  backoff?: (n: number) => number;
  /** After a connection that never opened: whether Paige refuses the token (then no retry). */
  refused?: () => Promise<boolean>;
  setTimer?: (fn: () => void, ms: number) => unknown;
}

const OPEN = 1;

/** `/ws` of `paige serve`: queues frames until the socket opens, reconnects with backoff. */
export class WsTransport implements Transport {
  readonly hasTerminal = false;
  private socket: SocketLike | null = null;
  private queue: string[] = [];
  private frames = new Listeners<AnyFrame>();
  private states = new Listeners<ConnectionState>();
  private attempts = 0;
  private closed = false;
  private state: ConnectionState = "connecting";

  constructor(private readonly options: WsOptions) {
    this.open();
  }

  send<T extends ClientType>(type: T, payload: ClientPayloads[T]): void {
    const frame = encodeFrame(type, payload);
    if (this.socket && this.socket.readyState === OPEN) this.socket.send(frame);
    else this.queue.push(frame);
  }

  onFrame(listener: (frame: AnyFrame) => void): () => void {
    return this.frames.add(listener);
  }

  onState(listener: (state: ConnectionState) => void): () => void {
    listener(this.state);
    return this.states.add(listener);
  }

  onTerminalOutput(): () => void {
    return () => {};
  }

  close(): void {
    this.closed = true;
    this.socket?.close();
  }

  private setState(state: ConnectionState): void {
    this.state = state;
    this.states.emit(state);
  }

  private open(): void {
    const connect = this.options.connect ?? ((url: string) => new WebSocket(url) as unknown as SocketLike);
    this.setState("connecting");
    const socket = connect(this.options.url);
    this.socket = socket;
    let opened = false;
    socket.onopen = () => {
      opened = true;
      this.attempts = 0;
      socket.send(this.options.hello());
      const pending = this.queue;
      this.queue = [];
      for (const frame of pending) socket.send(frame);
      this.setState("open");
    };
    socket.onmessage = (ev) => {
      if (typeof ev.data !== "string") return;
      const frame = decodeFrame(ev.data);
      if (frame) this.frames.emit(frame);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.setState("closed");
      if (this.closed) return;
      const retry = () => {
        const delay = (this.options.backoff ?? defaultBackoff)(this.attempts++);
        (this.options.setTimer ?? setTimeout)(() => this.open(), delay);
      };
      if (opened || !this.options.refused) return retry();
      this.options.refused().then(
        (refused) => (refused ? this.setState("refused") : retry()),
        () => retry(),
      );
    };
  }
}

export function defaultBackoff(attempt: number): number {
  return Math.min(10_000, 500 * 2 ** attempt);
}

/** Tauri IPC: `ui_message` takes a frame and returns the reply frame (or null); every core
 * event arrives as the `paige://ui` event, terminal bytes as `paige://terminal`. */
export class TauriTransport implements Transport {
  readonly hasTerminal = true;
  private frames = new Listeners<AnyFrame>();
  private states = new Listeners<ConnectionState>();
  private terminal = new Listeners<string>();
  private unlisten: (() => void)[] = [];
  private state: ConnectionState = "connecting";
  private ready: Promise<void>;
  /** The last frame sent: the next is delivered after it. */
  private queue: Promise<void>;

  constructor(hello: () => string) {
    this.ready = this.start(hello);
    this.queue = this.ready;
  }

  private async start(hello: () => string): Promise<void> {
    const event = await import("@tauri-apps/api/event");
    const listen = <E extends keyof Events>(name: E, fn: (payload: Events[E]) => void) =>
      event.listen<Events[E]>(name, (e) => fn(e.payload));
    this.unlisten.push(
      await listen("paige://ui", (payload) => {
        const frame = decodeFrame(payload);
        if (frame) this.frames.emit(frame);
      }),
      await listen("paige://terminal", (payload) => this.terminal.emit(payload)),
    );
    await this.deliver(hello());
    this.state = "open";
    this.states.emit("open");
  }

  private async deliver(frame: string): Promise<void> {
    try {
      const reply = await call("ui_message", { frame });
      if (typeof reply === "string") {
        const decoded = decodeFrame(reply);
        if (decoded) this.frames.emit(decoded);
      }
    } catch (err) {
      console.error("ui_message failed", err);
    }
  }

  send<T extends ClientType>(type: T, payload: ClientPayloads[T]): void {
    const frame = encodeFrame(type, payload);
    // One frame at a time: `ui_message` is async on the Rust side, so frames sent together
    // could be handled in another order; each waits for the one before it.
    this.queue = this.queue.then(() => this.deliver(frame));
  }

  onFrame(listener: (frame: AnyFrame) => void): () => void {
    return this.frames.add(listener);
  }

  onState(listener: (state: ConnectionState) => void): () => void {
    listener(this.state);
    return this.states.add(listener);
  }

  onTerminalOutput(listener: (data: string) => void): () => void {
    return this.terminal.add(listener);
  }

  close(): void {
    for (const fn of this.unlisten) fn();
  }
}

/** Tauri inside the app, `/ws` (token from the page's `?token=`) in a browser. */
export function connect(hello: () => string): Transport {
  if ("__TAURI_INTERNALS__" in window) return new TauriTransport(hello);
  const token = new URLSearchParams(window.location.search).get("token") ?? "";
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  const url = `${scheme}://${window.location.host}/ws?token=${encodeURIComponent(token)}`;
  // A WebSocket that fails says nothing of why: ask the same token of a plain route.
  const refused = async () => {
    const reply = await fetch("/api/session", { headers: { authorization: `Bearer ${token}` } });
    return reply.status === 401;
  };
  return new WsTransport({ url, hello, refused });
}

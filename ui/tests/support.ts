// What the UI unit tests share: a transport that records what a panel sends, and lookups by
// data-testid under a root element.
import type { ClientPayloads, ClientType } from "../src/protocol";

export type Sent = { type: ClientType; payload: unknown };

/** A transport stand-in: every `send` lands in `sent`, in order. */
export function recordingTransport() {
  const sent: Sent[] = [];
  const transport = {
    send<T extends ClientType>(type: T, payload: ClientPayloads[T]) {
      sent.push({ type, payload });
    },
  };
  return { sent, transport };
}

/** `$` the first element with a data-testid under `root`, `$$` all of them. */
export function byTestId(root: ParentNode) {
  const $ = <E extends HTMLElement = HTMLElement>(testid: string) => root.querySelector<E>(`[data-testid="${testid}"]`);
  const $$ = (testid: string) => [...root.querySelectorAll<HTMLElement>(`[data-testid="${testid}"]`)];
  return { $, $$ };
}

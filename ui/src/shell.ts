// The desktop shell's commands, typed by the generated bindings. Only inside the Tauri app;
// the browser UI of `paige serve` has no shell.
import type { Commands } from "./bindings/shell";

export type { AppState, RecentEntry } from "./bindings/shell";

/** Whether the UI runs inside the desktop app. */
export function inDesktop(): boolean {
  return "__TAURI_INTERNALS__" in window;
}

/** Invokes a shell command; rejects with the command's error text. */
export async function call<K extends keyof Commands>(cmd: K, args: Commands[K]["args"]): Promise<Commands[K]["returns"]> {
  const { invoke } = await import("@tauri-apps/api/core");
  return invoke<Commands[K]["returns"]>(cmd, args);
}

/** The text of a rejected command (Tauri rejects with the command's error string). */
export function errorText(err: unknown): string {
  if (typeof err === "string") return err;
  if (err instanceof Error) return err.message;
  return String(err);
}

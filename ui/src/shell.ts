// The desktop shell's commands, typed by the generated bindings. Only inside the Tauri app;
// the browser UI of `paige serve` has no shell.
import type { CommandError, Commands } from "./bindings/shell";

export type { AppState, CommandError, RecentEntry } from "./bindings/shell";

/** Whether the UI runs inside the desktop app. */
export function inDesktop(): boolean {
  return "__TAURI_INTERNALS__" in window;
}

/** Invokes a shell command; rejects with its `CommandError` ({code, message}). */
export async function call<K extends keyof Commands>(cmd: K, args: Commands[K]["args"]): Promise<Commands[K]["returns"]> {
  const { invoke } = await import("@tauri-apps/api/core");
  return invoke<Commands[K]["returns"]>(cmd, args);
}

/** The text of a rejected command: a `CommandError`'s message, or whatever else was thrown. */
export function errorText(err: unknown): string {
  if (typeof err === "string") return err;
  if (err instanceof Error) return err.message;
  if (isCommandError(err)) return err.message;
  return String(err);
}

/** Whether `err` is the shell's typed command error. */
export function isCommandError(err: unknown): err is CommandError {
  if (typeof err !== "object" || err === null) return false;
  const { code, message } = err as Partial<CommandError>;
  return typeof code === "string" && typeof message === "string";
}

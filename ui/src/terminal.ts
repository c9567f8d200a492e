// The terminal panel: xterm.js over the Rust-owned PTY (desktop app). Keystrokes go out as
// `terminal:input`, size changes as `terminal:resize`; output arrives from the transport.
import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";
import "@xterm/xterm/css/xterm.css";
import type { Transport } from "./transport";

export function mountTerminal(host: HTMLElement, transport: Transport): Terminal {
  const term = new Terminal({ fontSize: 13, cursorBlink: true, convertEol: false, theme: { background: "#1e1e1e" } });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(host);
  const resize = () => {
    try {
      fit.fit();
    } catch {
      return;
    }
    transport.send("terminal:resize", { cols: term.cols, rows: term.rows });
  };
  new ResizeObserver(resize).observe(host);
  if (transport.hasTerminal) {
    term.onData((input) => transport.send("terminal:input", { input }));
    transport.onTerminalOutput((data) => term.write(data));
  } else {
    writeNoTerminalNote(term, "paige claude");
  }
  return term;
}

/** What the browser UI shows where the app has its terminal: how to run Claude Code beside it. */
function writeNoTerminalNote(term: Terminal, command: string): void {
  term.write("This browser UI (paige serve) has no terminal of its own.\r\n");
  term.write("Run Claude Code for this Paige in your own terminal, beside it:\r\n\r\n");
  term.write(`    ${command}\r\n\r\n`);
  term.write("It starts Claude Code exactly as the desktop app does: Paige's tools and hooks, the coach,\r\n");
  term.write("and your project read-only to it.\r\n");
}

/** `connection:init`'s command for this Paige (`/path/to/paige claude`: a bare `paige` is not on
 * PATH on a fresh clone), in the browser UI's note. The app's own terminal is left alone. */
export function showAgentCommand(term: Terminal, transport: Pick<Transport, "hasTerminal">, command: string | undefined): void {
  if (transport.hasTerminal || !command) return;
  term.reset();
  writeNoTerminalNote(term, command);
}

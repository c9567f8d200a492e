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
    term.write("This browser UI (paige serve) has no terminal of its own.\r\n");
    term.write("Run Claude Code for this Paige in your own terminal, beside it:\r\n\r\n");
    term.write("    paige claude\r\n\r\n");
    term.write("It starts Claude Code exactly as the desktop app does: Paige's tools and hooks, the coach,\r\n");
    term.write("and your project read-only to it.\r\n");
  }
  return term;
}

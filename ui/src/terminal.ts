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
    term.write("The terminal runs Claude Code in the Paige desktop app.\r\n");
    term.write("This browser UI (paige serve) has no terminal: use your own shell beside it.\r\n");
  }
  return term;
}

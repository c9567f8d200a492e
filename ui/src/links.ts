// Links out of Paige (learning materials, issues). In the desktop app a click goes to the
// shell's `open_external` command, which opens https: links in the system browser (the
// webview never navigates away); in the browser UI of `paige serve` a link opens in a new tab.
// Only https: links are clickable: anything else is shown as text.
import { el } from "./dom";
import { call, errorText, inDesktop } from "./shell";

/** Opens a URL outside the app; rejects with why it could not. */
export type OpenExternal = (url: string) => Promise<void>;

/** The desktop's opener (`open_external`); `null` in the browser. */
export function desktopOpener(): OpenExternal | null {
  if (!inDesktop()) return null;
  return async (url) => {
    await call("open_external", { url });
  };
}

/** Whether `url` is an absolute https: URL (what the shell opens). */
export function isHttps(url: string): boolean {
  try {
    return new URL(url).protocol === "https:";
  } catch {
    return false;
  }
}

/** A link to `url` showing `text`: through `open` when given (the desktop), else a new tab.
 * `failed` hears why the desktop could not open it. */
export function externalLink(url: string, text: string, open: OpenExternal | null, failed: (message: string) => void): HTMLElement {
  if (!isHttps(url)) {
    const plain = el("span", "link-plain", text);
    plain.title = url;
    return plain;
  }
  const link = el("a", "external-link", text);
  link.href = url;
  link.dataset.testid = "external-link";
  if (!open) {
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    return link;
  }
  const go = (event: MouseEvent) => {
    event.preventDefault();
    open(url).catch((err: unknown) => failed(`Could not open ${url}: ${errorText(err)}`));
  };
  link.addEventListener("click", go);
  // A middle click would otherwise ask the webview for a new window.
  link.addEventListener("auxclick", (event) => {
    if (event.button === 1) go(event);
  });
  return link;
}

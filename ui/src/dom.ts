// The DOM helpers the panels share.

/** A new element with a class and text (textContent: never parsed as HTML). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className = "", text = ""): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.textContent = text;
  return node;
}

/** An error text as the core sends it (`protocol::error_text`): its first line says what is
 * wrong and what to do, shown as is (after `lead`); the lines after it are the details (the
 * raw error chain), folded under "Details". */
export function errorMessage(text: string, lead = ""): HTMLElement[] {
  const [sentence = "", ...rest] = text.split("\n");
  const parts: HTMLElement[] = [el("p", "error-sentence", lead + sentence)];
  const details = rest.join("\n").trim();
  if (details) {
    const fold = el("details", "error-details");
    fold.dataset.testid = "error-details";
    fold.append(el("summary", "", "Details"), el("pre", "", details));
    parts.push(fold);
  }
  return parts;
}

/** Where the keys are, when inside one of `roots` (the focused element and its text
 * selection): the function returned puts them back after the roots' children are moved or
 * redrawn (moving a focused element out of the document blurs it). A no-op otherwise. */
export function keepFocus(...roots: Element[]): () => void {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || !roots.some((root) => root.contains(active))) return () => {};
  const text = active instanceof HTMLTextAreaElement || active instanceof HTMLInputElement ? active : null;
  const [start, end] = [text?.selectionStart ?? null, text?.selectionEnd ?? null];
  return () => {
    if (!active.isConnected || document.activeElement === active) return;
    active.focus();
    if (text && start !== null && end !== null) {
      try {
        text.setSelectionRange(start, end);
      } catch {
        // An input type without a selection (a number field): the focus is enough.
      }
    }
  };
}

// The one DOM helper the panels share.

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

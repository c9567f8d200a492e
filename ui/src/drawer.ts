// A read-only drawer over the right part of the layout, beside the coaching panel: a title,
// a × and a body. Escape closes the drawer opened last (one listener for all of them), so a
// worked example and an explanation can be open together and leave one at a time.
import { el } from "./dom";

const openDrawers: Drawer[] = [];

function onKey(event: KeyboardEvent): void {
  if (event.key !== "Escape" || !openDrawers.length) return;
  openDrawers[openDrawers.length - 1].close();
}

export class Drawer {
  private aside: HTMLElement | null = null;
  private titleNode: HTMLElement | null = null;
  private bodyNode: HTMLElement | null = null;
  /** Called after the drawer closed (×, Escape or `close()`). */
  onClose: () => void = () => {};

  /** `testid` names the drawer (`data-testid`, also its class); its parts are
   * `<testid>-title` and `<testid>-close`. */
  constructor(
    private readonly host: HTMLElement,
    private readonly testid: string,
    private readonly label: string,
  ) {}

  get isOpen(): boolean {
    return this.aside !== null;
  }

  /** Opens the drawer (or keeps it open) with `title`; returns its emptied body. */
  open(title: string): HTMLElement {
    if (!this.aside) this.create();
    this.titleNode!.textContent = title;
    this.bodyNode!.replaceChildren();
    return this.bodyNode!;
  }

  close(): void {
    if (!this.aside) return;
    this.aside.remove();
    this.aside = this.titleNode = this.bodyNode = null;
    const at = openDrawers.indexOf(this);
    if (at >= 0) openDrawers.splice(at, 1);
    if (!openDrawers.length) document.removeEventListener("keydown", onKey);
    this.onClose();
  }

  private create(): void {
    const aside = el("aside", `drawer ${this.testid}`);
    aside.dataset.testid = this.testid;
    aside.setAttribute("role", "complementary");
    aside.setAttribute("aria-label", this.label);
    const head = el("div", "drawer-head");
    const title = el("h2", "");
    title.dataset.testid = `${this.testid}-title`;
    const close = el("button", "close", "×");
    close.type = "button";
    close.title = "Close";
    close.dataset.testid = `${this.testid}-close`;
    close.addEventListener("click", () => this.close());
    head.append(title, close);
    const body = el("div", "drawer-body");
    aside.append(head, body);
    this.host.append(aside);
    this.aside = aside;
    this.titleNode = title;
    this.bodyNode = body;
    if (!openDrawers.length) document.addEventListener("keydown", onKey);
    openDrawers.push(this);
  }
}

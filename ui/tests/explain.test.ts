// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { CONTEXT_LINES, ExplainPanel, explainRequest } from "../src/explain";
import type { ExplainResponse, UserExplain } from "../src/protocol";
import { WorkedExampleDrawer } from "../src/worked-example";
import { byTestId, recordingTransport } from "./support";

/** A 200-line file: "line 1" … "line 200". */
const FILE = Array.from({ length: 200 }, (_, i) => `line ${i + 1}`);

function setup() {
  const { sent, transport } = recordingTransport();
  const layout = document.createElement("main");
  document.body.replaceChildren(layout);
  const panel = new ExplainPanel(layout, transport);
  const { $, $$ } = byTestId(layout);
  return { sent, layout, panel, $, $$ };
}

function request(path = "src/app.ts", startLine = 3, endLine = 4): UserExplain {
  return explainRequest(path, "typescript", FILE, { startLine, startCol: 1, endLine, endCol: 5 });
}

function answer(extra: Partial<ExplainResponse> = {}): ExplainResponse {
  return {
    path: "src/app.ts",
    explanation: "This loop waits longer after each failed attempt.",
    keyConcepts: ["exponential backoff", "async loops"],
    analogy: null,
    relatedFiles: null,
    phaseConnection: null,
    ...extra,
  };
}

const pressEscape = () => document.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape" }));

describe("the user:explain request built from a selection", () => {
  it("carries the path, language, selection and the selected text across lines", () => {
    const lines = ["fn main() {", "    let x = 1;", "    x + 1", "}"];
    const req = explainRequest("src/main.rs", "rust", lines, { startLine: 2, startCol: 9, endLine: 3, endCol: 10 });
    expect(req.path).toBe("src/main.rs");
    expect(req.language).toBe("rust");
    expect(req.selection).toEqual({ startLine: 2, startCol: 9, endLine: 3, endCol: 10 });
    expect(req.selectedText).toBe("x = 1;\n    x + 1");
    expect(req.surroundingContext).toBe(lines.join("\n"));
  });

  it("takes a one-line selection between its columns (end column exclusive)", () => {
    const req = explainRequest("a.js", "javascript", ["const answer = 42;"], { startLine: 1, startCol: 7, endLine: 1, endCol: 13 });
    expect(req.selectedText).toBe("answer");
  });

  it("sends 50 lines either side of the selection in the middle of a file", () => {
    const req = explainRequest("a.txt", "plaintext", FILE, { startLine: 100, startCol: 1, endLine: 102, endCol: 3 });
    const context = req.surroundingContext.split("\n");
    expect(CONTEXT_LINES).toBe(50);
    expect(context[0]).toBe("line 50");
    expect(context.at(-1)).toBe("line 152");
    expect(context).toHaveLength(103);
  });

  it("clamps the context window at the start and the end of the file", () => {
    const top = explainRequest("a.txt", "plaintext", FILE, { startLine: 2, startCol: 1, endLine: 2, endCol: 3 }).surroundingContext.split("\n");
    expect(top[0]).toBe("line 1");
    expect(top.at(-1)).toBe("line 52");
    const bottom = explainRequest("a.txt", "plaintext", FILE, { startLine: 190, startCol: 1, endLine: 199, endCol: 3 }).surroundingContext.split("\n");
    expect(bottom[0]).toBe("line 140");
    expect(bottom.at(-1)).toBe("line 200");
  });
});

describe("the Explain This drawer", () => {
  let ui: ReturnType<typeof setup>;
  beforeEach(() => {
    ui = setup();
  });

  it("sends user:explain and shows the progress at once", () => {
    const req = request();
    ui.panel.request(req);
    expect(ui.sent).toEqual([{ type: "user:explain", payload: req }]);
    expect(ui.$("explain")).not.toBeNull();
    expect(ui.$("explain-status")?.textContent).toBe("Paige is explaining…");
    expect(ui.$("explain-title")?.textContent).toBe("Explain src/app.ts, lines 3–4");
    expect(ui.$("explain-selection")?.textContent).toBe(req.selectedText);
    expect(ui.$("explain-explanation")).toBeNull();
  });

  it("explain:response replaces the progress with the explanation and key concepts as chips, without the absent parts", () => {
    ui.panel.request(request());
    ui.panel.response(answer());
    expect(ui.$("explain-status")).toBeNull();
    expect(ui.$("explain-explanation")?.textContent).toBe("This loop waits longer after each failed attempt.");
    expect(ui.$$("explain-concept").map((c) => c.textContent)).toEqual(["exponential backoff", "async loops"]);
    expect(ui.$("explain-analogy")).toBeNull();
    expect(ui.$("explain-phase")).toBeNull();
    expect(ui.$("explain-related")).toBeNull();
  });

  it("shows the analogy, the phase connection and the related files when the answer has them", () => {
    ui.panel.request(request());
    ui.panel.response(answer({ analogy: "Like knocking again, later each time.", phaseConnection: "Phase 2 adds this loop.", relatedFiles: ["src/retry.ts", "src/net.ts"] }));
    expect(ui.$("explain-analogy")?.textContent).toBe("Like knocking again, later each time.");
    expect(ui.$("explain-phase")?.textContent).toBe("Phase 2 adds this loop.");
    expect(ui.$$("explain-related-file").map((a) => a.dataset.path)).toEqual(["src/retry.ts", "src/net.ts"]);
  });

  it("clicking a related file sends file:open for it", () => {
    ui.panel.request(request());
    ui.panel.response(answer({ relatedFiles: ["src/retry.ts"] }));
    ui.sent.length = 0;
    ui.$("explain-related-file")!.click();
    expect(ui.sent).toEqual([{ type: "file:open", payload: { path: "src/retry.ts" } }]);
  });

  it("explain:error shows the error and Retry resends the same request with the progress", () => {
    const req = request();
    ui.panel.request(req);
    ui.panel.error({ path: "src/app.ts", error: "Paige could not explain this: overloaded" });
    expect(ui.$("explain-status")).toBeNull();
    expect(ui.$("explain-error")?.textContent).toContain("Paige could not explain this: overloaded");
    ui.sent.length = 0;
    ui.$("explain-retry")!.click();
    expect(ui.sent).toEqual([{ type: "user:explain", payload: req }]);
    expect(ui.$("explain-error")).toBeNull();
    expect(ui.$("explain-status")).not.toBeNull();
    ui.panel.response(answer());
    expect(ui.$("explain-explanation")).not.toBeNull();
  });

  it("an error shows its first line, what to do, and folds the raw chain under Details", () => {
    ui.panel.request(request());
    const sentence = "Paige could not explain this: Paige cannot reach the Anthropic API — check your connection, then retry.";
    const chain = "cannot reach the Anthropic API: error sending request for url (…): tcp connect error";
    ui.panel.error({ path: "src/app.ts", error: `${sentence}\n${chain}` });
    const box = ui.$("explain-error")!;
    expect(box.querySelector(".error-sentence")?.textContent).toBe(sentence);
    const details = box.querySelector<HTMLDetailsElement>("[data-testid=error-details]")!;
    expect(details.open).toBe(false);
    expect(details.querySelector("summary")?.textContent).toBe("Details");
    expect(details.querySelector("pre")?.textContent).toBe(chain);
    expect(ui.$("explain-retry")).not.toBeNull();
  });

  it("an error of one line has no Details", () => {
    ui.panel.request(request());
    ui.panel.error({ path: "src/app.ts", error: "Cannot explain src/app.ts: not found" });
    expect(ui.$("explain-error")?.querySelector("details")).toBeNull();
  });

  it("an answer for an older request's file does not overwrite the latest request's", () => {
    ui.panel.request(request("src/old.ts"));
    ui.panel.request(request("src/app.ts"));
    ui.panel.response(answer({ path: "src/old.ts", explanation: "the old one" }));
    expect(ui.$("explain-explanation")).toBeNull();
    expect(ui.$("explain-status")).not.toBeNull();
    ui.panel.response(answer({ explanation: "the new one" }));
    expect(ui.$("explain-explanation")?.textContent).toBe("the new one");
    ui.panel.response(answer({ path: "src/old.ts", explanation: "late and old" }));
    expect(ui.$("explain-explanation")?.textContent).toBe("the new one");
  });

  it("with two requests for the same file in flight, the first answer is taken as the older one's", () => {
    ui.panel.request(request("src/app.ts", 3, 4));
    ui.panel.request(request("src/app.ts", 10, 12));
    ui.panel.response(answer({ explanation: "lines 3–4" }));
    expect(ui.$("explain-explanation")).toBeNull();
    expect(ui.$("explain-title")?.textContent).toBe("Explain src/app.ts, lines 10–12");
    ui.panel.response(answer({ explanation: "lines 10–12" }));
    expect(ui.$("explain-explanation")?.textContent).toBe("lines 10–12");
  });

  it("ignores an answer nobody here asked for (another UI's request)", () => {
    ui.panel.response(answer());
    expect(ui.$("explain")).toBeNull();
    ui.panel.request(request());
    ui.panel.response(answer({ explanation: "ours" }));
    ui.panel.response(answer({ explanation: "another window's" }));
    expect(ui.$("explain-explanation")?.textContent).toBe("ours");
  });

  it("closes with × and forgets the pending request: its late answer does not reopen it", () => {
    ui.panel.request(request());
    ui.$("explain-close")!.click();
    expect(ui.$("explain")).toBeNull();
    ui.panel.response(answer());
    expect(ui.$("explain")).toBeNull();
  });

  it("closes with Escape; with the worked example open too, Escape closes the drawer opened last first", () => {
    const worked = new WorkedExampleDrawer(ui.layout);
    worked.show({ phase: 1, title: "Retry a flaky call", language: "python", explanation: "e", steps: [], exampleCode: "pass" });
    ui.panel.request(request());
    pressEscape();
    expect(ui.$("explain")).toBeNull();
    expect(ui.$("worked-example")).not.toBeNull();
    pressEscape();
    expect(ui.$("worked-example")).toBeNull();
  });
});

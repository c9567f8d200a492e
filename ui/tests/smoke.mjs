// Smoke test of the browser UI against a real `paige serve`, in headless Debian Chromium
// (playwright-core, no downloaded browser). Needs PAIGE_BIN (the built `paige`) and a built
// ui/dist. Prints one line per check and a closing "N passed, N failed". Paige's model is a
// fake Messages API (fake-anthropic.mjs, ANTHROPIC_BASE_URL).
//
//   PAIGE_BIN=target/debug/paige node tests/smoke.mjs
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { check, fail, noPageScroll, sleep, summary, waitFor } from "./checks.mjs";
import { addedLines, comprehensionGrade, comprehensionQuestions, promptExample, reviewQuestion, startFakeAnthropic, userText } from "./fake-anthropic.mjs";
import { ANSWER, DEBUG_FACTS, RECORDER, REPLY, TIMEBOX_MS, intakeReplies, judgeDebug, judgeRecording } from "./intake-script.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const dist = resolve(here, "../dist");
const bin = process.env.PAIGE_BIN;
const browserPath = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";
const artifacts = resolve(process.env.PAIGE_ARTIFACTS ?? join(here, "../test-artifacts"));

if (!bin || !existsSync(bin)) throw new Error(`set PAIGE_BIN to the built paige binary (got ${bin})`);
if (!existsSync(join(dist, "index.html"))) throw new Error(`no UI build in ${dist}; run npm run build`);

const work = mkdtempSync(join(tmpdir(), "paige-smoke-"));
const project = join(work, "project");
const dataDir = join(work, "data");
mkdirSync(join(project, "src"), { recursive: true });
// A folder two levels down: the first fs:tree leaves it unlisted (issue 32).
mkdirSync(join(project, "docs", "guides"), { recursive: true });
writeFileSync(join(project, "docs", "guides", "intro.md"), "# intro\n");
writeFileSync(join(project, "README.md"), "# fixture\n");
writeFileSync(join(project, "src", "greet.js"), "export function greet(name) {\n  return `hello ${name}`;\n}\n");

// Explain This answers with the prompt's example, naming a file of the fixture as related; it
// takes a moment, as the model does, so the drawer's progress shows first.
const explanation = { ...promptExample("explain-this"), related_files: ["README.md"] };
// The intake interview's model calls are scripted by intake-script.mjs; its timebox is
// TIMEBOX_MS here (only the interview reads it).
// Claude Code's plan becomes two phases on the fixture's src/greet.js (issue 28's panel).
const greetPhase = (number, title) => ({
  number, title, description: `${title} in src/greet.js.`, expected_files: ["src/greet.js"], hint_level: "file",
  hints: { file_hints: [{ path: "src/greet.js", style: "suggested" }], line_hints: [] }, knowledge_gap_opportunities: [],
});
const coachPlan = { phases: [greetPhase(1, "Find the greeting"), greetPhase(2, "Say bonjour")], memory_connection: null, estimated_difficulty: "beginner" };
const GAP_TOPIC = "ES module exports";
// The comprehension check (issue 30) answers from the request alone (fake-anthropic.mjs): its
// two questions quote the first line the learner added in `learner_diff`; an answer with
// "because" in it is graded correct, any other incorrect.
const fake = await startFakeAnthropic({
  replies: {
    explain_this: explanation, coach_agent: coachPlan, memory_retrieval_filter: promptExample("memory-retrieval-filter"), ...intakeReplies,
    comprehension_check: comprehensionQuestions, comprehension_grade: comprehensionGrade,
    // The wrap-up stores one knowledge gap (a spaced review item, as is the concept answered
    // wrong in the comprehension check); the rest of the wrap-up is unanswered (400s).
    knowledge_gap_extraction: {
      knowledge_gaps: [{ topic: GAP_TOPIC, evidence: "Asked where the greeting should live", severity: "low", related_concepts: ["modules"] }],
      kata_specs: [],
      session_summary: { phases_completed: 1, total_time_minutes: 5, hints_used: 0, independent_completions: 1 },
    },
    // A spaced review's question quotes the item's topic; its answer is graded as above.
    review_question: reviewQuestion,
  },
  // The wrap-up's first call takes a moment, as the model's does: its notice stays on screen.
  // The comprehension check's calls and a review's question take a moment too: their progress
  // shows first.
  delays: { explain_this: 800, knowledge_gap_extraction: 1500, comprehension_check: 1000, comprehension_grade: 800, review_question: 800 },
});
/** One MCP tool call as Claude Code makes it (2026-07-28, stateless), with the agent token. */
async function mcpCall(base, token, name, args) {
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": { name: "smoke", version: "1" } };
  const reply = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, _meta: meta } }),
  });
  const text = await reply.text();
  if (reply.status !== 200 || !text.includes('"result"') || text.includes('"isError":true')) throw new Error(`${name}: HTTP ${reply.status} ${text.slice(0, 300)}`);
}
// Its tokens are the ones it keeps in DATA_DIR (read from the run file), as a learner's are.
const serve = (port, extraEnv = {}) => spawn(bin, ["serve", "--project", project, "--port", String(port), "--data-dir", dataDir, "--ui-dir", dist], {
  env: { ...process.env, PAIGE_TOKEN: "", ANTHROPIC_API_KEY: "sk-ant-smoke", ANTHROPIC_BASE_URL: fake.base, RUST_LOG: "warn", PAIGE_INTAKE_TIMEBOX_MS: String(TIMEBOX_MS), ...extraEnv },
  stdio: ["ignore", "inherit", "inherit"],
});
let server = serve(0);
let browser;
try {
  const runFile = join(dataDir, "run", "server.json");
  const info = await waitFor("paige serve to write its run file", () => existsSync(runFile) && JSON.parse(readFileSync(runFile, "utf8")), 30_000);
  const base = `http://127.0.0.1:${info.port}`;
  browser = await chromium.launch({
    executablePath: browserPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on("pageerror", (err) => errors.push(err.message));

  await check("the page loads from paige serve", async () => {
    const response = await page.goto(`${base}/?token=${info.token}`);
    if (!response || response.status() !== 200) throw new Error(`status ${response?.status()}`);
  });
  await check("the UI connects over /ws", async () => {
    await page.waitForSelector('[data-testid="conn-status"][data-state="open"]', { timeout: 15_000 });
  });
  await check("the explorer shows the fixture project", async () => {
    await page.waitForSelector('[data-testid="tree-item"][data-path="src"]', { timeout: 15_000 });
    await page.waitForSelector('[data-testid="tree-item"][data-path="README.md"]');
  });
  await check("a folder the first tree left unlisted is listed when opened: fs:list, then its files", async () => {
    const first = await page.evaluate(() => window.paige.framesOf("fs:tree")[0].root);
    const guides = first.children.find((c) => c.path === "docs")?.children?.find((c) => c.path === "docs/guides");
    if (!guides || "children" in guides) throw new Error(`docs/guides in the first tree: ${JSON.stringify(guides)}`);
    await page.click('[data-testid="tree-item"][data-path="docs"]');
    await page.click('[data-testid="tree-item"][data-path="docs/guides"]');
    await page.waitForSelector('[data-testid="tree-item"][data-path="docs/guides/intro.md"]', { timeout: 10_000 });
    const listed = await page.evaluate(() => window.paige.framesOf("fs:children").map((p) => p.path));
    if (!listed.includes("docs/guides")) throw new Error(`fs:children for ${JSON.stringify(listed)}`);
    await page.click('[data-testid="tree-item"][data-path="docs"]');
  });
  await check("opening a file from the explorer shows it in the editor", async () => {
    await page.click('[data-testid="tree-item"][data-path="src"]');
    await page.click('[data-testid="tree-item"][data-path="src/greet.js"]');
    await page.waitForSelector('.tab.active[data-path="src/greet.js"]', { timeout: 10_000 });
    await waitFor("Monaco to render the file", () => page.locator(".monaco-editor .view-lines").innerText().then((t) => t.includes("greet")));
  });
  await check("typing marks the tab dirty and saving writes the file", async () => {
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+End");
    await page.keyboard.type("// edited in the browser\n");
    await page.waitForSelector('.tab[data-path="src/greet.js"][data-dirty="true"]');
    await page.keyboard.press("Control+S");
    await waitFor("the file on disk to change", () => readFileSync(join(project, "src", "greet.js"), "utf8").includes("// edited in the browser"));
    await page.waitForSelector('.tab[data-path="src/greet.js"][data-dirty="false"]', { timeout: 10_000 });
  });
  await check("the saved file stays open in its tab", async () => {
    await new Promise((r) => setTimeout(r, 1500)); // past the watcher's debounce
    const tabs = await page.evaluate(() => window.paige.openTabs());
    if (JSON.stringify(tabs) !== '["src/greet.js"]') throw new Error(`open tabs: ${JSON.stringify(tabs)}`);
  });
  await check("the browser's terminal pane names the command that runs Claude Code for this Paige: this paige binary, not a bare `paige`", async () => {
    const expected = `${realpathSync(bin)} claude`;
    const shown = async () => (await page.locator(".terminal-pane .xterm-rows").textContent()) ?? "";
    await waitFor("the command in the terminal pane", async () => (await shown()).includes(expected), 10_000).catch(async (err) => {
      throw new Error(`${err.message}: ${JSON.stringify(await shown())}`);
    });
  });
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, "browser-ui.png") });
  console.log(`screenshot: ${join(artifacts, "browser-ui.png")}`);
  await check("selecting a line and choosing Explain this in the editor's menu shows progress, then Paige's explanation", async () => {
    // Line 2 of src/greet.js from its first word, selected with the keyboard, then a
    // right-click inside the selection (one outside would move the cursor and empty it).
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Home");
    await page.keyboard.press("Shift+End");
    await page.waitForSelector(".monaco-editor .selected-text");
    await page.locator(".monaco-editor .view-line span span", { hasText: /^return$/ }).click({ button: "right" });
    const item = page.getByRole("menuitem", { name: "Explain this" });
    await item.waitFor({ timeout: 5_000 });
    await sleep(300); // Monaco's menu ignores mouse-ups for its first 100 ms (stray clicks)
    await item.click();
    const status = await page.locator('[data-testid="explain-status"]').textContent({ timeout: 2_000 });
    if (status !== "Paige is explaining…") throw new Error(`progress: ${JSON.stringify(status)}`);
    const text = await page.locator('[data-testid="explain-explanation"]').textContent({ timeout: 15_000 });
    if (text !== explanation.explanation) throw new Error(`explanation: ${JSON.stringify(text)}`);
    const concepts = await page.locator('[data-testid="explain-concept"]').allTextContents();
    if (JSON.stringify(concepts) !== JSON.stringify(explanation.key_concepts)) throw new Error(`concepts: ${JSON.stringify(concepts)}`);
    const analogy = await page.locator('[data-testid="explain-analogy"]').textContent();
    if (analogy !== explanation.analogy) throw new Error(`analogy: ${JSON.stringify(analogy)}`);
    // No session, so no phase: the backend drops the model's phase connection.
    if (await page.locator('[data-testid="explain-phase"]').count()) throw new Error("a phase connection without a phase");
    const calls = fake.callsOf("explain_this");
    if (calls.length !== 1) throw new Error(`${calls.length} explain_this calls`);
    const asked = userText(calls[0].body);
    if (!asked.includes("return `hello ${name}`;") || !asked.includes("src/greet.js")) throw new Error(`the model was asked: ${asked.slice(0, 400)}`);
    await page.screenshot({ path: join(artifacts, "browser-explain.png") });
  });
  await check("a related file in the explanation opens in the editor", async () => {
    await page.click('[data-testid="explain-related-file"][data-path="README.md"]');
    await page.waitForSelector('.tab.active[data-path="README.md"]', { timeout: 10_000 });
  });
  await check("Escape closes the explanation, and Ctrl+Shift+E on a selection asks again", async () => {
    // The drawer covers the middle of the editor: click near the left of the first line.
    await page.locator(".monaco-editor .view-line").first().click({ position: { x: 4, y: 4 } });
    await page.keyboard.press("Escape");
    await page.waitForSelector('[data-testid="explain"]', { state: "detached", timeout: 2_000 });
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Control+Shift+E");
    await page.waitForSelector('[data-testid="explain-explanation"]', { timeout: 15_000 });
    const title = await page.locator('[data-testid="explain-title"]').textContent();
    if (!title?.startsWith("Explain README.md")) throw new Error(`title: ${JSON.stringify(title)}`);
    const calls = fake.callsOf("explain_this");
    if (calls.length !== 2 || !userText(calls[1].body).includes("# fixture")) throw new Error(`explain_this calls: ${calls.length}`);
    await page.click('[data-testid="explain-close"]');
    await page.waitForSelector('[data-testid="explain"]', { state: "detached", timeout: 2_000 });
  });
  await check("without a session the coaching panel offers to start one: why there are no issues, and a typed form", async () => {
    await page.waitForSelector('[data-testid="start-view"] [data-testid="start-form"]', { timeout: 10_000 });
    // The fixture is no GitHub repository (and gh may be missing): the panel says why, quietly.
    const why = await page.locator('[data-testid="issues-error"]').textContent({ timeout: 15_000 });
    if (!why?.startsWith("No GitHub issues: ")) throw new Error(`issues line: ${JSON.stringify(why)}`);
    // No red box for it, and a field to type an issue's number or URL instead.
    if (await page.locator('[data-testid="start-view"] .panel-error').count()) throw new Error("the start view shows an error box");
    await page.waitForSelector('[data-testid="start-issue-ref"]:not([disabled])');
    const next = await page.locator('[data-testid="start-next"]').textContent();
    if (!next?.includes("Claude Code in the terminal plans the work")) throw new Error(`next step: ${JSON.stringify(next)}`);
  });
  await check("typing what to work on starts a session: session:started reaches the panel", async () => {
    await page.fill('[data-testid="start-title"]', "Greet in French");
    await page.fill('[data-testid="start-description"]', "bonjour instead of hello");
    await page.click('[data-testid="start-submit"]');
    await page.waitForSelector('[data-testid="session-title"]', { timeout: 10_000 });
    const title = await page.locator('[data-testid="session-title"]').textContent();
    if (title !== "Greet in French") throw new Error(`session title ${JSON.stringify(title)}`);
    const frames = await page.evaluate(() => window.paige.framesOf("session:started"));
    if (frames.length !== 1 || frames[0].title !== "Greet in French" || frames[0].description !== "bonjour instead of hello") {
      throw new Error(`session:started frames: ${JSON.stringify(frames)}`);
    }
    await page.screenshot({ path: join(artifacts, "browser-coaching.png") });
  });
  // A learner's first session opens with the intake interview (its timebox TIMEBOX_MS here).
  await check("the first session opens with the interview: Paige's first question and a countdown from the 5 s timebox", async () => {
    await page.waitForSelector('[data-testid="intake-line"][data-role="interviewer"]:not([data-streaming])', { timeout: 10_000 });
    const countdown = await page.locator('[data-testid="intake-countdown"]').textContent();
    if (countdown !== "00:05" && countdown !== "00:04") throw new Error(`countdown ${JSON.stringify(countdown)}`);
    const question = await page.locator('[data-testid="intake-line"][data-role="interviewer"]').textContent();
    if (!question?.includes("project")) throw new Error(`first question ${JSON.stringify(question)}`);
    await page.waitForSelector('[data-testid="intake-input"]:not([disabled])');
  });
  await check("the interview shows how close it is to the coding in words, offers Skip for now, and keeps the guard's debug panel closed", async () => {
    const progress = await page.locator('[data-testid="intake-progress"]').textContent({ timeout: 5_000 });
    if (!/^Paige has a picture of 0 of 3 things\. Still to hear: .* At most 1 min left\.$/.test(progress ?? "")) throw new Error(`progress ${JSON.stringify(progress)}`);
    await page.waitForSelector('[data-testid="intake-skip"]', { state: "visible" });
    if (await page.locator('[data-testid="intake-debug"]').evaluate((d) => d.open)) throw new Error("the debug panel is open");
    if (await page.locator('[data-testid="intake-zero-runs"]').isVisible()) throw new Error("the guard's zeroRuns shows without asking");
  });
  await check("an answer gets the interviewer's streamed reply; the timebox waits for its end, then the coding question follows within 1 s", async () => {
    await page.evaluate(`(() => {${RECORDER}})()`);
    // Key by key, as a learner types: the state the first key's intake:typing brings redraws
    // the panel mid-answer, and the box must keep the keys.
    await page.click('[data-testid="intake-input"]');
    await page.keyboard.type(ANSWER, { delay: 20 });
    const typed = await page.inputValue('[data-testid="intake-input"]');
    if (typed !== ANSWER) throw new Error(`the answer box holds ${JSON.stringify(typed)}`);
    await page.keyboard.press("Enter");
    await page.waitForSelector('[data-testid="intake-coding-question"]', { timeout: 20_000 });
    const log = await page.evaluate(() => window.__intakeLog);
    const reply = fake.requests.find((r) => r.callType === "intake_interviewer");
    const problems = judgeRecording(log, reply?.streamEndedAt);
    if (problems.length) throw new Error(problems.join("; "));
    const done = await page.evaluate(() => window.paige.framesOf("intake:reply_done").map((f) => f.text));
    if (done.at(-1) !== REPLY) throw new Error(`reply_done frames: ${JSON.stringify(done)}`);
    const asked = fake.callsOf("intake_interviewer");
    if (asked.length !== 1 || asked[0].body.stream !== true || !JSON.stringify(asked[0].body.messages).includes(ANSWER)) {
      throw new Error(`interviewer calls: ${JSON.stringify(asked.map((c) => c.body.messages))}`);
    }
    const question = await page.locator('[data-testid="intake-coding-question"] .intake-question').textContent();
    if (!question?.includes("Greet in French")) throw new Error(`coding question ${JSON.stringify(question)}`);
    if (await page.locator('[data-testid="intake-input"]').count()) throw new Error("the answer box is still there after the transition");
    // Coding starts: the panel waits for Claude Code's plan.
    await page.waitForSelector('[data-testid="plan-waiting"]', { timeout: 2_000 });
  });
  await check("the hand-over says where to answer: the learner's own terminal running paige claude, as the browser has none", async () => {
    const next = await page.locator('[data-testid="intake-next-step"]').textContent();
    if (!next?.startsWith("Next: answer in your own terminal, where `paige claude` runs Claude Code")) throw new Error(`next step ${JSON.stringify(next)}`);
    if (await page.locator('[data-testid="intake-go-terminal"]').count()) throw new Error("a Go to the terminal button in a window with no terminal");
  });
  await check("while Claude Code plans, its tool calls show in the panel as its hooks arrive", async () => {
    const waiting = await page.locator('[data-testid="plan-waiting"]').textContent();
    if (!waiting?.includes("Waiting for Claude Code to start on the plan")) throw new Error(`before: ${JSON.stringify(waiting)}`);
    const sentAt = Date.now();
    const hook = await fetch(`${base}/hooks/pre-tool-use`, {
      method: "POST",
      headers: { authorization: `Bearer ${info.agentToken}`, "content-type": "application/json" },
      body: JSON.stringify({ session_id: "cc", hook_event_name: "PreToolUse", tool_name: "Read", tool_input: { file_path: join(project, "src", "greet.js") }, cwd: project }),
    });
    if (!hook.ok) throw new Error(`hook: ${hook.status}`);
    const call = await page.locator('[data-testid="agent-call"]').first().textContent({ timeout: 5_000 });
    if (call !== `Read ${join(project, "src", "greet.js")}`) throw new Error(`the call shown: ${JSON.stringify(call)}`);
    console.log(`hook to panel: ${Date.now() - sentAt} ms`);
    const now = await page.locator('[data-testid="plan-waiting"] .plan-wait-text').textContent();
    if (now !== "Claude Code is reading the code…") throw new Error(`waiting line ${JSON.stringify(now)}`);
  });
  await check("toasts sit left of the coaching panel, never over its session controls", async () => {
    const { toastsRight, coachingLeft } = await page.evaluate(() => {
      const toasts = document.querySelector(".toasts");
      return { toastsRight: toasts.getBoundingClientRect().right, coachingLeft: document.querySelector('[data-testid="coaching"]').getBoundingClientRect().left };
    });
    if (toastsRight > coachingLeft) throw new Error(`toasts end at ${toastsRight}, the coaching panel starts at ${coachingLeft}`);
  });
  await check("after the transition the guard's debug panel shows the reason, zeroRuns, projectsUsed, stopCheck and the confidence bars; the coding question shows once", async () => {
    const problems = judgeDebug(await page.evaluate(`(() => {${DEBUG_FACTS}})()`));
    if (problems.length) throw new Error(problems.join("; "));
    // The coding question shows once: in its box, not also as a line of the transcript.
    const question = await page.locator('[data-testid="intake-coding-question"] .intake-question').textContent();
    const lines = await page.locator('[data-testid="intake-line"]').allTextContents();
    if (lines.some((l) => question && l.includes(question))) throw new Error(`the transcript repeats the coding question: ${JSON.stringify(lines)}`);
    await page.screenshot({ path: join(artifacts, "browser-intake.png") });
  });
  await check("once the plan arrives it comes first, the finished interview folds away, the planning notice goes, and the hint levels sit in the current phase", async () => {
    const asked = Date.now();
    const planned = mcpCall(base, info.agentToken, "paige_run_coaching_pipeline", { planText: "1. Find the greeting\n2. Say bonjour", issueSummary: "Greet in French" });
    await page.waitForSelector('[data-testid="phases"]', { timeout: 15_000 });
    // The fake model answers at once: this is Paige's own time, pipeline call to phases on screen.
    console.log(`plan call to phases on screen: ${Date.now() - asked} ms (fake model, no model time)`);
    await planned;
    const order = await page.evaluate(() => [...document.querySelectorAll('[data-testid="phases"], [data-testid="intake-fold"]')].map((e) => e.dataset.testid));
    if (JSON.stringify(order) !== '["phases","intake-fold"]') throw new Error(`order ${JSON.stringify(order)}`);
    if (await page.locator('[data-testid="intake-fold"]').evaluate((d) => d.open)) throw new Error("the finished interview is unfolded");
    await page.waitForSelector('[data-testid="phase"][data-current="true"] [data-testid="hint-levels"]');
    if ((await page.locator('[data-testid="plan-waiting"]').count()) !== 0) throw new Error("still waiting for the plan");
    // The "Turning Claude Code's plan into phases…" notice went with the plan's arrival.
    const lingering = await page.locator('[data-testid="toast"]', { hasText: "Turning Claude Code's plan" }).count();
    if (lingering !== 0) throw new Error("the planning notice lingers after the plan arrived");
  });
  await check("the window itself does not scroll with a session and its plan on screen: every panel scrolls inside", async () => {
    await noPageScroll(page, "the coaching layout");
  });
  await check("a collapsed folder shows it holds the hinted file", async () => {
    await page.waitForSelector('[data-testid="tree-item"][data-path="src/greet.js"].hint-glow', { timeout: 10_000 });
    await page.click('[data-testid="tree-item"][data-path="src"]');
    await page.waitForSelector('[data-testid="tree-item"][data-path="src"][data-hint-inside="true"]', { timeout: 2_000 });
    await page.click('[data-testid="tree-item"][data-path="src"]');
    await page.waitForSelector('[data-testid="tree-item"][data-path="src/greet.js"].hint-glow', { timeout: 2_000 });
  });
  // The learner's own line in phase 1, typed in the editor and saved (the check asks about it).
  const LEARNER_LINE = 'export const greeting = "bonjour";';
  let addedLine = null;
  await check("the learner adds a line to the phase's file in the editor and saves it", async () => {
    await page.click('.tab[data-path="src/greet.js"]');
    await page.waitForSelector('.tab.active[data-path="src/greet.js"]', { timeout: 5_000 });
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+End");
    await page.keyboard.type(LEARNER_LINE, { delay: 10 });
    await page.keyboard.press("Escape"); // any suggestion widget
    await page.keyboard.press("Control+S");
    const saved = await waitFor("the line on disk", () => {
      const text = readFileSync(join(project, "src", "greet.js"), "utf8");
      return text.includes("greeting") && text;
    });
    addedLine = saved.split("\n").find((l) => l.includes("greeting"));
    if (addedLine !== LEARNER_LINE) console.log(`(the editor typed ${JSON.stringify(addedLine)})`);
    await page.waitForSelector('.tab[data-path="src/greet.js"][data-dirty="false"]', { timeout: 10_000 });
  });
  await check("the learner marks the phase done: it shows done and the next phase is the current one", async () => {
    await page.click('[data-testid="phase"][data-current="true"] [data-testid="phase-done"]');
    await page.waitForSelector('[data-testid="phase"][data-number="1"][data-status="complete"]', { timeout: 5_000 });
    await page.waitForSelector('[data-testid="phase"][data-number="2"][data-current="true"][data-status="active"]', { timeout: 5_000 });
  });
  const card = '[data-testid="learning-check"][data-phase="1"]';
  await check("the phase's comprehension check shows progress, then a question quoting the line the learner added, with the keys in its answer box", async () => {
    const progress = await page.locator(`${card} [data-testid="learning-preparing"]`).textContent({ timeout: 5_000 });
    if (progress !== "Writing a question about your change…") throw new Error(`progress ${JSON.stringify(progress)}`);
    await page.waitForSelector(`${card}[data-state="ready"]`, { timeout: 15_000 });
    const calls = fake.callsOf("comprehension_check");
    if (calls.length !== 1) throw new Error(`${calls.length} comprehension_check calls`);
    const diff = JSON.parse(userText(calls[0].body)).learner_diff;
    if (!addedLines(diff).includes(addedLine)) throw new Error(`the diff sent lacks the learner's line: ${diff}`);
    const quotes = await page.locator(`${card} [data-testid="learning-quote"]`).allTextContents();
    if (quotes.length !== 2 || quotes.some((q) => q !== addedLine)) throw new Error(`quotes ${JSON.stringify(quotes)}`);
    // Nothing blocks: the next phase is the current one, its controls on screen.
    await page.waitForSelector('[data-testid="phase"][data-number="2"][data-current="true"] [data-testid="phase-done"]');
    const focused = await page.evaluate(() => {
      const active = document.activeElement;
      return active?.dataset.testid === "learning-answer" ? active.closest('[data-testid="learning-question"]').dataset.id : null;
    });
    const first = await page.locator(`${card} [data-testid="learning-question"]`).first().getAttribute("data-id");
    if (!focused || focused !== first) throw new Error(`the focus is not in the first question's answer box (${focused})`);
    await page.screenshot({ path: join(artifacts, "browser-learning-check.png") });
  });
  const ANSWER_RIGHT = "It gives other modules the French greeting, because greet should say bonjour";
  await check("typing an answer and pressing Enter grades it: progress, then the grade and why; the keys move to the next question", async () => {
    await page.keyboard.type("It gives other modules the French greeting,", { delay: 5 });
    await page.keyboard.press("Shift+Enter"); // a new line, not sent
    await page.keyboard.type("because greet should say bonjour", { delay: 5 });
    if (fake.callsOf("comprehension_grade").length) throw new Error("Shift+Enter sent the answer");
    await page.keyboard.press("Enter");
    await page.waitForSelector(`${card} [data-testid="learning-question"][data-status="grading"] [data-testid="learning-grading"]`, { timeout: 5_000 });
    const badge = page.locator(`${card} [data-testid="learning-grade"][data-grade="correct"]`);
    const text = await badge.textContent({ timeout: 15_000 });
    if (text !== "✓ Correct") throw new Error(`badge ${JSON.stringify(text)}`);
    const why = await page.locator(`${card} [data-testid="learning-why"]`).first().textContent();
    if (why !== "Right: you said what the line is for.") throw new Error(`why ${JSON.stringify(why)}`);
    const graded = fake.callsOf("comprehension_grade").map((c) => JSON.parse(userText(c.body)).learner_answer);
    if (JSON.stringify(graded) !== JSON.stringify([ANSWER_RIGHT.replace(", because", ",\nbecause")])) throw new Error(`graded answers ${JSON.stringify(graded)}`);
    const focused = await page.evaluate(() => document.activeElement?.closest('[data-testid="learning-question"]')?.dataset.status);
    if (focused !== "open") throw new Error(`the keys are not in the second question's box (${focused})`);
  });
  await check("a wrong answer to the second question shows Incorrect, and the next phase's hints say why they moved", async () => {
    await page.keyboard.type("no idea");
    await page.keyboard.press("Enter");
    await page.waitForSelector(`${card}[data-state="done"] [data-testid="learning-grade"][data-grade="incorrect"]`, { timeout: 15_000 });
    const reason = await page.locator('[data-testid="phase"][data-number="2"] [data-testid="hint-reason"]').textContent({ timeout: 5_000 });
    if (!reason?.includes("was not right")) throw new Error(`hint reason ${JSON.stringify(reason)}`);
    await page.waitForSelector('[data-testid="phase"][data-number="2"] [data-testid="hint-level"][data-level="region"][aria-checked="true"]', { timeout: 5_000 });
    await page.screenshot({ path: join(artifacts, "browser-learning-graded.png") });
  });
  await check("the learner's prompts to Claude Code show in the panel's gauge", async () => {
    for (const prompt of ["build the project", "what is the difference between String and &str?"]) {
      const hook = await fetch(`${base}/hooks/user-prompt-submit`, {
        method: "POST",
        headers: { authorization: `Bearer ${info.agentToken}`, "content-type": "application/json" },
        body: JSON.stringify({ session_id: "cc", hook_event_name: "UserPromptSubmit", prompt, cwd: project }),
      });
      if (!hook.ok) throw new Error(`hook: ${hook.status}`);
    }
    await page.waitForSelector('[data-testid="learning-gauge"][data-total="2"]', { timeout: 15_000 });
    const label = await page.locator('[data-testid="reliance-bar"]').getAttribute("aria-label");
    if (!label?.startsWith("How you asked Claude Code this session: 2 prompts:")) throw new Error(`gauge ${JSON.stringify(label)}`);
    const frames = await page.evaluate(() => window.paige.framesOf("learning:signals"));
    const last = frames.at(-1);
    if (last?.reliance.delegation !== 1) throw new Error(`"build the project" is not delegation: ${JSON.stringify(last)}`);
    await page.locator('[data-testid="coaching"]').screenshot({ path: join(artifacts, "browser-learning-gauge.png") });
  });
  await check("after a reload the panel shows the session as it stood: the typed description, the gauge and the answered check", async () => {
    await page.reload();
    await page.waitForSelector('[data-testid="conn-status"][data-state="open"]', { timeout: 15_000 });
    await page.waitForSelector('[data-testid="session-title"]', { timeout: 10_000 });
    const about = await page.locator(".session-about").textContent({ timeout: 5_000 });
    if (about !== "bonjour instead of hello") throw new Error(`the description after a reload: ${JSON.stringify(about)}`);
    await page.waitForSelector('[data-testid="learning-gauge"][data-total="2"]', { timeout: 10_000 });
    await page.waitForSelector('[data-testid="learning-check"][data-phase="1"][data-state="done"]', { timeout: 10_000 });
    const graded = await page.locator('[data-testid="learning-check"][data-phase="1"]').textContent();
    if (!/Incorrect/.test(graded ?? "")) throw new Error(`the answered check after a reload: ${JSON.stringify(graded)}`);
  });
  await check("ending from Claude Code (paige_end_session) shows the same wrap-up notice as the End button and puts the hints out", async () => {
    const ending = mcpCall(base, info.agentToken, "paige_end_session", { sessionTranscript: "Learner: done" });
    const notice = await page.locator('[data-testid="wrapping-up"]').textContent({ timeout: 5_000 });
    if (notice !== "Wrapping up… Paige is noting what you learned.") throw new Error(`notice ${JSON.stringify(notice)}`);
    await ending;
    await page.waitForSelector('[data-testid="start-notice"]', { timeout: 30_000 });
    if (await page.locator(".tree-row.hint-glow, .tree-row.hint-inside").count()) throw new Error("hints still lit after the session");
  });
  await check("with files open the topbar's Dashboard shows the dashboard over the editor, and choosing a tab brings the editor back", async () => {
    if (!(await page.locator(".tab").count())) throw new Error("no file open to test with");
    if (await page.locator('[data-testid="dash-learning"]').isVisible()) throw new Error("the dashboard shows over open files already");
    await page.click('[data-testid="dashboard-button"]');
    await page.waitForSelector('[data-testid="dash-learning"]', { state: "visible", timeout: 5_000 });
    await page.locator(".tab .tab-name").first().click();
    await page.waitForSelector('[data-testid="dash-learning"]', { state: "hidden", timeout: 5_000 });
  });
  await check("with the files closed the dashboard shows the learning signals: the prompts chart, its table, and the comprehension tally", async () => {
    while (await page.locator(".tab .tab-close").count()) await page.locator(".tab .tab-close").first().click();
    await page.waitForSelector('[data-testid="dash-learning"]', { state: "visible", timeout: 5_000 });
    const tally = await page.locator('[data-testid="comprehension-tally"]').textContent({ timeout: 10_000 });
    if (tally !== "1 correct · 0 partial · 1 incorrect · 0 skipped") throw new Error(`tally ${JSON.stringify(tally)}`);
    const buckets = await page.locator('[data-testid="reliance-bucket"]').evaluateAll((bars) => bars.map((b) => Number(b.dataset.total)));
    if (buckets.reduce((a, b) => a + b, 0) !== 2) throw new Error(`buckets ${JSON.stringify(buckets)}`);
    const summary = await page.locator('[data-testid="reliance-chart"]').getAttribute("aria-label");
    if (!summary?.includes("2 prompts")) throw new Error(`chart summary ${JSON.stringify(summary)}`);
    const shown = await page.locator('[data-testid="dash-solutions-shown"]').textContent();
    if (shown !== "0") throw new Error(`solutions shown ${JSON.stringify(shown)}`);
    await page.locator('[data-testid="dash-learning"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(artifacts, "browser-dashboard-learning.png") });
  });
  await check("the window itself does not scroll with the dashboard on screen", async () => {
    await noPageScroll(page, "the dashboard");
  });
  // Spaced review (issue 31): what the session found hard — the concept answered wrong (and any
  // knowledge gap the wrap-up stored) — is due at once.
  let dueBefore = 0; // the concept and the gap
  let reviewed = null;
  await check("the dashboard shows the reviews due after the session, and the count opens the review drawer listing them", async () => {
    const due = page.locator('[data-testid="reviews-due"]');
    const text = await due.textContent({ timeout: 10_000 });
    dueBefore = Number(await due.getAttribute("data-count"));
    if (!(dueBefore >= 1) || text !== `${dueBefore} review${dueBefore === 1 ? "" : "s"} due`) throw new Error(`due ${JSON.stringify(text)} (${dueBefore})`);
    await page.locator('[data-testid="dash-reviews"]').scrollIntoViewIfNeeded();
    await page.locator('[data-testid="dash-reviews"]').screenshot({ path: join(artifacts, "browser-dashboard-reviews.png") });
    await due.click();
    await page.waitForSelector('[data-testid="review"] [data-testid="review-item"]', { timeout: 10_000 });
    const items = await page.locator('[data-testid="review-item"]').evaluateAll((rows) => rows.map((r) => ({
      id: r.dataset.itemId, kind: r.dataset.kind, topic: r.querySelector('[data-testid="review-open"]')?.textContent,
      badge: r.querySelector('[data-testid="review-kind"]')?.textContent })));
    console.log(`reviews due: ${JSON.stringify(items)}`);
    // "no idea" to the second question made its concept an item; the wrap-up's gap is another.
    const concept = items.find((i) => i.kind === "concept");
    if (!concept || concept.badge !== "Concept") throw new Error(`no concept item: ${JSON.stringify(items)}`);
    const gap = items.find((i) => i.kind === "gap");
    if (gap?.topic !== GAP_TOPIC || gap.badge !== "Knowledge gap") throw new Error(`no gap item: ${JSON.stringify(items)}`);
    if (dueBefore !== items.length) throw new Error(`${dueBefore} due but ${items.length} listed`);
    const focused = await page.evaluate(() => document.activeElement?.dataset.testid);
    if (focused !== "review-open") throw new Error(`the keys are not on the first item (${focused})`);
    reviewed = concept;
  });
  await check("opening an item shows progress, then a question about its topic, with the keys in the answer box", async () => {
    await page.click(`[data-testid="review-item"][data-item-id="${reviewed.id}"] [data-testid="review-open"]`);
    const asking = await page.locator('[data-testid="review-asking"]').textContent({ timeout: 2_000 });
    if (asking !== "Writing a question…") throw new Error(`progress ${JSON.stringify(asking)}`);
    const question = await page.locator('[data-testid="review-question"]').textContent({ timeout: 15_000 });
    const calls = fake.callsOf("review_question");
    if (calls.length !== 1) throw new Error(`${calls.length} review_question calls`);
    const asked = JSON.parse(userText(calls[0].body)).item;
    if (asked.topic !== reviewed.topic || asked.kind !== "concept") throw new Error(`the model was asked about ${JSON.stringify(asked)}`);
    if (!question?.includes(`“${reviewed.topic}”`)) throw new Error(`question ${JSON.stringify(question)}`);
    const focused = await page.evaluate(() => document.activeElement?.dataset.testid);
    if (focused !== "review-answer") throw new Error(`the keys are not in the answer box (${focused})`);
  });
  const REVIEW_ANSWER = "It is what other modules see,\nbecause they import the same binding";
  await check("typing an answer (Shift+Enter a new line) and Enter grades it: progress, then the grade, why and when it comes back", async () => {
    const graded = fake.callsOf("comprehension_grade").length;
    await page.keyboard.type("It is what other modules see,", { delay: 5 });
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type("because they import the same binding", { delay: 5 });
    if (fake.callsOf("comprehension_grade").length !== graded) throw new Error("Shift+Enter sent the answer");
    await page.keyboard.press("Enter");
    await page.waitForSelector('[data-testid="review-grading"]', { timeout: 2_000 });
    const badge = await page.locator('[data-testid="review-grade"]').textContent({ timeout: 15_000 });
    if (badge !== "✓ Correct") throw new Error(`grade ${JSON.stringify(badge)}`);
    const why = await page.locator('[data-testid="review-why"]').textContent();
    if (why !== "Right: you said what the line is for.") throw new Error(`why ${JSON.stringify(why)}`);
    const answers = fake.callsOf("comprehension_grade").slice(graded).map((c) => JSON.parse(userText(c.body)).learner_answer);
    if (JSON.stringify(answers) !== JSON.stringify([REVIEW_ANSWER])) throw new Error(`graded answers ${JSON.stringify(answers)}`);
    const back = await page.locator('[data-testid="review-comes-back"]').textContent();
    const addressed = await page.locator('[data-testid="review-comes-back"]').getAttribute("data-addressed");
    if (!/^Again (tomorrow|in \d+ days)( — remembered: this concept counts as addressed)?$/.test(back ?? "")) throw new Error(`comes back ${JSON.stringify(back)}`);
    if ((addressed === "true") !== (back ?? "").includes("remembered")) throw new Error(`addressed ${addressed} but ${JSON.stringify(back)}`);
    console.log(`the review comes back: ${back}`);
    const last = (await page.evaluate(() => window.paige.framesOf("reviews:graded"))).at(-1);
    if (last?.rating !== "easy" && last?.rating !== "good") throw new Error(`rating ${JSON.stringify(last)}`);
    // The gap is still due: "Next review" has the keys.
    await page.waitForSelector('[data-testid="review-next"]', { timeout: 5_000 });
    const focused = await page.evaluate(() => document.activeElement?.dataset.testid);
    if (focused !== "review-next") throw new Error(`the keys are on ${focused}, not Next review`);
    await page.screenshot({ path: join(artifacts, "browser-review.png") });
  });
  await check("Enter on Next review opens the knowledge gap; a wrong answer shows ✗ Incorrect, back tomorrow, then All caught up", async () => {
    await page.keyboard.press("Enter");
    const asking = await page.locator('[data-testid="review-asking"]').textContent({ timeout: 2_000 });
    if (asking !== "Writing a question…") throw new Error(`progress ${JSON.stringify(asking)}`);
    const topic = await page.locator('[data-testid="review-topic"]').textContent();
    if (topic !== GAP_TOPIC) throw new Error(`next item ${JSON.stringify(topic)}`);
    const question = await page.locator('[data-testid="review-question"]').textContent({ timeout: 15_000 });
    if (!question?.includes(`“${GAP_TOPIC}”`)) throw new Error(`question ${JSON.stringify(question)}`);
    await page.waitForFunction(() => document.activeElement?.dataset.testid === "review-answer", null, { timeout: 2_000 });
    await page.keyboard.type("no idea");
    await page.keyboard.press("Enter");
    const badge = await page.locator('[data-testid="review-grade"]').textContent({ timeout: 15_000 });
    if (badge !== "✗ Incorrect") throw new Error(`grade ${JSON.stringify(badge)}`);
    const back = await page.locator('[data-testid="review-comes-back"]').textContent();
    console.log(`the gap comes back: ${back}`);
    if (back !== "Again tomorrow") throw new Error(`comes back ${JSON.stringify(back)}`);
    const caughtUp = await page.locator('[data-testid="review-caught-up"]').textContent({ timeout: 5_000 });
    if (!caughtUp?.startsWith("All caught up")) throw new Error(`caught up ${JSON.stringify(caughtUp)}`);
    const focused = await page.evaluate(() => document.activeElement?.dataset.testid);
    if (focused !== "review-done") throw new Error(`the keys are on ${focused}, not Close`);
    await page.screenshot({ path: join(artifacts, "browser-review-caught-up.png") });
  });
  await check("Escape closes the review drawer, and the dashboard says no reviews are due", async () => {
    await page.keyboard.press("Escape");
    await page.waitForSelector('[data-testid="review"]', { state: "detached", timeout: 2_000 });
    const none = await page.locator('[data-testid="reviews-none"]').textContent({ timeout: 5_000 });
    if (none !== "No reviews due") throw new Error(`after the reviews: ${JSON.stringify(none)}`);
  });
  await check("Export learning record downloads the signed record, and `paige record verify` accepts it", async () => {
    const downloaded = page.waitForEvent("download", { timeout: 15_000 });
    downloaded.catch(() => {}); // awaited below unless the export failed
    await page.click('[data-testid="record-export-button"]');
    await page.waitForSelector('[data-testid="record-saved"], [data-testid="record-error"]', { timeout: 15_000 });
    const error = await page.locator('[data-testid="record-error"]').count();
    if (error) throw new Error(`the export failed: ${await page.locator('[data-testid="record-error"] .error-sentence').textContent()}`);
    const download = await downloaded;
    const file = join(work, download.suggestedFilename());
    await download.saveAs(file);
    const content = readFileSync(file, "utf8");
    const lines = content.split("\n").filter((l) => l.trim()).length;
    const summary = await page.locator('[data-testid="record-summary"]').textContent();
    if (!summary?.startsWith(`Saved ${lines} line${lines === 1 ? "" : "s"} (`) || !summary.includes(download.suggestedFilename())) throw new Error(`summary ${JSON.stringify(summary)} for ${lines} lines`);
    const key = await page.locator('[data-testid="record-key"]').textContent();
    const command = await page.locator('[data-testid="record-verify"]').textContent();
    if (command !== `paige record verify ${download.suggestedFilename()} --key ${key}`) throw new Error(`verify command ${JSON.stringify(command)}`);
    await page.locator('[data-testid="dash-reviews"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(artifacts, "browser-record-export.png") });
    const env = { ...process.env, DATA_DIR: dataDir };
    const help = spawnSync(bin, ["record", "--help"], { env, encoding: "utf8" });
    if (help.status !== 0) {
      console.log(`SKIPPED: \`paige record verify\` — this paige binary has no \`record\` command yet (${(help.stderr || help.stdout).trim().split("\n")[0]})`);
      return;
    }
    for (const args of [[file], [file, "--key", key]]) {
      const verified = spawnSync(bin, ["record", "verify", ...args], { env, encoding: "utf8" });
      if (verified.status !== 0) throw new Error(`paige record verify ${args.slice(1).join(" ")} exited ${verified.status}: ${verified.stderr || verified.stdout}`);
    }
    // And a tampered copy fails.
    const tampered = join(work, "tampered.jsonl");
    const rows = content.split("\n");
    rows[1] = rows[1].replace(/"(\w+)":(\d+)/, (_, k, n) => `"${k}":${Number(n) + 1}`);
    writeFileSync(tampered, rows.join("\n"));
    if (rows.join("\n") !== content && spawnSync(bin, ["record", "verify", tampered], { env }).status === 0) throw new Error("a tampered record verifies");
  });
  await check("a later session offers Interview me first, and clicking it starts the interview", async () => {
    await page.waitForSelector('[data-testid="start-form"]', { timeout: 30_000 });
    await page.fill('[data-testid="start-title"]', "Say goodbye in French");
    await page.click('[data-testid="start-submit"]');
    await page.waitForSelector('[data-testid="session-title"]:text-is("Say goodbye in French")', { timeout: 10_000 });
    // Only the first session opens with the interview: this one waits for the plan.
    await page.waitForSelector('[data-testid="plan-waiting"]', { timeout: 2_000 });
    await page.click('[data-testid="intake-start"]');
    const question = await page.locator('[data-testid="intake-line"][data-role="interviewer"]:not([data-streaming])').textContent({ timeout: 10_000 });
    if (!question?.includes("project")) throw new Error(`first question ${JSON.stringify(question)}`);
    const countdown = await page.locator('[data-testid="intake-countdown"]').textContent();
    if (countdown !== "00:05" && countdown !== "00:04") throw new Error(`countdown ${JSON.stringify(countdown)}`);
  });
  await check("Skip for now ends the interview at once: it says so, offers it again, and the panel waits for the plan", async () => {
    await page.click('[data-testid="intake-skip"]');
    const skipped = await page.locator('[data-testid="intake-coding-question"]').textContent({ timeout: 5_000 });
    if (!skipped?.includes("You skipped the interview for now")) throw new Error(`after the skip: ${JSON.stringify(skipped)}`);
    await page.waitForSelector('[data-testid="intake-take-later"]');
    await page.waitForSelector('[data-testid="plan-waiting"]', { timeout: 2_000 });
    if (!skipped.includes("opens again with your next session")) throw new Error(`after the skip: ${JSON.stringify(skipped)}`);
    await page.screenshot({ path: join(artifacts, "browser-intake-skipped.png") });
    const frames = await page.evaluate(() => window.paige.framesOf("intake:transition").map((f) => f.reason));
    if (frames.at(-1) !== "skipped") throw new Error(`transitions: ${JSON.stringify(frames)}`);
  });
  await check("a file created on disk appears in the explorer", async () => {
    // Its folder open (a reload above closed it).
    const icon = await page.locator('[data-testid="tree-item"][data-path="src"] .tree-icon').textContent();
    if (icon === "▸") await page.click('[data-testid="tree-item"][data-path="src"]');
    writeFileSync(join(project, "src", "added.js"), "// new\n");
    await page.waitForSelector('[data-testid="tree-item"][data-path="src/added.js"]', { timeout: 15_000 });
  });
  await check("paige serve restarted: the open tab reconnects by itself with the kept token and shows the session as it was", async () => {
    const before = await page.evaluate(() => window.paige.framesOf("session:started").length);
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    await page.waitForSelector('[data-testid="conn-status"]:not([data-state="open"])', { timeout: 10_000 });
    server = serve(info.port);
    await page.waitForSelector('[data-testid="conn-status"][data-state="open"]', { timeout: 30_000 });
    // The restarted Paige resumed the session; the reconnected tab was given it as it stands.
    await waitFor("session:started after the reconnect", () => page.evaluate((n) => window.paige.framesOf("session:started").length > n, before), 10_000);
    const shown = await page.locator('[data-testid="session-title"]').textContent();
    if (shown !== "Say goodbye in French") throw new Error(`session after the restart: ${JSON.stringify(shown)}`);
    await page.waitForSelector('[data-testid="plan-waiting"]', { timeout: 5_000 });
  });
  await check("restarted with no OS layer (a new UI token, kept in memory only): the open tab says its address is out of date and stops retrying", async () => {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    server = serve(info.port, { PAIGE_JAIL: "0", PAIGE_LANDLOCK: "0" });
    await page.waitForSelector('[data-testid="conn-status"][data-state="refused"]', { timeout: 30_000 });
    const said = await page.locator(".refused-banner").textContent();
    if (!said?.includes("Open the ui: address Paige printed last")) throw new Error(`banner: ${JSON.stringify(said)}`);
    const kept = JSON.parse(readFileSync(join(dataDir, "tokens.json"), "utf8"));
    if ("ui" in kept || JSON.parse(readFileSync(join(dataDir, "run", "server.json"), "utf8")).token) throw new Error("the UI token is on disk");
  });
  await check("the page raised no uncaught errors", async () => {
    if (errors.length) throw new Error(errors.join("; "));
  });
} catch (err) {
  fail("smoke test setup", err);
} finally {
  await browser?.close();
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  await fake.close();
  rmSync(work, { recursive: true, force: true });
}
process.exit(summary("ui smoke"));

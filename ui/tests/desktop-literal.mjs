// Issue 28 in the real window: coaching starts by itself with a *literal* model. The app's
// terminal runs the real `claude` (PAIGE_TEST_CLAUDE) as a learner's: signed in to Claude
// Code (its login in HOME, which Paige seeds its own Claude Code config dir from; the app
// never hands Claude Code Paige's own key), its model calls going to the fake Messages API.
// The literal model calls Paige's pipeline only when a prompt it is sent tells it to, and
// otherwise answers in words. The learner starts a session in the panel, skips the
// interview and types nothing in the terminal: the plan must arrive on screen.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { check, skipped, sleep, waitFor } from "./checks.mjs";
import { TERMINAL, alive, app, signedInHome, typeIn, wd, withApp } from "./desktop-driver.mjs";
import { lastUserText, startFakeAnthropic, toolUse } from "./fake-anthropic.mjs";
import { intakeReplies } from "./intake-script.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const artifacts = resolve(process.env.PAIGE_ARTIFACTS ?? join(here, "../test-artifacts"));
const PLAN_TOOL = "mcp__paige__paige_run_coaching_pipeline";
/** The kickoff's instruction (prompts/coach-kickoff): the only words that make this model plan. */
const TOLD_TO_PLAN = "Call paige_run_coaching_pipeline once";

/** The literal model: with tools to call and the kickoff's instruction in the prompt it was
 * just sent, it calls the pipeline; anything else (Claude Code's own side calls, the tool's
 * result, a learner's chat) gets words. */
function literalModel(body) {
  if ((body.tools ?? []).length > 0 && lastUserText(body).includes(TOLD_TO_PLAN)) {
    return toolUse(PLAN_TOOL, { planText: "1. Find where the token is stored in src/auth.py\n2. Refresh it before it expires", issueSummary: "Login keeps the expired token." });
  }
  return "Let's look at the code together.";
}

const phase = (number, title) => ({
  number, title, description: `${title} in src/auth.py.`, expected_files: ["src/auth.py"], hint_level: "file",
  hints: { file_hints: [{ path: "src/auth.py", style: "suggested" }], line_hints: [] }, knowledge_gap_opportunities: [],
});
const coachPlan = { phases: [phase(1, "Find the stored token"), phase(2, "Refresh before expiry")], memory_connection: null, estimated_difficulty: "beginner" };

/** The processes whose command line names `needle` (a path only this run uses). */
function processesNaming(needle) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle)) found.push(Number(pid));
    } catch {}
  }
  return found;
}

/** The learner types `/exit` into the window's Claude Code and waits for the terminal's offer
 * to start it again; returns the terminal's input element. */
async function exitClaudeCode({ s, find, terminalText }) {
  await typeIn({ s, find }, TERMINAL, "/exit");
  await sleep(800);
  await typeIn({ s, find }, TERMINAL, "\r");
  await waitFor("Claude Code's exit in the terminal", async () => (await terminalText()).includes("Press Enter to start it again"), 30_000);
}

/** Runs the checks in a fresh app under `work`; skipped (said) without PAIGE_TEST_CLAUDE. */
export async function literalModelPlansInTheWindow(work) {
  const claude = process.env.PAIGE_TEST_CLAUDE;
  if (!claude) {
    skipped("the literal-model window test needs PAIGE_TEST_CLAUDE, a real `claude`");
    return;
  }
  const project = join(work, "literal-project");
  mkdirSync(join(project, "src"), { recursive: true });
  writeFileSync(join(project, "src", "auth.py"), "TOKEN = None\n\ndef login(user):\n    global TOKEN\n    TOKEN = fetch_token(user)\n");
  const data = join(work, "literal-data");
  // The learner's HOME after they installed Claude Code and logged in (claude.ai): onboarding
  // done, this folder trusted, the OAuth login stored. Nothing else tells Claude Code a key.
  const home = signedInHome(join(work, "literal-home"), project);
  const fake = await startFakeAnthropic({ replies: { coach_agent: coachPlan, ...intakeReplies }, agent: literalModel });
  const agentCalls = () => fake.requests.filter((r) => r.callType === null && r.url.startsWith("/v1/messages")).map((r) => ({ ...r, body: JSON.parse(r.body) }));
  const env = { ...process.env, PATH: `${dirname(claude)}:${process.env.PATH}`, HOME: home, DATA_DIR: data, ANTHROPIC_API_KEY: "sk-ant-e2e-paige-own", ANTHROPIC_BASE_URL: fake.base, DISABLE_AUTOUPDATER: "1" };
  delete env.PAIGE_AGENT_CMD;
  delete env.PROJECT_DIR;
  // The guard's self-check for this Claude Code on these layers counts as done (its own tests
  // run it): here it would only take both cores for minutes beside the window. `paige doctor`
  // names where the app keeps its report.
  const doctor = spawnSync(join(dirname(app), "paige"), ["doctor"], { encoding: "utf8", env: { ...env, PROJECT_DIR: project } });
  const [, version, kept] = doctor.stdout.match(/not checked against Claude Code (\S+) on these layers yet: .*\(report: (.+)\)/) ?? [];
  if (!kept) throw new Error(`paige doctor names no guard report:\n${doctor.stdout}${doctor.stderr}`);
  mkdirSync(dirname(kept), { recursive: true });
  const report = { claude_version: version, passed: true, held: 1, escaped: 0, skipped: 0, errors: 0, failed_attempts: [], seconds: 1 };
  writeFileSync(kept, JSON.stringify(report));
  await withApp({ env, args: [project] }, async ({ s, find, exec, click, terminalText }) => {
    const shown = (testid) => exec(`return document.querySelector('[data-testid="${testid}"]') !== null`);
    await check("the window's terminal runs the real Claude Code, signed in, idle at its prompt: it asks the model nothing with tools", async () => {
      await waitFor("connected", async () => (await exec("return document.querySelector('[data-testid=conn-status]')?.dataset.state")) === "open");
      // Claude Code's start-up calls (a quota check) come first; then it waits for a prompt.
      await waitFor("Claude Code's first model call", () => agentCalls().length > 0, 60_000).catch(async (err) => {
        throw new Error(`${err.message}; the terminal shows ${JSON.stringify((await terminalText()).slice(-600))}`);
      });
      await waitFor("Claude Code's prompt on screen", async () => (await terminalText()).trim().length > 0, 30_000);
      const asked = agentCalls().filter((c) => (c.body.tools ?? []).length > 0);
      if (asked.length) throw new Error(`Claude Code asked with tools before any session: ${JSON.stringify(asked.map((c) => lastUserText(c.body).slice(0, 200)))}`);
      // The report `paige doctor` named is the one the app looks for: no check runs again.
      const checking = processesNaming("--guard-report").filter((pid) => processesNaming(data).includes(pid));
      if (checking.length) throw new Error(`the app runs the guard check beside the report doctor named (${checking.join(", ")})`);
    });
    let skippedAt = 0;
    await check("the learner starts a session in the panel and skips the interview, typing nothing in the terminal", async () => {
      await waitFor("the start form", () => find('[data-testid="start-view"] [data-testid="start-form"]'));
      await wd("POST", `${s}/element/${await find('[data-testid="start-title"]')}/value`, { text: "Login keeps an expired token" });
      await click('[data-testid="start-submit"]');
      await waitFor("the interview's Skip for now", () => shown("intake-skip"), 20_000);
      await click('[data-testid="intake-skip"]');
      skippedAt = Date.now();
      await waitFor("the panel waiting for the plan", () => shown("plan-waiting"), 5_000);
    });
    await check("Claude Code gets Paige's kickoff as its prompt and the literal model plans: the phases show in the panel", async () => {
      await waitFor("the phases", () => shown("phases"), 120_000).catch(async (err) => {
        const told = agentCalls().filter((c) => lastUserText(c.body).includes(TOLD_TO_PLAN)).length;
        throw new Error(`${err.message}; ${agentCalls().length} calls from Claude Code, ${told} told to plan; the terminal shows ${JSON.stringify((await terminalText()).slice(-600))}`);
      });
      const shownAt = Date.now();
      const kickedOff = agentCalls().find((c) => lastUserText(c.body).includes(TOLD_TO_PLAN))?.at ?? NaN;
      const planned = fake.requests.find((r) => r.callType === "coach_agent")?.at ?? NaN;
      console.log(`     interview skipped to the plan on screen: ${shownAt - skippedAt} ms: to Claude Code's request with the kickoff ${kickedOff - skippedAt} ms, then to Paige's coach call ${planned - kickedOff} ms, then to the phases on screen ${shownAt - planned} ms (an instant fake model)`);
      const titles = await exec("return [...document.querySelectorAll('[data-testid=phase]')].map((p) => p.dataset.number)");
      if (JSON.stringify(titles) !== '["1","2"]') throw new Error(`phases ${JSON.stringify(titles)}`);
      mkdirSync(artifacts, { recursive: true });
      writeFileSync(join(artifacts, "desktop-literal.png"), Buffer.from(await wd("GET", `${s}/screenshot`), "base64"));
    });
    await check("Claude Code asked with its own login, never Paige's key, and was told to plan once", async () => {
      const calls = agentCalls();
      const keyed = calls.filter((c) => c.apiKey !== undefined || !String(c.authorization).startsWith("Bearer sk-ant-oat01-e2e-window"));
      if (keyed.length) throw new Error(`calls not on the learner's login: ${JSON.stringify(keyed.map((c) => [c.apiKey, c.authorization]))}`);
      const told = calls.filter((c) => (c.body.tools ?? []).length > 0 && lastUserText(c.body).includes(TOLD_TO_PLAN));
      if (told.length !== 1) throw new Error(`${told.length} prompts told Claude Code to plan`);
    });
    await check("the learner marks phase 1 done in the panel: Claude Code, idle, is told so and which phase is next", async () => {
      await click('[data-testid="phase"][data-current="true"] [data-testid="phase-done"]');
      const told = () => agentCalls().find((c) => lastUserText(c.body).includes("The learner marked phase 1 done"));
      const call = await waitFor("Claude Code's request with the word", told, 60_000).catch(async (err) => {
        throw new Error(`${err.message}; the terminal shows ${JSON.stringify((await terminalText()).slice(-400))}`);
      });
      if (!lastUserText(call.body).includes("Phase 2 is next: Refresh before expiry.")) throw new Error(`told: ${lastUserText(call.body).slice(0, 400)}`);
    });
    // Issue 40's restart in the app: the learner leaves Claude Code and starts it again from
    // the terminal's own prompt; what they marked done meanwhile reaches the new one.
    await check("the learner exits Claude Code, marks phase 2 done, and presses Enter: the restarted Claude Code is told of it", async () => {
      await exitClaudeCode({ s, find, terminalText });
      await click('[data-testid="phase"][data-current="true"] [data-testid="phase-done"]');
      const startedAgain = Date.now();
      await typeIn({ s, find }, TERMINAL, "\r");
      const told = () => agentCalls().find((c) => c.at > startedAgain && lastUserText(c.body).includes("The learner marked phase 2 done"));
      const call = await waitFor("the restarted Claude Code told of phase 2", told, 90_000).catch(async (err) => {
        throw new Error(`${err.message}; the terminal shows ${JSON.stringify((await terminalText()).slice(-500))}`);
      });
      console.log(`     the restarted Claude Code was told of phase 2 ${call.at - startedAgain} ms after Enter`);
    });
    // Closed as a window manager's close button does (close-window.py): the app shuts down.
    await check("closing the window ends the app and its Claude Code, jail and all", async () => {
      const { pid } = JSON.parse(readFileSync(join(data, "run", "server.json"), "utf8"));
      if (processesNaming(data).length === 0) throw new Error("no Claude Code was running");
      execFileSync(process.env.PAIGE_TEST_PYTHON ?? "python3", [join(here, "close-window.py"), String(pid)], { timeout: 10_000 });
      await waitFor("the app to exit", () => !alive(pid), 15_000);
      await waitFor("no process naming the app's data dir", () => processesNaming(data).length === 0, 10_000).catch((err) => {
        const left = processesNaming(data).map((p) => `${p}: ${readFileSync(`/proc/${p}/cmdline`, "utf8").replaceAll("\0", " ").slice(0, 120)}`);
        throw new Error(`${err.message}: ${left.join("; ")}`);
      });
    });
  });
  // The app opened again on the same project: the session it left is live again as it was,
  // and the new Claude Code is not told to plan a session that has its plan.
  const toldBefore = agentCalls().filter((c) => lastUserText(c.body).includes(TOLD_TO_PLAN)).length;
  await withApp({ env, args: [project] }, async ({ s, find, exec, click, terminalText }) => {
    const shown = (testid) => exec(`return document.querySelector('[data-testid="${testid}"]') !== null`);
    await check("the app opened again resumes the session as it was, and its new Claude Code is not told to plan it again", async () => {
      await waitFor("the phases", () => exec("return document.querySelectorAll('[data-testid=phase]').length === 2"), 30_000);
      const title = await exec("return document.querySelector('[data-testid=session-title]')?.textContent");
      if (title !== "Login keeps an expired token") throw new Error(`session after reopening: ${JSON.stringify(title)}`);
      await waitFor("Claude Code's prompt", async () => (await terminalText()).includes("for shortcuts"), 60_000);
      await sleep(4_000);
      const told = agentCalls().filter((c) => lastUserText(c.body).includes(TOLD_TO_PLAN)).length;
      if (told !== toldBefore) throw new Error(`told to plan ${told - toldBefore} more time(s) after reopening`);
    });
    // Issue 40's other order in the app: the session first, then Claude Code. The learner
    // leaves Claude Code, ends the session and starts the next one with no Claude Code running
    // (the interview they skipped opens again; they skip it again); Enter starts Claude Code,
    // which is given the kickoff once and plans.
    await check("with Claude Code exited, the learner starts the next session, then presses Enter: the new Claude Code plans it", async () => {
      await exitClaudeCode({ s, find, terminalText });
      await click('[data-testid="end-session"]');
      await waitFor("the start form", () => find('[data-testid="start-view"] [data-testid="start-form"]'), 60_000);
      await typeIn({ s, find }, '[data-testid="start-title"]', "Refresh the token in time");
      await click('[data-testid="start-submit"]');
      await waitFor("the skipped interview, offered again", () => shown("intake-skip"), 20_000);
      await click('[data-testid="intake-skip"]');
      await waitFor("the panel waiting for the plan", () => shown("plan-waiting"), 5_000);
      await sleep(3_000);
      const toldBeforeEnter = agentCalls().filter((c) => lastUserText(c.body).includes(TOLD_TO_PLAN)).length;
      const startedAgain = Date.now();
      await typeIn({ s, find }, TERMINAL, "\r");
      await waitFor("the new session's phases", () => shown("phases"), 120_000).catch(async (err) => {
        throw new Error(`${err.message}; the terminal shows ${JSON.stringify((await terminalText()).slice(-500))}`);
      });
      const title = await exec("return document.querySelector('[data-testid=session-title]')?.textContent");
      if (title !== "Refresh the token in time") throw new Error(`planned session ${JSON.stringify(title)}`);
      const kicked = agentCalls().filter((c) => lastUserText(c.body).includes(TOLD_TO_PLAN));
      if (kicked.length !== toldBeforeEnter + 1) throw new Error(`${kicked.length - toldBeforeEnter} kickoffs after Enter`);
      console.log(`     session first, then Claude Code: the kickoff reached it ${kicked.at(-1).at - startedAgain} ms after Enter`);
    });
  });
  await fake.close();
}

// Issue 42 in the real window: governed mode by construction. The app's terminal runs the real
// `claude` (PAIGE_TEST_CLAUDE) in a project with `.orchestration/`, signed in as a learner's,
// its model calls going to the fake Messages API. Claude Code starts with the whole project
// read-only (no intent selected); the model selects INT-001 when the operator's prompt asks
// for its work, is told to end its turn, and Paige starts Claude Code again in INT-001's view
// in the same terminal, continuing the conversation; told to go on, the model selects INT-001
// again and writes the file INT-001 owns. It lands, on the ledger under INT-001; a write
// outside the scope from the first Claude Code's view would have met a read-only project.
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { check, skipped, sleep, waitFor } from "./checks.mjs";
import { TERMINAL, signedInHome, typeIn, withApp } from "./desktop-driver.mjs";
import { lastUserText, startFakeAnthropic, toolUse } from "./fake-anthropic.mjs";

const SELECT = "mcp__paige__select_active_intent";
const ASKED = "Write the release notes in notes/";
const INTENTS = `active_intents:
  - id: INT-001
    name: Write the release notes
    status: IN_PROGRESS
    owned_scope: ["notes/**"]
`;

/** Whether the request answers the call `id`: its result is in a message after the model's last. */
function answers(body, id) {
  const messages = body.messages ?? [];
  const after = messages.slice(messages.findLastIndex((m) => m.role === "assistant") + 1);
  return after.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === "tool_result" && b.tool_use_id === id));
}

/** The live processes whose environment holds `NAME=value`. */
function withEnv(entry) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(entry)) found.push(Number(pid));
    } catch {}
  }
  return found;
}

/** The Claude Code processes (not the jail or gate around them) whose environment holds `entry`. */
const claudeWith = (entry) => withEnv(entry).filter((pid) => {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return argv.includes("--mcp-config") && (argv[0].endsWith("/claude") || argv[0] === "claude");
  } catch {
    return false;
  }
});

/** Whether `path` is writable as process `pid` sees the file system: the options of the
 * mount that holds it (the longest mount point above it), by construction. */
function writableFor(pid, path) {
  const unescape = (p) => p.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
  let best = null;
  for (const line of readFileSync(`/proc/${pid}/mountinfo`, "utf8").split("\n").filter(Boolean)) {
    const fields = line.split(" ");
    const point = unescape(fields[4]);
    const holds = path === point || path.startsWith(point.endsWith("/") ? point : `${point}/`);
    if (holds && (!best || point.length >= best.point.length)) best = { point, rw: fields[5].split(",")[0] === "rw" };
  }
  if (!best) throw new Error(`no mount holds ${path} for ${pid}`);
  return best.rw;
}

/** Runs the checks in a fresh app under `work`; skipped (said) without PAIGE_TEST_CLAUDE. */
export async function governedIntentViewInTheWindow(work) {
  const claude = process.env.PAIGE_TEST_CLAUDE;
  if (!claude) {
    skipped("the governed window test needs PAIGE_TEST_CLAUDE, a real `claude`");
    return;
  }
  const project = join(work, "governed-project");
  mkdirSync(join(project, "src"), { recursive: true });
  mkdirSync(join(project, ".orchestration"), { recursive: true });
  writeFileSync(join(project, "src", "app.py"), "print('hello')\n");
  writeFileSync(join(project, ".orchestration", "active_intents.yaml"), INTENTS);
  const notes = join(realpathSync(project), "notes", "release.md");
  const data = join(work, "governed-data");
  const home = signedInHome(join(work, "governed-home"), project);
  // The model: selects INT-001 when asked for its work, again when told it runs in its view,
  // then writes INT-001's file; words for everything else.
  const model = (body) => {
    if (!(body.tools ?? []).length) return "Noted.";
    const told = lastUserText(body);
    if (told.includes(ASKED)) return toolUse(SELECT, { intent_id: "INT-001" }, "toolu_select_1");
    if (told.includes("now in INT-001's view")) return toolUse(SELECT, { intent_id: "INT-001" }, "toolu_select_2");
    if (answers(body, "toolu_select_2")) return toolUse("Write", { file_path: notes, content: "# Release notes\n" }, "toolu_write");
    return "Done.";
  };
  const fake = await startFakeAnthropic({ agent: model });
  const calls = () => fake.requests.filter((r) => r.callType === null && r.url.startsWith("/v1/messages")).map((r) => ({ ...r, body: JSON.parse(r.body) }));
  const env = { ...process.env, PATH: `${dirname(claude)}:${process.env.PATH}`, HOME: home, DATA_DIR: data, ANTHROPIC_API_KEY: "sk-ant-e2e-paige-own", ANTHROPIC_BASE_URL: fake.base, DISABLE_AUTOUPDATER: "1" };
  delete env.PAIGE_AGENT_CMD;
  delete env.PROJECT_DIR;
  await withApp({ env, args: [project] }, async ({ s, find, exec, terminalText }) => {
    let before = [];
    await check("governed mode starts Claude Code in the window with no intent selected: the whole project read-only", async () => {
      await waitFor("Claude Code's prompt", async () => (await terminalText()).includes("for shortcuts"), 60_000);
      before = withEnv("PAIGE_VIEW_INTENT=");
      const [first] = claudeWith("PAIGE_VIEW_INTENT=");
      if (!first) throw new Error(`no Claude Code runs in the view before an intent (${before.length} processes with it)`);
      const root = realpathSync(project);
      for (const path of [root, join(root, "src", "app.py"), join(root, "notes")]) {
        if (writableFor(first, path)) throw new Error(`${path} is writable to the Claude Code of no intent`);
      }
      const notices = await exec(`return window.paige.framesOf("coaching:message").map((f) => f.message)`);
      const mode = notices.find((m) => m.startsWith("Governed mode"));
      if (!mode?.includes("can write only the folders of the intent it selected")) throw new Error(`the mode's notice: ${JSON.stringify(notices)}`);
    });
    let selected = NaN;
    await check("Claude Code that selects INT-001 is told to end its turn, and is started again in INT-001's view in the same terminal", async () => {
      await sleep(2_000);
      await typeIn({ s, find }, TERMINAL, ASKED);
      await waitFor("the prompt on screen", async () => (await terminalText()).includes("release notes"), 20_000);
      await sleep(500);
      await typeIn({ s, find }, TERMINAL, "\r");
      await waitFor("the relaunch", async () => (await terminalText()).includes("starting it again in INT-001's view"), 90_000);
      // The request that answers the select carries what its PostToolUse said.
      const endTurn = calls().find((c) => JSON.stringify(c.body).includes("End your turn now: Paige starts Claude Code again in INT-001's view"));
      if (!endTurn) throw new Error("the select's result did not tell the model to end its turn");
      selected = endTurn.at;
      if (!JSON.stringify(endTurn.body).includes("started before any intent was selected")) throw new Error("it was not told its view has no intent");
    });
    await check("the Claude Code started again continues the conversation and, told to go on, writes INT-001's file", async () => {
      const noted = await waitFor("the note to go on", () => calls().find((c) => lastUserText(c.body).includes("now in INT-001's view")), 60_000);
      console.log(`     the switch to INT-001's view: ${noted.at - selected} ms from the select's result to the note`);
      if (!JSON.stringify(noted.body.messages).includes(ASKED)) throw new Error("the restarted Claude Code does not carry the conversation (--continue)");
      const left = withEnv("PAIGE_VIEW_INTENT=");
      if (left.length) throw new Error(`the first Claude Code still runs: ${left.join(", ")} (it was ${before.join(", ")})`);
      const [next] = claudeWith("PAIGE_VIEW_INTENT=INT-001");
      if (!next) throw new Error("no Claude Code runs in INT-001's view");
      const root = realpathSync(project);
      if (!writableFor(next, join(root, "notes"))) throw new Error("notes/ is read-only in INT-001's view");
      for (const path of [root, join(root, "src", "app.py"), join(root, ".orchestration")]) {
        if (writableFor(next, path)) throw new Error(`${path} is writable in INT-001's view`);
      }
      // Claude Code asks its human before a write (its manual mode): the operator says yes.
      for (let approvals = 0; !existsSync(notes) && approvals < 4; approvals++) {
        await waitFor("the write's question", async () => existsSync(notes) || /Do you want to (create|make)/.test((await terminalText()).split("INT-001's view").at(-1)), 60_000);
        if (!existsSync(notes)) await typeIn({ s, find }, TERMINAL, "\r");
        await waitFor("the file", () => existsSync(notes), 5_000).catch(() => {});
      }
      if (readFileSync(notes, "utf8") !== "# Release notes\n") throw new Error(`notes/release.md holds ${JSON.stringify(readFileSync(notes, "utf8"))}`);
      const ledger = () => {
        try {
          return readFileSync(join(project, ".orchestration", "agent_trace.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
        } catch {
          return [];
        }
      };
      const entry = await waitFor("the ledger entry", () => ledger().find((e) => e.file === "notes/release.md" && e.kind === "mutation" && e.intent_id === "INT-001"), 10_000).catch(() => null);
      if (!entry) throw new Error(`notes/release.md is not on the ledger under INT-001: ${JSON.stringify(ledger()).slice(0, 600)}`);
    });
  });
  await fake.close();
}

// Coaching in the real window (desktop-e2e.mjs runs it): the interview, a plan from Claude Code's
// MCP call as phases, "just show me", the Observer's nudges, Explain This, comprehension checks
// and the wrap-up, Paige's model a fake Messages API.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { check, sleep, waitFor } from "./checks.mjs";
import { addedLines, comprehensionGrade, comprehensionQuestions, promptExample, startFakeAnthropic, userText } from "./fake-anthropic.mjs";
import { mcpCall, wd, withApp } from "./desktop-driver.mjs";
import { ANSWER, DEBUG_FACTS, RECORDER, TIMEBOX_MS, intakeReplies, judgeDebug, judgeRecording } from "./intake-script.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const artifacts = resolve(process.env.PAIGE_ARTIFACTS ?? join(here, "../test-artifacts"));

/** Runs the checks in a fresh app under `work`; returns the app's pid, for the clean-up. */
export async function coachingInTheWindow(work) {
  // Coaching from the panel: a session started by typing work, Claude Code's plan (the MCP
  // tool, as Claude Code calls it) becomes phases in the panel, "just show me" opens Paige's
  // worked example in a read-only drawer and leaves the project as it was, the Observer nudges,
  // and "Explain this" on a selection in Monaco explains it in a drawer. Paige's model is a fake
  // Messages API here (ANTHROPIC_BASE_URL).
  const coachProject = join(work, "coach-project");
  mkdirSync(join(coachProject, "src"), { recursive: true });
  // Lines no analogous example would contain: the worked example's request must not carry them.
  const learnerLines = ["def upload_chunk(session, chunk):  # LEARNER-UPLOAD-7f3a", "    return session.put('/chunks', data=chunk)  # LEARNER-PUT-91c2"];
  writeFileSync(join(coachProject, "src", "upload.py"), `${learnerLines.join("\n")}\n`);
  writeFileSync(join(coachProject, "src", "retry.py"), "# LEARNER-RETRY-5d0e: nothing here yet\n");
  writeFileSync(join(coachProject, "README.md"), "# uploader\n");
  const coachData = join(work, "coach-data");
  let coachRun;

  /** SHA-256 of every file under `dir`, by relative path. */
  function hashTree(dir, prefix = "") {
    const hashes = {};
    for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) Object.assign(hashes, hashTree(dir, rel));
      else hashes[rel] = createHash("sha256").update(readFileSync(join(dir, rel))).digest("hex");
    }
    return hashes;
  }

  // Paige's model: the shared fake Messages API (fake-anthropic.mjs), answering each prompt
  // module's call type in the prompt's own example shape; other calls (the wrap-up's) get a
  // 400, which Paige treats as best-effort failures.
  const coach = promptExample("coach-agent");
  const workedExample = promptExample("worked-example");
  // The coach agent's phases name the project's own files.
  coach.phases = [
    {
      ...coach.phases[0],
      number: 1,
      title: "Find where uploads are sent",
      description: "Read upload_chunk and decide where a retry belongs.",
      expected_files: ["src/upload.py"],
      hint_level: "file",
      hints: {
        file_hints: [{ path: "src/upload.py", style: "suggested" }],
        line_hints: [{ path: "src/upload.py", start: 2, end: 2, style: "focus", hover_text: "The call that can fail" }],
      },
    },
    {
      ...coach.phases[0],
      number: 2,
      title: "Write the retry loop",
      description: "Wrap the call in src/retry.py and back off between attempts.",
      expected_files: ["src/retry.py"],
      hint_level: "region",
      hints: { file_hints: [{ path: "src/retry.py", style: "important" }], line_hints: [] },
    },
  ];
  // Explain This answers with the prompt's example, naming another file of the project.
  const explanation = { ...promptExample("explain-this"), related_files: ["src/retry.py"] };
  // The Observer's triage: nothing to say, until a check sets `nudgeOnOpen`; then a wrong_file
  // nudge built from the snapshot Paige sent (the file the learner opened last and the current
  // phase's expected file), so the toast shows what the backend saw.
  const observer = { nudgeOnOpen: false, contexts: [] };
  function triage(body) {
    const quiet = { should_nudge: false, confidence: 0.2, signal: "no_nudge", reasoning: "e2e: nothing to say", suggested_context: { current_file: null, expected_file: null, time_in_file: null, phase_description: null } };
    let context;
    try {
      context = JSON.parse(userText(body));
    } catch {
      return quiet;
    }
    observer.contexts.push(context);
    const opened = context.recent_actions?.find((a) => a.type === "file_open")?.path ?? null;
    if (!observer.nudgeOnOpen || !opened) return quiet;
    const phase = context.current_phase;
    return {
      should_nudge: true,
      confidence: 0.9,
      signal: "wrong_file",
      reasoning: `e2e: ${opened} is open while the phase expects ${phase?.expected_files?.[0]}`,
      suggested_context: { current_file: opened, expected_file: phase?.expected_files?.[0] ?? null, time_in_file: "5s", phase_description: phase?.title ?? null },
    };
  }
  const fake = await startFakeAnthropic({
    // The intake interview's calls as intake-script.mjs scripts them (its timebox: TIMEBOX_MS).
    // The comprehension check's questions quote the learner's diff; its grade reads the answer
    // (fake-anthropic.mjs).
    replies: {
      coach_agent: coach, worked_example: workedExample, explain_this: explanation, observer_triage: triage, ...intakeReplies,
      comprehension_check: comprehensionQuestions, comprehension_grade: comprehensionGrade,
    },
    // The worked example, the explanation, the comprehension check's calls and the wrap-up's
    // first step (unanswered: a 400) take a moment, as real model calls do: the UI shows
    // progress, not just its end.
    delays: { worked_example: 1500, explain_this: 800, knowledge_gap_extraction: 1500, comprehension_check: 1000, comprehension_grade: 800 },
  });
  await withApp(
    {
      env: {
        ...process.env,
        PAIGE_AGENT_CMD: "bash --norc --noprofile",
        ANTHROPIC_API_KEY: "sk-ant-e2e-coach",
        ANTHROPIC_BASE_URL: fake.base,
        DATA_DIR: coachData,
        // The checks click faster than a learner: no flow-state suppression. A nudge would be
        // typed into a Claude Code terminal after 100 ms of quiet (this one runs bash: never).
        PAIGE_OBSERVER_FLOW_ACTIONS: "1000",
        PAIGE_OBSERVER_QUIET_MS: "100",
        PAIGE_INTAKE_TIMEBOX_MS: String(TIMEBOX_MS),
      },
      args: [coachProject],
    },
    async ({ s, find, exec, click, press, typeText, terminalText }) => {
      const text = (testid) => exec(`return document.querySelector('[data-testid="${testid}"]')?.textContent ?? null`);
      let before;
      await check("without a session the coaching panel offers to start one, and says why there are no issues", async () => {
        await waitFor("connected", async () => (await exec("return document.querySelector('[data-testid=conn-status]')?.dataset.state")) === "open");
        coachRun = JSON.parse(await waitFor("the run file", () => readFileSync(join(coachData, "run", "server.json"), "utf8")));
        await waitFor("the start form", () => find('[data-testid="start-view"] [data-testid="start-form"]'));
        // gh is not installed here (or the project is no GitHub repository): said quietly.
        // The panel's own line: the dashboard's issues section has an `issues-error` box too.
        const why = await waitFor("the issues line", () => exec(`return document.querySelector('[data-testid="start-view"] [data-testid="issues-error"]')?.textContent ?? null`));
        if (!why.startsWith("No GitHub issues: ")) throw new Error(`issues line: ${JSON.stringify(why)}`);
        const next = await text("start-next");
        if (!next.includes("Claude Code in the terminal plans the work; Paige turns the plan into phases here.")) throw new Error(`next: ${next}`);
      });
      await check("typing what to work on in the panel starts a session", async () => {
        before = hashTree(coachProject);
        await wd("POST", `${s}/element/${await find('[data-testid="start-title"]')}/value`, { text: "Retry failed uploads" });
        await wd("POST", `${s}/element/${await find('[data-testid="start-description"]')}/value`, { text: "Back off between attempts" });
        await click('[data-testid="start-submit"]');
        const title = await waitFor("the session's title in the panel", () => text("session-title"), 10_000);
        if (title !== "Retry failed uploads") throw new Error(`session title ${JSON.stringify(title)}`);
        const started = await exec("return window.paige.framesOf('session:started')");
        if (started.length !== 1 || started[0].description !== "Back off between attempts") throw new Error(`session:started: ${JSON.stringify(started)}`);
      });
      /** Types `value` into the field `css` as keystrokes; resolves once the field holds it all
       * (WebKitWebDriver may return before its keys are handled). */
      const typeInto = async (css, value) => {
        await wd("POST", `${s}/element/${await find(css)}/value`, { text: value });
        const held = () => exec("return document.querySelector(arguments[0])?.value ?? null", [css]);
        await waitFor(`${css} to hold what was typed`, async () => (await held()) === value, 15_000).catch(async (err) => {
          throw new Error(`${err.message}: it holds ${JSON.stringify(await held())}`);
        });
      };
      // A learner's first session opens with the intake interview (its timebox TIMEBOX_MS here).
      await check("the first session opens with the interview: Paige's first question and a countdown from the 5 s timebox", async () => {
        await waitFor("the first question", () => exec(`return document.querySelector('[data-testid="intake-line"][data-role="interviewer"]:not([data-streaming])')?.textContent ?? null`), 10_000);
        const countdown = await text("intake-countdown");
        if (countdown !== "00:05" && countdown !== "00:04") throw new Error(`countdown ${JSON.stringify(countdown)}`);
      });
      await check("one answer in the window: the streamed reply outlasts the timebox, then the coding question follows within 1 s", async () => {
        await exec(RECORDER);
        await typeInto('[data-testid="intake-input"]', ANSWER);
        await click('[data-testid="intake-send"]');
        await waitFor("the coding question", () => find('[data-testid="intake-coding-question"]'), 20_000);
        const reply = fake.requests.find((r) => r.callType === "intake_interviewer");
        const problems = [...judgeRecording(await exec("return window.__intakeLog"), reply?.streamEndedAt), ...judgeDebug(await exec(DEBUG_FACTS))];
        if (problems.length) {
          const control = fake.callsOf("intake_control").map((c) => userText(c.body));
          throw new Error(`${problems.join("; ")} (CONTROL was asked: ${JSON.stringify(control)})`);
        }
        const question = await exec(`return document.querySelector('[data-testid="intake-coding-question"] .intake-question')?.textContent ?? ""`);
        if (!question.includes("Retry failed uploads")) throw new Error(`coding question ${JSON.stringify(question)}`);
        const waiting = await text("plan-waiting");
        if (!waiting?.includes("Claude Code in the terminal plans the work")) throw new Error(`after the interview: ${waiting}`);
      });
      // The Observer in the top bar shows the backend's state (observer:status), never its own guess.
      const observerShown = () =>
        exec(`const l = document.querySelector('[data-testid="observer-state"]'), b = document.querySelector('[data-testid="observer-mute"]');
          return { label: l?.textContent, state: l?.dataset.state, button: b?.textContent, disabled: b?.disabled };`);
      // Each state's label, and the button that toggles it.
      const observerLooks = { watching: ["Observer: watching", "Mute"], muted: ["Observer: muted", "Unmute"] };
      /** Waits for the top bar to show the Observer in `state`: its label and an enabled toggle. */
      const observerShows = async (state) => {
        const shown = await waitFor(`Observer: ${state}`, async () => {
          const o = await observerShown();
          return o.state === state ? o : null;
        }, 10_000).catch(async (err) => {
          throw new Error(`${err.message}: ${JSON.stringify(await observerShown())}`);
        });
        const [label, button] = observerLooks[state];
        if (shown.label !== label || shown.button !== button || shown.disabled) throw new Error(`top bar: ${JSON.stringify(shown)}`);
      };
      /** The backend's last observer:status says the Observer is active and not muted. */
      const watchingConfirmed = async () => {
        const status = (await exec("return window.paige.framesOf('observer:status')")).at(-1);
        if (status?.active !== true || status.muted !== false) throw new Error(`last observer:status ${JSON.stringify(status)}`);
      };
      await check("with the session active the top bar shows Observer: watching and offers Mute", async () => {
        await observerShows("watching");
        await watchingConfirmed();
      });
      await check("Mute in the top bar shows Observer: muted once the backend's observer:status confirms it", async () => {
        const statuses = (await exec("return window.paige.framesOf('observer:status')")).length;
        await click('[data-testid="observer-mute"]');
        await observerShows("muted");
        const frames = await exec("return window.paige.framesOf('observer:status')");
        if (frames.length <= statuses || frames.at(-1).muted !== true || frames.at(-1).active !== true) {
          throw new Error(`no confirming observer:status: ${JSON.stringify(frames)}`);
        }
      });
      await check("after a reload the top bar shows Observer: muted again, from the backend's status sent after hello", async () => {
        await exec("window.__paigeBeforeReload = true; setTimeout(() => location.reload(), 0); return true");
        await waitFor("the reloaded page", () => exec("return window.__paigeBeforeReload !== true && document.querySelector('[data-testid=conn-status]')?.dataset.state === 'open'"), 20_000);
        await waitFor("the session in the panel again", () => text("session-title"), 10_000);
        await observerShows("muted");
        // The new page's only knowledge of the mute is the backend's frame.
        const frames = await exec("return window.paige.framesOf('observer:status')");
        if (frames.length !== 1 || frames[0].muted !== true || frames[0].active !== true) throw new Error(`observer:status after the reload: ${JSON.stringify(frames)}`);
      });
      await check("Unmute in the top bar shows Observer: watching once the backend confirms it", async () => {
        await click('[data-testid="observer-mute"]');
        await observerShows("watching");
        await watchingConfirmed();
      });
      await check("Claude Code's plan through paige_run_coaching_pipeline appears as phases in the panel", async () => {
        const t0 = Date.now();
        const result = await mcpCall(coachRun, "paige_run_coaching_pipeline", {
          planText: "1. Find where uploads are sent.\n2. Add a retry with backoff around the upload call.",
          issueSummary: "Uploads fail on flaky networks; retry them with backoff.",
        });
        console.log(`     pipeline answered in ${Date.now() - t0} ms`);
        if (result.structured?.phases?.length !== 2) throw new Error(`pipeline result: ${JSON.stringify(result).slice(0, 300)}`);
        const phases = await waitFor("two phases in the panel", async () => {
          const rows = await exec(`return [...document.querySelectorAll('[data-testid="phase"]')].map((p) => ({ title: p.querySelector('strong')?.textContent, status: p.dataset.status, current: p.dataset.current === 'true' }))`);
          return rows.length === 2 ? rows : null;
        }, 10_000);
        const expected = [
          { title: "Find where uploads are sent", status: "pending", current: true },
          { title: "Write the retry loop", status: "pending", current: false },
        ];
        if (JSON.stringify(phases) !== JSON.stringify(expected)) throw new Error(`phases: ${JSON.stringify(phases)}`);
        const progress = await text("progress");
        if (progress !== "0 of 2 phases done") throw new Error(`progress ${JSON.stringify(progress)}`);
        const level = await exec(`return document.querySelector('[data-testid="hint-level"][aria-checked="true"]')?.dataset.level`);
        if (level !== "file") throw new Error(`hint level shown: ${level}`);
      });
      await check("choosing Line in the panel's hint control highlights the phase's line in the editor", async () => {
        const before = (await exec("return window.paige.framesOf('editor:highlight_lines')")).length;
        await click('[data-testid="hint-level"][data-level="line"]');
        const frames = await waitFor("editor:highlight_lines", async () => {
          const all = await exec("return window.paige.framesOf('editor:highlight_lines')");
          return all.length > before ? all : null;
        }, 10_000);
        const last = frames.at(-1);
        if (last.path !== "src/upload.py" || last.start !== 2) throw new Error(`highlight: ${JSON.stringify(last)}`);
        const chosen = await exec(`return document.querySelector('[data-testid="hint-level"][aria-checked="true"]')?.dataset.level`);
        if (chosen !== "line") throw new Error(`the control shows ${chosen}`);
      });
      let tabsBefore;
      await check("\"Just show me\" shows progress, then Paige's worked example in a read-only drawer", async () => {
        tabsBefore = await exec("return window.paige.openTabs()");
        await click('[data-testid="show-me"]');
        const status = await waitFor("the progress line", () => text("show-me-status"), 5_000);
        if (status !== "Paige is preparing an example…") throw new Error(`progress: ${status}`);
        if (!(await exec(`return document.querySelector('[data-testid="show-me"]').disabled`))) throw new Error("the button stays enabled while preparing");
        await waitFor("the worked example drawer", () => find('[data-testid="worked-example"]'), 20_000);
        const shown = await exec(`const d = document.querySelector('[data-testid="worked-example"]');
          return { title: d.querySelector('[data-testid="worked-example-title"]').textContent,
                   code: d.querySelector('pre[data-testid="worked-example-code"]').textContent,
                   steps: [...d.querySelectorAll('[data-testid="worked-example-steps"] li')].map((li) => li.textContent),
                   editable: d.querySelector('textarea, input, [contenteditable="true"], .monaco-editor') !== null,
                   status: document.querySelector('[data-testid="show-me-status"]') !== null }`);
        if (shown.title !== workedExample.title) throw new Error(`title ${shown.title}`);
        if (shown.code !== workedExample.example_code) throw new Error(`code ${JSON.stringify(shown.code)}`);
        if (JSON.stringify(shown.steps) !== JSON.stringify(workedExample.steps)) throw new Error(`steps ${JSON.stringify(shown.steps)}`);
        if (shown.editable) throw new Error("the drawer holds an editor");
        if (shown.status) throw new Error("the progress line stayed");
        const tabs = await exec("return window.paige.openTabs()");
        if (JSON.stringify(tabs) !== JSON.stringify(tabsBefore)) throw new Error(`tabs changed: ${JSON.stringify(tabsBefore)} → ${JSON.stringify(tabs)}`);
        mkdirSync(artifacts, { recursive: true });
        const png = await wd("GET", `${s}/screenshot`);
        writeFileSync(join(artifacts, "desktop-worked-example.png"), Buffer.from(png, "base64"));
        console.log(`screenshot: ${join(artifacts, "desktop-worked-example.png")}`);
        await click('[data-testid="worked-example-close"]');
        await waitFor("the drawer to close", () => exec(`return document.querySelector('[data-testid="worked-example"]') === null`), 5_000);
      });
      await check("the session, the plan and the worked example left every project file byte-for-byte unchanged", async () => {
        const after = hashTree(coachProject);
        if (JSON.stringify(after) !== JSON.stringify(before)) throw new Error(`before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`);
        if (Object.keys(before).length !== 3) throw new Error(`hashed ${JSON.stringify(Object.keys(before))}`);
      });
      await check("the worked example's model request carried none of the learner's files", async () => {
        const asked = fake.requests.filter((r) => r.callType === "worked_example");
        if (asked.length !== 1) throw new Error(`${asked.length} worked_example requests`);
        const request = JSON.parse(asked[0].body);
        if (asked[0].apiKey !== "sk-ant-e2e-coach" || !request.output_config) throw new Error(`request: ${asked[0].body.slice(0, 200)}`);
        // The phase may name an identifier (its description does); the files' lines it must not carry.
        const markers = [...learnerLines, "LEARNER-UPLOAD-7f3a", "LEARNER-PUT-91c2", "LEARNER-RETRY-5d0e", "session.put("];
        const leaked = markers.filter((m) => asked[0].body.includes(m));
        if (leaked.length) throw new Error(`the request contains ${leaked.join(", ")}`);
        // It was about the phase in progress.
        if (!asked[0].body.includes("Find where uploads are sent")) throw new Error("the request does not name the phase");
      });
      await check("opening a file off the phase shows the Observer's wrong_file nudge as a toast naming both files, not typed into the bash terminal", async () => {
        // The terminal has finished a line and is quiet: a nudge typed there would show at once.
        const term = await find(".xterm-helper-textarea");
        await wd("POST", `${s}/element/${term}/value`, { text: "echo OBSERVER_QUIET_$((6*7))\n" });
        await waitFor("the echo", async () => (await terminalText()).includes("OBSERVER_QUIET_42"));
        const asked = observer.contexts.length;
        observer.nudgeOnOpen = true;
        await click('[data-testid="tree-item"][data-path="README.md"]');
        const expected = "You are in README.md; this phase (Find where uploads are sent) is about src/upload.py.";
        const toasts = () => exec(`return [...document.querySelectorAll('[data-testid="toast"].toast-hint')].map((t) => t.textContent)`);
        await waitFor("the nudge's toast", async () => (await toasts()).includes(expected), 15_000).catch(async (err) => {
          // Toasts go after 8 s: the frames say what was shown.
          const seen = observer.contexts.slice(asked).map((c) => ({ phase: c.current_phase?.title, actions: c.recent_actions?.slice(0, 3) }));
          const nudges = await exec("return window.paige.framesOf('observer:nudge')");
          throw new Error(`${err.message}: toasts ${JSON.stringify(await toasts())}, observer:nudge ${JSON.stringify(nudges)}, triage contexts ${JSON.stringify(seen)}`);
        });
        observer.nudgeOnOpen = false;
        const nudges = await exec("return window.paige.framesOf('observer:nudge')");
        if (nudges.length !== 1 || nudges[0].signal !== "wrong_file") throw new Error(`observer:nudge frames: ${JSON.stringify(nudges)}`);
        // Claude Code would get it 100 ms after the terminal went quiet; bash must never.
        await sleep(2_000);
        const typed = await terminalText();
        if (typed.includes("[Paige's Observer]")) throw new Error(`typed into bash: ${typed.slice(typed.indexOf("[Paige's Observer]"), typed.indexOf("[Paige's Observer]") + 120)}`);
        if (!typed.includes("OBSERVER_QUIET_42")) throw new Error("the terminal's text is not readable");
      });
      // Explain This on a selection of src/upload.py. Line 2 from its first word: what the
      // drawer quotes and the model request must carry, exactly.
      const selected = learnerLines[1].trimStart();
      const explainShown = () =>
        exec(`const d = document.querySelector('[data-testid="explain"]');
          const t = (id) => d?.querySelector('[data-testid="' + id + '"]')?.textContent ?? null;
          return { open: d !== null, title: t("explain-title"), selection: t("explain-selection"), status: t("explain-status"),
                   error: t("explain-error"), explanation: t("explain-explanation"), analogy: t("explain-analogy"), phase: t("explain-phase"),
                   concepts: [...(d?.querySelectorAll('[data-testid="explain-concept"]') ?? [])].map((c) => c.textContent),
                   related: [...(d?.querySelectorAll('[data-testid="explain-related-file"]') ?? [])].map((r) => r.dataset.path) };`);
      /** Waits for the drawer's answer and checks it is the fake's explanation of `selected`, with the phase connection. */
      const explainAnswered = async () => {
        const shown = await waitFor("the explanation in the drawer", async () => {
          const d = await explainShown();
          return d.explanation !== null || d.error !== null ? d : null;
        }, 20_000).catch(async (err) => {
          throw new Error(`${err.message}: ${JSON.stringify(await explainShown())}`);
        });
        const expected = {
          open: true,
          title: "Explain src/upload.py, line 2",
          selection: selected,
          status: null,
          error: null,
          explanation: explanation.explanation,
          analogy: explanation.analogy,
          // The session has a current phase, so the backend keeps the model's phase connection.
          phase: explanation.phase_connection,
          concepts: explanation.key_concepts,
          related: explanation.related_files,
        };
        // WebDriver hands the object back with its keys in any order.
        const differ = Object.keys(expected).filter((k) => JSON.stringify(shown[k]) !== JSON.stringify(expected[k]));
        if (differ.length) throw new Error(`the drawer's ${differ.join(", ")} differ: ${JSON.stringify(shown)}`);
      };
      /** Waits for Monaco to draw a selection in src/upload.py. */
      const selectionShown = () =>
        waitFor("the selection in src/upload.py", () =>
          exec("return document.querySelector('.tab.active')?.dataset.path === 'src/upload.py' && document.querySelector('.monaco-editor .selected-text') !== null"), 5_000);
      await check("selecting a line in Monaco and pressing Ctrl+Shift+E shows progress, then the fake's explanation, key concepts and phase connection", async () => {
        if (!(await exec(`return document.querySelector('[data-testid="tree-item"][data-path="src/upload.py"]') !== null`))) {
          await click('[data-testid="tree-item"][data-path="src"]');
        }
        await waitFor("src/upload.py in the explorer", () => find('[data-testid="tree-item"][data-path="src/upload.py"]'));
        // Opening a file (or switching to its tab) focuses Monaco.
        await click('[data-testid="tree-item"][data-path="src/upload.py"]');
        await waitFor("src/upload.py in Monaco", async () => (await exec("return document.querySelector('.tab.active')?.dataset.path")) === "src/upload.py" &&
          (await exec("return (document.querySelector('.monaco-editor .view-lines')?.innerText ?? '').replace(/\\u00a0/g, ' ')")).includes("LEARNER-PUT-91c2"), 10_000);
        await waitFor("Monaco focused", () => exec("return document.activeElement?.closest('.monaco-editor') != null"));
        // Home goes to the line's first word; Shift+End selects from there to the line's end.
        await press([["\uE009", "\uE011"], "\uE015", "\uE011", ["\uE008", "\uE010"]]);
        await selectionShown();
        const before = fake.callsOf("explain_this").length;
        await press([["\uE009", "\uE008", "e"]]);
        // The fake answers after 800 ms: the drawer shows progress first.
        const waiting = await waitFor("the drawer's progress", async () => {
          const d = await explainShown();
          return d.status !== null ? d : null;
        }, 5_000).catch(async (err) => {
          throw new Error(`${err.message}: ${JSON.stringify(await explainShown())}, explain_this calls ${fake.callsOf("explain_this").length - before}`);
        });
        if (waiting.status !== "Paige is explaining…" || waiting.selection !== selected || waiting.explanation !== null) throw new Error(`while waiting: ${JSON.stringify(waiting)}`);
        await explainAnswered();
        mkdirSync(artifacts, { recursive: true });
        const png = await wd("GET", `${s}/screenshot`);
        writeFileSync(join(artifacts, "desktop-explain.png"), Buffer.from(png, "base64"));
        console.log(`screenshot: ${join(artifacts, "desktop-explain.png")}`);
      });
      /** The user message of the `n`th explain_this request (Paige sends it as JSON). */
      const explainAsked = (n) => JSON.parse(userText(fake.callsOf("explain_this")[n].body));
      await check("the explain_this request carried the selected text, its file and language, the lines around it and the current phase", async () => {
        const calls = fake.callsOf("explain_this");
        if (calls.length !== 1) throw new Error(`${calls.length} explain_this requests`);
        if (calls[0].apiKey !== "sk-ant-e2e-coach") throw new Error(`api key ${calls[0].apiKey}`);
        const asked = explainAsked(0);
        if (asked.selected_code !== selected) throw new Error(`selected_code ${JSON.stringify(asked.selected_code)}`);
        if (asked.file_path !== "src/upload.py" || asked.language !== "python") throw new Error(`file ${asked.file_path}, language ${asked.language}`);
        // The whole two-line file is within 50 lines of the selection.
        if (asked.surrounding_context.trimEnd() !== learnerLines.join("\n")) throw new Error(`surrounding_context ${JSON.stringify(asked.surrounding_context)}`);
        if (asked.current_phase?.title !== "Find where uploads are sent") throw new Error(`current_phase ${JSON.stringify(asked.current_phase)}`);
      });
      await check("with the drawer closed, Explain this in Monaco's context menu on the selection asks again and shows the answer", async () => {
        await click('[data-testid="explain-close"]');
        await waitFor("the drawer to close", async () => !(await explainShown()).open, 5_000);
        await selectionShown();
        // A right-click inside the selection (one outside would move the cursor and empty it).
        const word = await exec(`const span = [...document.querySelectorAll('.monaco-editor .view-line span span')].find((e) => e.textContent === 'return');
          const r = span?.getBoundingClientRect();
          return r ? { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2) } : null;`);
        if (!word) throw new Error("no `return` on screen");
        const mouse = (x, y, button) => wd("POST", `${s}/actions`, { actions: [{ type: "pointer", id: "mouse", parameters: { pointerType: "mouse" },
          actions: [{ type: "pointerMove", x, y, origin: "viewport" }, { type: "pointerDown", button }, { type: "pointerUp", button }] }] });
        await mouse(word.x, word.y, 2);
        // Monaco draws its menu in a shadow root by the editor: look in every one.
        const item = await waitFor("Explain this in the menu", () =>
          exec(`const roots = [document, ...[...document.querySelectorAll('*')].filter((e) => e.shadowRoot).map((e) => e.shadowRoot)];
            for (const root of roots) for (const item of root.querySelectorAll('[role="menuitem"]')) {
              if (item.querySelector('.action-label')?.textContent !== 'Explain this') continue;
              const r = item.getBoundingClientRect();
              return { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2), disabled: item.getAttribute('aria-disabled') === 'true' };
            }
            return null;`), 5_000);
        if (item.disabled) throw new Error("Explain this is disabled in the menu");
        await sleep(300); // Monaco's menu ignores mouse-ups for its first 100 ms (stray clicks)
        await mouse(item.x, item.y, 0);
        await waitFor("a second explain_this request", () => fake.callsOf("explain_this").length === 2, 10_000).catch(async (err) => {
          throw new Error(`${err.message}: ${fake.callsOf("explain_this").length} requests, drawer ${JSON.stringify(await explainShown())}`);
        });
        await explainAnswered();
        if (explainAsked(1).selected_code !== selected) throw new Error(`selected_code ${JSON.stringify(explainAsked(1).selected_code)}`);
      });
      await check("a related file in the explanation opens in a tab", async () => {
        await click('[data-testid="explain-related-file"][data-path="src/retry.py"]');
        await waitFor("src/retry.py active", async () => (await exec("return document.querySelector('.tab.active')?.dataset.path")) === "src/retry.py", 10_000);
        await click('[data-testid="explain-close"]');
        await waitFor("the drawer to close", async () => !(await explainShown()).open, 5_000);
      });
      // The comprehension check (issue 30): the learner's own line in phase 1's file, typed in
      // Monaco and saved; marking the phase done asks about it in the panel.
      const LEARNER_LINE = "MAX_ATTEMPTS = 3  # LEARNER-ADDED-c4e1";
      const card = '[data-testid="learning-check"][data-phase="1"]';
      const cardShown = () =>
        exec(`const c = document.querySelector(arguments[0]);
          return { state: c?.dataset.state ?? null, preparing: c?.querySelector('[data-testid="learning-preparing"]')?.textContent ?? null,
                   failed: c?.querySelector('[data-testid="learning-failed"]')?.textContent ?? null,
                   note: c?.querySelector('[data-testid="learning-note"]')?.textContent ?? null,
                   questions: [...(c?.querySelectorAll('[data-testid="learning-question"]') ?? [])].map((q) => ({
                     id: q.dataset.id, status: q.dataset.status,
                     quote: q.querySelector('[data-testid="learning-quote"]')?.textContent ?? null,
                     grading: q.querySelector('[data-testid="learning-grading"]') !== null,
                     grade: q.querySelector('[data-testid="learning-grade"]')?.dataset.grade ?? null,
                     badge: q.querySelector('[data-testid="learning-grade"]')?.textContent ?? null,
                     why: q.querySelector('[data-testid="learning-why"]')?.textContent ?? null })) };`, [card]);
      /** Waits for the card to match `ok(card)`; a timeout says what it showed. */
      const cardWhen = (what, ok, timeoutMs = 15_000) =>
        waitFor(what, async () => {
          const c = await cardShown();
          return ok(c) ? c : null;
        }, timeoutMs).catch(async (err) => {
          throw new Error(`${err.message}: ${JSON.stringify(await cardShown())}`);
        });
      /** Which question's answer box has the keys (its data-id), or what has them instead. */
      const keysIn = () =>
        exec(`const a = document.activeElement;
          return a?.dataset.testid === "learning-answer" ? a.closest('[data-testid="learning-question"]').dataset.id
            : "not an answer box: " + (a?.tagName ?? "none") + "." + (a?.className ?? "") + " " + (a?.dataset?.testid ?? "");`);
      const phaseRows = () => exec(`return [...document.querySelectorAll('[data-testid="phase"]')].map((p) => ({ number: p.dataset.number, status: p.dataset.status, current: p.dataset.current === 'true' }))`);
      await check("the learner types a line into phase 1's file in Monaco and saves it; Done marks phase 1 complete and phase 2 current", async () => {
        await click('.tab[data-path="src/upload.py"]');
        await waitFor("src/upload.py active", async () => (await exec("return document.querySelector('.tab.active')?.dataset.path")) === "src/upload.py", 10_000);
        await waitFor("Monaco focused", () => exec("return document.activeElement?.closest('.monaco-editor') != null"));
        // Ctrl+Home: the start of the file (the Explain This selection goes); the line goes above
        // upload_chunk. Escape closes any suggestion before Enter.
        await press([["\uE009", "\uE011"]]);
        await typeText(LEARNER_LINE);
        await press(["\uE00C", "\uE007"]);
        await waitFor("a dirty tab", async () => (await exec("return document.querySelector('.tab.active')?.dataset.dirty")) === "true");
        await press([["\uE009", "s"]]);
        const expected = `${LEARNER_LINE}\n${learnerLines.join("\n")}\n`;
        await waitFor("the line on disk", () => readFileSync(join(coachProject, "src", "upload.py"), "utf8") === expected).catch(() => {
          throw new Error(`on disk: ${JSON.stringify(readFileSync(join(coachProject, "src", "upload.py"), "utf8"))}`);
        });
        await waitFor("the save ack", async () => (await exec("return document.querySelector('.tab.active')?.dataset.dirty")) === "false");
        const before = await phaseRows();
        if (JSON.stringify(before.map((p) => p.current)) !== "[true,false]") throw new Error(`before Done: ${JSON.stringify(before)}`);
        await click('[data-testid="phase"][data-current="true"] [data-testid="phase-done"]');
        const after = await waitFor("phase 1 complete, phase 2 current", async () => {
          const rows = await phaseRows();
          return rows[0]?.status === "complete" && rows[1]?.current && rows[1]?.status === "active" ? rows : null;
        }, 10_000).catch(async (err) => {
          throw new Error(`${err.message}: ${JSON.stringify(await phaseRows())}`);
        });
        const progress = await text("progress");
        if (progress !== "1 of 2 phases done") throw new Error(`progress ${JSON.stringify(progress)} (${JSON.stringify(after)})`);
      });
      await check("phase 1's comprehension check shows progress, then questions quoting the line the learner typed, the keys in the first answer box; phase 2 stays current", async () => {
        const waiting = await cardWhen("the card's progress", (c) => c.state === "preparing", 5_000);
        if (waiting.preparing !== "Writing a question about your change…") throw new Error(`progress ${JSON.stringify(waiting)}`);
        const ready = await cardWhen("the questions", (c) => c.state !== "preparing" && c.state !== null);
        if (ready.state !== "ready") throw new Error(`the card is ${JSON.stringify(ready)}`);
        const calls = fake.callsOf("comprehension_check");
        if (calls.length !== 1) throw new Error(`${calls.length} comprehension_check calls`);
        if (calls[0].apiKey !== "sk-ant-e2e-coach") throw new Error(`api key ${calls[0].apiKey}`);
        const asked = JSON.parse(userText(calls[0].body));
        if (!addedLines(asked.learner_diff).includes(LEARNER_LINE)) throw new Error(`the diff sent lacks the learner's line: ${asked.learner_diff}`);
        // Only the learner's change: the lines that were there when the plan came are context.
        if (addedLines(asked.learner_diff).some((l) => learnerLines.includes(l))) throw new Error(`the diff adds lines that were there: ${asked.learner_diff}`);
        const quotes = ready.questions.map((q) => q.quote);
        if (JSON.stringify(quotes) !== JSON.stringify([LEARNER_LINE, LEARNER_LINE])) throw new Error(`quotes ${JSON.stringify(quotes)}`);
        if (ready.questions.some((q) => q.status !== "open")) throw new Error(`questions ${JSON.stringify(ready.questions)}`);
        // Nothing blocks: phase 2 is current with its controls.
        const rows = await phaseRows();
        if (!rows[1]?.current || rows[1]?.status !== "active") throw new Error(`phases ${JSON.stringify(rows)}`);
        await waitFor("phase 2's Done", () => find('[data-testid="phase"][data-number="2"][data-current="true"] [data-testid="phase-done"]'), 5_000);
        const keys = await keysIn();
        if (keys !== ready.questions[0].id) throw new Error(`the keys are not in the first question's answer box (${keys})`);
        await exec(`document.querySelector(arguments[0])?.scrollIntoView({ block: "center" }); return true`, [card]);
        mkdirSync(artifacts, { recursive: true });
        writeFileSync(join(artifacts, "desktop-learning-check.png"), Buffer.from(await wd("GET", `${s}/screenshot`), "base64"));
        console.log(`screenshot: ${join(artifacts, "desktop-learning-check.png")}`);
      });
      await check("typed keys answer the first question: Shift+Enter is a new line, Enter sends; progress, then ✓ Correct and why; the keys move to the second question", async () => {
        const { questions } = await cardShown();
        // The keys where the card put them (the previous check); click the box first only if a
        // failed check left them elsewhere, so this one still says what it sees.
        if ((await keysIn()) !== questions[0].id) await click(`${card} [data-testid="learning-question"][data-id="${questions[0].id}"] [data-testid="learning-answer"]`);
        await typeText("It caps the retries,");
        await press([["\uE008", "\uE007"]]);
        await typeText("because a flaky network must not loop forever");
        const box = () => exec(`return document.querySelector(arguments[0])?.value ?? null`, [`${card} [data-testid="learning-question"][data-id="${questions[0].id}"] [data-testid="learning-answer"]`]);
        const typed = "It caps the retries,\nbecause a flaky network must not loop forever";
        await waitFor("the answer in its box", async () => (await box()) === typed, 10_000).catch(async (err) => {
          throw new Error(`${err.message}: it holds ${JSON.stringify(await box())}`);
        });
        if (fake.callsOf("comprehension_grade").length) throw new Error("Shift+Enter sent the answer");
        await press(["\uE007"]);
        await cardWhen("the first answer grading", (c) => c.questions[0]?.status === "grading" && c.questions[0].grading, 5_000);
        const graded = await cardWhen("the first grade", (c) => c.questions[0]?.status === "graded");
        const first = graded.questions[0];
        if (first.grade !== "correct" || first.badge !== "✓ Correct") throw new Error(`grade ${JSON.stringify(first)}`);
        if (first.why !== "Right: you said what the line is for.") throw new Error(`why ${JSON.stringify(first.why)}`);
        const answers = fake.callsOf("comprehension_grade").map((c) => JSON.parse(userText(c.body)).learner_answer);
        if (JSON.stringify(answers) !== JSON.stringify([typed])) throw new Error(`graded answers ${JSON.stringify(answers)}`);
        const keys = await keysIn();
        if (keys !== graded.questions[1]?.id) throw new Error(`the keys are not in the second question's answer box (${keys})`);
      });
      await check("a wrong answer to the second question shows Incorrect; phase 2 stays current, its hints one rung more specific with the reason", async () => {
        await typeText("no idea");
        await press(["\uE007"]);
        const done = await cardWhen("the card done", (c) => c.state === "done");
        const grades = done.questions.map((q) => q.grade);
        if (JSON.stringify(grades) !== JSON.stringify(["correct", "incorrect"])) throw new Error(`grades ${JSON.stringify(done.questions)}`);
        if (done.questions[1].badge !== "✗ Incorrect") throw new Error(`badge ${JSON.stringify(done.questions[1].badge)}`);
        if (done.questions[1].why !== "That does not say what the line does.") throw new Error(`why ${JSON.stringify(done.questions[1].why)}`);
        const reason = await waitFor("phase 2's hint reason", () => exec(`return document.querySelector('[data-testid="phase"][data-number="2"] [data-testid="hint-reason"]')?.textContent ?? null`), 5_000);
        if (!reason.includes("was not right")) throw new Error(`hint reason ${JSON.stringify(reason)}`);
        const level = await waitFor("phase 2's new level", () => exec(`return document.querySelector('[data-testid="phase"][data-number="2"] [data-testid="hint-level"][aria-checked="true"]')?.dataset.level ?? null`), 5_000);
        if (level !== "line") throw new Error(`phase 2's hints at ${level} (the coach put them at region)`);
        const rows = await phaseRows();
        if (!rows[1]?.current || rows[1]?.status !== "active" || rows[0]?.status !== "complete") throw new Error(`phases ${JSON.stringify(rows)}`);
        await exec(`document.querySelector(arguments[0])?.scrollIntoView({ block: "center" }); return true`, [card]);
        mkdirSync(artifacts, { recursive: true });
        writeFileSync(join(artifacts, "desktop-learning-graded.png"), Buffer.from(await wd("GET", `${s}/screenshot`), "base64"));
        console.log(`screenshot: ${join(artifacts, "desktop-learning-graded.png")}`);
      });
      await check("End session shows Wrapping up… until session:completed, then the start view again", async () => {
        await click('[data-testid="end-session"]');
        await waitFor("Wrapping up…", () => text("wrapping-up"), 5_000);
        const notice = await waitFor("the start view after the wrap-up", () => text("start-notice"), 30_000);
        if (!notice.startsWith("Session wrapped up:")) throw new Error(`notice ${JSON.stringify(notice)}`);
        await waitFor("the start form", () => find('[data-testid="start-form"]'));
        const completed = await exec("return window.paige.framesOf('session:completed')");
        if (completed.length !== 1) throw new Error(`session:completed frames: ${JSON.stringify(completed)}`);
      });
    },
  );
  await fake.close();
  return coachRun?.pid;
}

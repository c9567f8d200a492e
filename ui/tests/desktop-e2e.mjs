// End-to-end test of the real desktop window: the built `paige-app` under Xvfb, driven
// through tauri-driver + Debian's WebKitWebDriver with plain WebDriver HTTP calls.
// Needs PAIGE_APP (the built app), tauri-driver on PATH (or TAURI_DRIVER), a DISPLAY, and
// PAIGE_TEST_PYTHON (a Python with the `mcp` SDK: the MCP client that steers the window).
// Prints one line per check and a closing "N passed, N failed". Closing the window is the
// last check: the app exits with it.
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { check, fail, sleep, summary, waitFor } from "./checks.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const app = process.env.PAIGE_APP;
const python = process.env.PAIGE_TEST_PYTHON;
const driverBin = process.env.TAURI_DRIVER ?? "tauri-driver";
const artifacts = resolve(process.env.PAIGE_ARTIFACTS ?? join(here, "../test-artifacts"));
// Each launch has its own driver port, so a driver still letting go of its port never
// answers for the next one.
let port = 4444;
let base = "";
if (!app || !existsSync(app)) throw new Error(`set PAIGE_APP to the built paige-app (got ${app})`);

const work = mkdtempSync(join(tmpdir(), "paige-e2e-"));
const project = join(work, "project");
mkdirSync(join(project, "src"), { recursive: true });
writeFileSync(join(project, "src", "main.py"), "def main():\n    print('hi')\n");
writeFileSync(join(project, "src", "util.py"), "def helper():\n    return 42\n");
const dataDir = join(work, "data");
// The app's run file, the PIDs of the terminal's shell and its background job, and the
// shell of the first-run phase's first project.
let run;
let shell;
let job;
let firstShell;
const runFile = join(dataDir, "run", "server.json");

/** Running: /proc/PID exists and is not a zombie (a zombie waits for its reaper only). */
function alive(pid) {
  try {
    return statField(pid, 0) !== "Z";
  } catch {
    return false;
  }
}
/** A field of /proc/PID/stat after the command name: 0 state, 1 parent, 2 process group. */
const statField = (pid, n) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[n];
};
const parentOf = (pid) => Number(statField(pid, 1));
const groupOf = (pid) => Number(statField(pid, 2));

/** One MCP tool call through the Python SDK; its result as {is_error, structured, text}. */
async function mcpCall(run, tool, args) {
  if (!python) throw new Error("set PAIGE_TEST_PYTHON to a Python with the mcp SDK (scripts/lib.sh ensure_python_mcp)");
  const script = join(here, "../../tests/blackbox/mcp_call.py");
  const url = `http://127.0.0.1:${run.port}/mcp`;
  const { stdout } = await promisify(execFile)(python, [script, url, run.token, tool, JSON.stringify(args)], { timeout: 30_000 });
  const result = JSON.parse(stdout);
  if (result.is_error) throw new Error(`${tool}: ${result.text}`);
  return result;
}

async function wd(method, path, body, timeoutMs = 60_000) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${JSON.stringify(json.value ?? json).slice(0, 300)}`);
  return json.value;
}

/**
 * Launches the app through a fresh tauri-driver with `env` and `args`, runs `checks(ui)` on
 * its window, then ends the session and the driver. `ui` has the WebDriver helpers.
 */
async function withApp({ env, args }, checks) {
  port += 1;
  base = `http://127.0.0.1:${port}`;
  // The app inherits its settings through the driver (tauri:options carries no environment).
  const driver = spawn(driverBin, ["--port", String(port), "--native-port", String(port + 100)], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...env, RUST_LOG: process.env.RUST_LOG ?? "warn" },
  });
  let session;
  try {
    await waitFor("tauri-driver", () => fetch(`${base}/status`).then((r) => r.ok), 20_000);
    const started = Date.now();
    session = (await wd("POST", "/session", { capabilities: { alwaysMatch: { "tauri:options": { application: app, args } } } }))
      .sessionId;
    const s = `/session/${session}`;
    // Elements are looked up by script: WebKitWebDriver's own CSS lookup misses attribute
    // selectors here. The reference it returns works for clicks and keys all the same.
    const find = async (css) => {
      const found = await wd("POST", `${s}/execute/sync`, { script: "return document.querySelector(arguments[0])", args: [css] });
      const id = found && Object.values(found)[0];
      if (!id) throw new Error(`no element ${css}`);
      return id;
    };
    const exec = (script, scriptArgs = []) => wd("POST", `${s}/execute/sync`, { script, args: scriptArgs });
    const click = async (css) => wd("POST", `${s}/element/${await find(css)}/click`, {});
    // Keystrokes to the focused element, as a user types them. (Element Send Keys would first
    // put the caret at the end of Monaco's hidden textarea, which moves Monaco's cursor.)
    // Each key is a character or WebDriver key code, or an array of them: a chord, pressed in
    // order and released in reverse.
    const press = async (keys) => {
      const sequence = keys.flatMap((key) => {
        const chord = Array.isArray(key) ? key : [key];
        return [...chord.map((value) => ({ type: "keyDown", value })), ...[...chord].reverse().map((value) => ({ type: "keyUp", value }))];
      });
      await wd("POST", `${s}/actions`, { actions: [{ type: "key", id: "keyboard", actions: sequence }] });
    };
    const typeText = (text) => press([...text].map((c) => (c === "\n" ? "\uE007" : c)));
    const terminalText = () => exec("return document.querySelector('.xterm-rows')?.innerText ?? ''");
    await checks({ s, started, find, exec, click, press, typeText, terminalText });
  } catch (err) {
    fail("desktop e2e setup", err);
  } finally {
    if (session) await wd("DELETE", `/session/${session}`, undefined, 10_000).catch(() => {});
    if (driver.exitCode === null && driver.signalCode === null) {
      const exited = new Promise((r) => driver.once("exit", r));
      driver.kill("SIGTERM");
      await Promise.race([exited, sleep(10_000).then(() => driver.kill("SIGKILL"))]);
    }
  }
}

// First run: no project and no key. The welcome screen lists the recent projects of the
// settings file, takes a key, opens a project, and the top bar switches to another.
const firstData = join(work, "first-data");
const second = join(work, "second");
mkdirSync(join(second, "lib"), { recursive: true });
writeFileSync(join(second, "lib", "second.py"), "x = 2\n");
mkdirSync(firstData, { recursive: true });
writeFileSync(
  join(firstData, "settings.json"),
  JSON.stringify({
    recentProjects: [
      { path: realpathSync(second), openedAt: new Date(Date.now() - 3_600_000).toISOString() },
      { path: join(work, "moved-away"), openedAt: "2026-01-01T00:00:00Z" },
      { path: realpathSync(project), openedAt: "2025-12-01T00:00:00Z" },
    ],
  }),
);
const firstEnv = { ...process.env, PAIGE_AGENT_CMD: "bash --norc --noprofile", DATA_DIR: firstData };
delete firstEnv.ANTHROPIC_API_KEY;
delete firstEnv.PROJECT_DIR;
await withApp({ env: firstEnv, args: [] }, async ({ s, find, exec, click, typeText, terminalText }) => {
  const rows = () => exec("return [...document.querySelectorAll('[data-testid=recent-projects] .recent-row')].map((r) => r.innerText)");
  await check("without a project the window opens on the welcome screen with the recent projects", async () => {
    await waitFor("the welcome screen", () => find('[data-testid="welcome"]'));
    const listed = await waitFor("three recent projects", async () => ((await rows()).length === 3 ? rows() : null));
    if (!listed[0].includes("second") || !listed[1].includes("folder not found") || !listed[2].includes("project")) {
      throw new Error(`recent projects: ${JSON.stringify(listed)}`);
    }
    const status = await exec("return document.querySelector('[data-testid=key-status]').textContent");
    if (!status.includes("No key yet")) throw new Error(`key status: ${status}`);
    if (await exec("return document.querySelector('.monaco-editor') !== null")) throw new Error("the workspace loaded");
  });
  await check("a key saved on the welcome screen is kept in a file only the user can read", async () => {
    await click('[data-testid="key-form"] input');
    await typeText("sk-ant-e2e-first-run-4321");
    await click('[data-testid="key-form"] button[type=submit]');
    await waitFor("the saved key's status", async () => (await exec("return document.querySelector('[data-testid=key-status]').textContent")).includes("…4321"));
    const path = join(firstData, "settings.json");
    if ((statSync(path).mode & 0o777) !== 0o600) throw new Error(`mode ${(statSync(path).mode & 0o777).toString(8)}`);
    if (JSON.parse(readFileSync(path, "utf8")).anthropicApiKey !== "sk-ant-e2e-first-run-4321") throw new Error("key not saved");
    if (await exec("return document.body.innerText.includes('sk-ant-e2e')")) throw new Error("the key is shown on screen");
  });
  await check("choosing a recent project opens the workspace on it, its terminal inside it", async () => {
    await click('[data-testid="recent-projects"] .recent-row .recent-open');
    await waitFor("the workspace", async () => (await exec("return document.querySelector('[data-testid=conn-status]')?.dataset.state")) === "open");
    await waitFor("its files in the explorer", () => find('[data-testid="tree-item"][data-path="lib"]'));
    const title = await wd("GET", `${s}/title`);
    if (title !== "second — Paige") throw new Error(`window title ${JSON.stringify(title)}`);
    const term = await find(".xterm-helper-textarea");
    await wd("POST", `${s}/element/${term}/value`, { text: "echo WHERE=$(pwd) PAIGE_PID=$$\n" });
    const where = await waitFor("pwd", async () => (await terminalText()).match(/WHERE=(\S+) PAIGE_PID=(\d+)/));
    if (realpathSync(where[1]) !== realpathSync(second)) throw new Error(`terminal in ${where[1]}`);
    firstShell = Number(where[2]);
  });
  await check("the top bar switches to another project: new files, the old terminal killed", async () => {
    await click('[data-testid="project-button"]');
    await waitFor("the projects overlay", () => find(".welcome.overlay"));
    await click('.welcome.overlay .recent-row:last-child .recent-open');
    await waitFor("the other project's files", () => find('[data-testid="tree-item"][data-path="src"]'));
    await waitFor("the first project's shell to end", () => firstShell && !alive(firstShell), 10_000);
    const title = await wd("GET", `${s}/title`);
    if (title !== "project — Paige") throw new Error(`window title ${JSON.stringify(title)}`);
  });
});

// A project given on the command line (and a key in the environment): the workspace.
// Closing the window is the last check: the app exits with it.
await withApp(
  { env: { ...process.env, PAIGE_AGENT_CMD: "bash --norc --noprofile", ANTHROPIC_API_KEY: "sk-ant-e2e", DATA_DIR: dataDir }, args: [project] },
  async ({ s, started, find, exec, press, typeText }) => {
    await check("the window shows the UI connected over IPC", async () => {
      await waitFor("connected", async () => (await exec("return document.querySelector('[data-testid=conn-status]')?.dataset.state")) === "open");
      console.log(`     window ready ${Date.now() - started} ms after the session request`);
    });
    await check("the project's name in the top bar opens the projects overlay; Escape closes it", async () => {
      const name = await exec("return document.querySelector('[data-testid=project-button]')?.textContent");
      if (name !== "project") throw new Error(`top bar shows ${JSON.stringify(name)}`);
      await wd("POST", `${s}/element/${await find('[data-testid="project-button"]')}/click`, {});
      await waitFor("the overlay", () => find(".welcome.overlay"));
      await press(["\uE00C"]);
      await waitFor("the overlay to close", async () => (await exec("return document.querySelector('.welcome.overlay') === null")));
    });
    await check("the explorer shows the fixture project", async () => {
      await waitFor("src in the explorer", () => find('[data-testid="tree-item"][data-path="src"]'));
    });
    await check("opening a file from the explorer shows it in Monaco", async () => {
      await wd("POST", `${s}/element/${await find('[data-testid="tree-item"][data-path="src"]')}/click`, {});
      const file = await waitFor("main.py", () => find('[data-testid="tree-item"][data-path="src/main.py"]'));
      await wd("POST", `${s}/element/${file}/click`, {});
      await waitFor("the file in Monaco", async () => (await exec("return (document.querySelector('.monaco-editor .view-lines')?.innerText ?? '').replace(/\\u00a0/g, ' ')")).includes("def main"));
    });
    await check("typing and Ctrl+S write the file to disk", async () => {
      // Opening a file focuses Monaco, its cursor at 1:1 in a freshly opened file.
      await waitFor("Monaco focused", () => exec("return document.activeElement?.closest('.monaco-editor') != null"));
      await typeText("# typed in the window\n");
      await waitFor("a dirty tab", async () => (await exec("return document.querySelector('.tab.active')?.dataset.dirty")) === "true");
      await press([["\uE009", "s"]]);
      const expected = "# typed in the window\ndef main():\n    print('hi')\n";
      await waitFor("the file on disk", () => readFileSync(join(project, "src", "main.py"), "utf8") === expected).catch(() => {
        throw new Error(`on disk: ${JSON.stringify(readFileSync(join(project, "src", "main.py"), "utf8"))}`);
      });
      await waitFor("the save ack", async () => (await exec("return document.querySelector('.tab.active')?.dataset.dirty")) === "false");
    });
    await check("the window received fs:save_ack for the saved file", async () => {
      const acks = await exec("return window.paige.framesOf('fs:save_ack')");
      const ack = acks.find((a) => a.path === "src/main.py");
      if (!ack || ack.success !== true) throw new Error(`fs:save_ack frames: ${JSON.stringify(acks)}`);
    });
    await check("the window keeps answering while the core takes bursts of 236 KiB buffer updates", async () => {
      // Three bursts of 30 unsaved-buffer updates of 236 KiB each go in at once, while the
      // window's other IPC (app_state, a command on the main thread) is timed.
      const bursts = await wd("POST", `${s}/execute/async`, {
        script: `const done = arguments[arguments.length - 1];
          (async () => {
            const invoke = window.__TAURI_INTERNALS__.invoke;
            const content = ("# " + "x".repeat(78) + "\\n").repeat(3020);
            const frame = (i) => JSON.stringify({ type: "buffer:update",
              payload: { path: "src/util.py", content: content + "# " + i + "\\n", cursorPosition: { line: 1, column: 1 } } });
            const bursts = [];
            for (let b = 0; b < 3; b++) {
              const updates = [];
              for (let i = 0; i < 30; i++) updates.push(invoke("ui_message", { frame: frame(b * 30 + i) }));
              const pings = [];
              for (let i = 0; i < 20; i++) {
                const t = performance.now();
                await invoke("app_state");
                pings.push(performance.now() - t);
              }
              await Promise.all(updates);
              pings.sort((a, b) => a - b);
              bursts.push({ p50: pings[10], max: pings[19] });
            }
            done(bursts);
          })().catch((e) => done({ error: String(e) }));`,
        args: [],
      });
      if (bursts.error) throw new Error(bursts.error);
      const shown = bursts.map((b) => `p50 ${b.p50.toFixed(1)} / max ${b.max.toFixed(1)} ms`).join("; ");
      console.log(`     IPC ping during three bursts: ${shown}`);
      // The IPC layer itself decodes each frame on the main thread (~90 ms at most per burst
      // here either way); a frame's core work held it too before `ui_message` went async.
      const maxes = bursts.map((b) => b.max).sort((a, b) => a - b);
      if (maxes[1] > 250) throw new Error(`the window stalled: pings took up to ${maxes.map((m) => m.toFixed(0)).join(", ")} ms`);
    });
    await check("the run file names the app's own server", async () => {
      run = JSON.parse(readFileSync(runFile, "utf8"));
      if (realpathSync(`/proc/${run.pid}/exe`) !== realpathSync(app)) throw new Error(`pid ${run.pid} is not ${app}`);
      if (realpathSync(run.projectDir) !== realpathSync(project)) throw new Error(`projectDir ${run.projectDir}`);
      const health = await fetch(`http://127.0.0.1:${run.port}/health`);
      if (!health.ok) throw new Error(`/health: HTTP ${health.status}`);
    });
    await check("paige_highlight_lines from an MCP client shows a decoration on that line", async () => {
      const started = await fetch(`http://127.0.0.1:${run.port}/api/session/start`, {
        method: "POST",
        headers: { authorization: `Bearer ${run.token}`, "content-type": "application/json" },
        body: JSON.stringify({ issueNumber: 7, issueTitle: "e2e: highlight from MCP" }),
      });
      if (started.status !== 201) throw new Error(`session start: HTTP ${started.status} ${await started.text()}`);
      // Line 3 is `print('hi')` now that a line was typed above `def main():`.
      const result = await mcpCall(run, "paige_highlight_lines", { path: "src/main.py", start: 3, end: 3, style: "warning", hoverText: "What does this print?" });
      if (result.structured?.success !== true) throw new Error(`result: ${JSON.stringify(result)}`);
      await waitFor("a decoration in the UI's editor", async () => (await exec("return window.paige.decorationCount('src/main.py')")) > 0, 10_000);
      // Monaco draws a whole-line decoration as an overlay level with its line.
      const line = await waitFor("the decoration in Monaco's DOM", () =>
        exec(`const deco = document.querySelector('.monaco-editor .view-overlays .paige-line.paige-line-warning');
          if (!deco) return null;
          const top = deco.getBoundingClientRect().top;
          const level = (el) => Math.abs(el.getBoundingClientRect().top - top) < 2;
          const text = [...document.querySelectorAll('.monaco-editor .view-lines .view-line')].find(level);
          const number = [...document.querySelectorAll('.monaco-editor .margin-view-overlays .line-numbers')].find(level);
          return { text: (text?.innerText ?? '').replace(/\u00a0/g, ' '), number: number?.textContent ?? '' };`),
      10_000);
      if (line.number !== "3" || !line.text.includes("print('hi')")) throw new Error(`decorated line: ${JSON.stringify(line)}`);
    });
    await check("the terminal echoes typed input from a shell child", async () => {
      const term = await find(".xterm-helper-textarea");
      await wd("POST", `${s}/element/${term}/value`, { text: "echo paige-$((6*7))\n" });
      await waitFor("the echo", async () => (await exec("return document.querySelector('.xterm-rows')?.innerText ?? ''")).includes("paige-42"));
    });
    // The main screen: explorer, the highlighted file, the terminal's output.
    mkdirSync(artifacts, { recursive: true });
    const png = await wd("GET", `${s}/screenshot`);
    writeFileSync(join(artifacts, "desktop-window.png"), Buffer.from(png, "base64"));
    console.log(`screenshot: ${join(artifacts, "desktop-window.png")}`);
    await check("paige_open_file from an MCP client opens the file in a tab", async () => {
      await mcpCall(run, "paige_open_file", { path: "src/util.py" });
      await waitFor("the active tab", async () => (await exec("return document.querySelector('.tab.active')?.dataset.path")) === "src/util.py", 10_000);
      await waitFor("the file in Monaco", async () => (await exec("return (document.querySelector('.monaco-editor .view-lines')?.innerText ?? '').replace(/\u00a0/g, ' ')")).includes("return 42"), 10_000);
      const tabs = await exec("return window.paige.openTabs()");
      if (!tabs.includes("src/main.py") || !tabs.includes("src/util.py")) throw new Error(`tabs: ${JSON.stringify(tabs)}`);
    });
    await check("the terminal's shell is the app's child, with a background job", async () => {
      const term = await find(".xterm-helper-textarea");
      // SIGHUP ignored (as by nohup): the PTY's hangup at exit would not end them, only Paige.
      // Job control gives the job a process group of its own.
      await wd("POST", `${s}/element/${term}/value`, { text: "trap '' HUP; echo PAIGE_PID=$$; sleep 1000 & echo SLEEP_PID=$!\n" });
      // The echoed command line shows `=$`; only the output has digits after `=`.
      const pids = await waitFor("the PIDs", async () => {
        const rows = await exec("return document.querySelector('.xterm-rows')?.innerText ?? ''");
        const pid = (name) => rows.match(new RegExp(`${name}=(\\d+)\\s`))?.[1];
        return pid("PAIGE_PID") && pid("SLEEP_PID") && [Number(pid("PAIGE_PID")), Number(pid("SLEEP_PID"))];
      });
      [shell, job] = pids;
      if (!alive(shell) || !alive(job)) throw new Error(`shell ${shell} or job ${job} not running`);
      if (parentOf(shell) !== run.pid) throw new Error(`the shell's parent is ${parentOf(shell)}, not the app (${run.pid})`);
      if (parentOf(job) !== shell) throw new Error(`the job's parent is ${parentOf(job)}, not the shell (${shell})`);
      if (groupOf(job) === groupOf(shell)) throw new Error("the job shares the shell's process group");
    });
    // Last: closing the only window exits the app. Closed as a window manager's close button
    // does (WM_DELETE_WINDOW); WebDriver's Close Window would only have the driver kill the app
    // (see close-window.py).
    await check("closing the window kills the terminal's shell and its background job", async () => {
      if (!shell || !job) throw new Error("no PIDs from the previous check");
      await promisify(execFile)(python ?? "python3", [join(here, "close-window.py"), String(run.pid)], { timeout: 10_000 });
      await waitFor("the shell and job to end", () => !alive(shell) && !alive(job), 10_000).catch(() => {
        throw new Error(`still running: ${[shell, job].filter(alive).join(", ")}`);
      });
    });
    await check("the app exits with its window and removes its run file", async () => {
      await waitFor("the app to exit", () => !alive(run.pid), 10_000);
      if (existsSync(runFile)) throw new Error(`${runFile} is still there`);
    });
  },
);
// SIGTERM (a logout, `kill`) ends the app as closing its window does.
const sigData = join(work, "sig-data");
let sigRun;
let sigShell;
await withApp(
  { env: { ...process.env, PAIGE_AGENT_CMD: "bash --norc --noprofile", ANTHROPIC_API_KEY: "sk-ant-e2e", DATA_DIR: sigData }, args: [project] },
  async ({ find, exec, terminalText, s }) => {
    await check("SIGTERM shuts the app down cleanly: terminal killed, run file removed", async () => {
      await waitFor("connected", async () => (await exec("return document.querySelector('[data-testid=conn-status]')?.dataset.state")) === "open");
      sigRun = JSON.parse(await waitFor("the run file", () => readFileSync(join(sigData, "run", "server.json"), "utf8")));
      const term = await find(".xterm-helper-textarea");
      await wd("POST", `${s}/element/${term}/value`, { text: "trap '' HUP TERM; echo SIG_PID=$$\n" });
      sigShell = Number((await waitFor("the shell's PID", async () => (await terminalText()).match(/SIG_PID=(\d+)\s/)))[1]);
      process.kill(sigRun.pid, "SIGTERM");
      await waitFor("the app to exit", () => !alive(sigRun.pid), 10_000);
      if (alive(sigShell)) throw new Error(`the shell ${sigShell} outlived the app`);
      if (existsSync(join(sigData, "run", "server.json"))) throw new Error("the run file is still there");
    });
  },
);

// Whatever a failed check left running.
for (const pid of [run?.pid, shell, job, firstShell, sigRun?.pid, sigShell]) if (pid && alive(pid)) process.kill(pid, "SIGKILL");
rmSync(work, { recursive: true, force: true });
process.exit(summary("desktop e2e"));

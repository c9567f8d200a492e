// The real window under test: the built `paige-app` launched through tauri-driver (and
// Debian's WebKitWebDriver), with plain WebDriver HTTP calls, for the desktop scripts
// (desktop-e2e.mjs, desktop-literal.mjs). Also the /proc and MCP helpers they share.
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { fail, sleep, waitFor } from "./checks.mjs";

const here = dirname(fileURLToPath(import.meta.url));
export const app = process.env.PAIGE_APP;
const python = process.env.PAIGE_TEST_PYTHON;
const driverBin = process.env.TAURI_DRIVER ?? "tauri-driver";
if (!app || !existsSync(app)) throw new Error(`set PAIGE_APP to the built paige-app (got ${app})`);
// Each launch has its own driver port, so a driver still letting go of its port never
// answers for the next one.
let port = 4444;
let base = "";

/** The characters a US keyboard layout types with Shift. */
const SHIFTED = '~!@#$%^&*()_+{}|:"<>?ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Running: /proc/PID exists and is not a zombie (a zombie waits for its reaper only). */
export function alive(pid) {
  try {
    return statField(pid, 0) !== "Z";
  } catch {
    return false;
  }
}
/**
 * The processes (but this one) whose command line, working folder or environment names
 * `dir`: what an app that is gone left running there.
 */
export function runningIn(dir) {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!pid || pid === process.pid || !alive(pid)) continue;
    const read = (what) => {
      try {
        return what === "cwd" ? readlinkSync(`/proc/${pid}/cwd`) : readFileSync(`/proc/${pid}/${what}`, "latin1").replaceAll("\0", " ");
      } catch {
        return "";
      }
    };
    const cmdline = read("cmdline");
    if ([cmdline, read("cwd"), read("environ")].some((text) => text.includes(dir))) found.push(`${pid} ${cmdline.slice(0, 120)}`);
  }
  return found;
}
/** A field of /proc/PID/stat after the command name: 0 state, 1 parent, 2 process group. */
export const statField = (pid, n) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[n];
};
export const parentOf = (pid) => Number(statField(pid, 1));
export const groupOf = (pid) => Number(statField(pid, 2));

/** One MCP tool call through the Python SDK; its result as {is_error, structured, text}. */
export async function mcpCall(run, tool, args) {
  if (!python) throw new Error("set PAIGE_TEST_PYTHON to a Python with the mcp SDK (scripts/lib.sh ensure_python_mcp)");
  const script = join(here, "../../tests/blackbox/mcp_call.py");
  const url = `http://127.0.0.1:${run.port}/mcp`;
  const { stdout } = await promisify(execFile)(python, [script, url, run.agentToken, tool, JSON.stringify(args)], { timeout: 30_000 });
  const result = JSON.parse(stdout);
  if (result.is_error) throw new Error(`${tool}: ${result.text}`);
  return result;
}

/** One WebDriver command to the current launch's driver; its `value`. */
export async function wd(method, path, body, timeoutMs = 60_000) {
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
export async function withApp({ env, args }, checks) {
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
    // Found afresh on each try: a panel that re-rendered between the lookup and the click (a
    // frame came) replaced the element ("stale element reference").
    const click = async (css) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await wd("POST", `${s}/element/${await find(css)}/click`, {});
        } catch (err) {
          if (attempt === 3 || !String(err.message).includes("stale element")) throw err;
          await sleep(200);
        }
      }
    };
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
    // Characters that need Shift (a US layout) are typed with Shift held, as on a keyboard:
    // after a right click (a pointer action with button 2), WebKitWebDriver here drops the
    // Shift it adds by itself for them ("A_#" arrives as "a-3"), even for Element Send Keys.
    const typeText = (text) => press([...text].map((c) => (c === "\n" ? "\uE007" : SHIFTED.includes(c) ? ["\uE008", c] : c)));
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

/** The terminal's input (xterm's textarea). */
export const TERMINAL = ".xterm-helper-textarea";

/** Types `text` into the element `selector` names, found afresh: a panel that re-rendered
 * in between (a frame came) replaced the element the last lookup found ("stale element"). */
export async function typeIn({ s, find }, selector, text) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await wd("POST", `${s}/element/${await find(selector)}/value`, { text });
    } catch (err) {
      if (attempt === 3 || !String(err.message).includes("stale element")) throw err;
      await sleep(200);
    }
  }
}

/** A learner's HOME after they installed Claude Code and logged in (claude.ai): onboarding
 * done, `project` trusted, the OAuth login stored. Nothing else tells Claude Code a key. */
export function signedInHome(home, project) {
  mkdirSync(join(home, ".claude"), { recursive: true });
  const login = { accessToken: "sk-ant-oat01-e2e-window-login", refreshToken: "sk-ant-ort01-e2e", expiresAt: Date.now() + 365 * 86_400_000, scopes: ["user:inference", "user:profile"], subscriptionType: "pro" };
  writeFileSync(join(home, ".claude", ".credentials.json"), JSON.stringify({ claudeAiOauth: login }), { mode: 0o600 });
  const trusted = { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true };
  writeFileSync(join(home, ".claude.json"), JSON.stringify({ hasCompletedOnboarding: true, theme: "dark", projects: { [realpathSync(project)]: trusted } }));
  return home;
}

// End-to-end test of the real desktop window: the built `paige-app` under Xvfb, driven
// through tauri-driver + Debian's WebKitWebDriver with plain WebDriver HTTP calls.
// Needs PAIGE_APP (the built app), tauri-driver on PATH (or TAURI_DRIVER) and a DISPLAY.
// Prints one line per check and a closing "N passed, N failed".
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const app = process.env.PAIGE_APP;
const driverBin = process.env.TAURI_DRIVER ?? "tauri-driver";
const artifacts = resolve(process.env.PAIGE_ARTIFACTS ?? join(here, "../test-artifacts"));
const PORT = 4444;
const base = `http://127.0.0.1:${PORT}`;
if (!app || !existsSync(app)) throw new Error(`set PAIGE_APP to the built paige-app (got ${app})`);

const work = mkdtempSync(join(tmpdir(), "paige-e2e-"));
const project = join(work, "project");
mkdirSync(join(project, "src"), { recursive: true });
writeFileSync(join(project, "src", "main.py"), "def main():\n    print('hi')\n");

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err instanceof Error ? err.message : err}`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(what, fn, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
    } catch {}
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function wd(method, path, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${JSON.stringify(json.value ?? json).slice(0, 300)}`);
  return json.value;
}

// The app inherits its settings through the driver (tauri:options carries no environment).
const driver = spawn(driverBin, ["--port", String(PORT)], {
  stdio: ["ignore", "inherit", "inherit"],
  env: { ...process.env, PAIGE_AGENT_CMD: "bash --norc --noprofile", ANTHROPIC_API_KEY: "sk-ant-e2e", DATA_DIR: join(work, "data"), RUST_LOG: "warn" },
});
let session;
try {
  await waitFor("tauri-driver", () => fetch(`${base}/status`).then((r) => r.ok), 20_000);
  const started = Date.now();
  session = (
    await wd("POST", "/session", {
      capabilities: {
        alwaysMatch: {
          "tauri:options": {
            application: app,
            args: [project],
          },
        },
      },
    })
  ).sessionId;
  const s = `/session/${session}`;
  // Elements are looked up by script: WebKitWebDriver's own CSS lookup misses attribute
  // selectors here. The reference it returns works for clicks and keys all the same.
  const find = async (css) => {
    const found = await wd("POST", `${s}/execute/sync`, { script: "return document.querySelector(arguments[0])", args: [css] });
    const id = found && Object.values(found)[0];
    if (!id) throw new Error(`no element ${css}`);
    return id;
  };
  const exec = (script, args = []) => wd("POST", `${s}/execute/sync`, { script, args });

  await check("the window shows the UI connected over IPC", async () => {
    await waitFor("connected", async () => (await exec("return document.querySelector('[data-testid=conn-status]')?.dataset.state")) === "open");
    console.log(`     window ready ${Date.now() - started} ms after the session request`);
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
    const input = await find(".monaco-editor textarea");
    // The cursor starts at 1:1 in a freshly opened file.
    await wd("POST", `${s}/element/${input}/value`, { text: "# typed in the window\n" });
    await waitFor("a dirty tab", async () => (await exec("return document.querySelector('.tab.active')?.dataset.dirty")) === "true");
    await wd("POST", `${s}/element/${input}/value`, { text: "\uE009s\uE000" });
    await waitFor("the file on disk", () => readFileSync(join(project, "src", "main.py"), "utf8").includes("# typed in the window"));
    await waitFor("the save ack", async () => (await exec("return document.querySelector('.tab.active')?.dataset.dirty")) === "false");
  });
  await check("the terminal echoes typed input from a shell child", async () => {
    const term = await find(".xterm-helper-textarea");
    await wd("POST", `${s}/element/${term}/value`, { text: "echo paige-$((6*7))\n" });
    await waitFor("the echo", async () => (await exec("return document.querySelector('.xterm-rows')?.innerText ?? ''")).includes("paige-42"));
  });
  mkdirSync(artifacts, { recursive: true });
  const png = await wd("GET", `${s}/screenshot`);
  writeFileSync(join(artifacts, "desktop-window.png"), Buffer.from(png, "base64"));
  console.log(`screenshot: ${join(artifacts, "desktop-window.png")}`);
} catch (err) {
  failed++;
  console.log(`FAIL desktop e2e setup: ${err instanceof Error ? err.message : err}`);
} finally {
  if (session) await wd("DELETE", `/session/${session}`).catch(() => {});
  driver.kill("SIGTERM");
  await new Promise((r) => driver.once("exit", r));
  rmSync(work, { recursive: true, force: true });
}
console.log(`desktop e2e: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

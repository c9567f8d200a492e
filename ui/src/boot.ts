// The entry point. In the desktop app without an open project it shows the welcome screen
// (recent projects, a folder picker, the API key); otherwise it loads the workspace
// (main.ts, with Monaco and xterm) — which the welcome screen never pays for.
import "./style.css";
import { type AppState, call, errorText, inDesktop } from "./shell";
import { ProjectsPanel } from "./welcome";

async function boot(): Promise<void> {
  const app = document.getElementById("app");
  if (!app) throw new Error("#app missing from index.html");
  if (inDesktop()) {
    let state: AppState;
    try {
      state = await call("app_state", {});
    } catch (err) {
      app.textContent = `Paige could not start: ${errorText(err)}`;
      return;
    }
    if (!state.project) {
      const panel = new ProjectsPanel(app, { mode: "welcome", onOpened: () => window.location.reload() });
      panel.render(state);
      return;
    }
    document.title = `${state.project.name} — Paige`;
  }
  await import("./main");
}

void boot();

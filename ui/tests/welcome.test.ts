import { describe, expect, it } from "vitest";
import type { AppState } from "../src/shell";
import { keyStatus, openedAgo, parseToolList } from "../src/welcome";

const now = Date.parse("2026-11-22T10:00:00Z");

describe("openedAgo", () => {
  it("says how long ago a project was opened in the largest fitting unit", () => {
    expect(openedAgo("2026-11-22T09:59:30Z", now)).toMatch(/30 seconds ago/);
    expect(openedAgo("2026-11-22T09:55:00Z", now)).toMatch(/5 minutes ago/);
    expect(openedAgo("2026-11-21T10:00:00Z", now)).toBe("yesterday");
    expect(openedAgo("2026-11-01T10:00:00Z", now)).toMatch(/3 weeks ago/);
  });
  it("shows nothing for a date it cannot read", () => {
    expect(openedAgo("not a date", now)).toBe("");
  });
});

function state(source: AppState["apiKey"]["source"], lastFour: string | null): AppState {
  return {
    project: null,
    recentProjects: [],
    apiKey: { configured: source !== "none", source, lastFour },
    settingsPath: "/home/u/.paige/settings.json",
    notice: null,
    allowedMcpTools: [],
  };
}

describe("keyStatus", () => {
  it("names where the key in use comes from, by its last four characters only", () => {
    expect(keyStatus(state("environment", "9999"))).toContain("ANTHROPIC_API_KEY from the environment (…9999)");
    expect(keyStatus(state("settings", "1234"))).toBe("A saved key ending in …1234 is in use.");
  });
  it("tells a user without a key that Paige still works", () => {
    expect(keyStatus(state("none", null))).toMatch(/Paige works without one/);
  });
});

describe("parseToolList", () => {
  it("reads one tool per line or comma, trimmed, without blanks", () => {
    expect(parseToolList(" mcp__files__read_file \n\nmcp__db__*, mcp__git__log\n")).toEqual([
      "mcp__files__read_file",
      "mcp__db__*",
      "mcp__git__log",
    ]);
    expect(parseToolList("  \n ")).toEqual([]);
  });
});

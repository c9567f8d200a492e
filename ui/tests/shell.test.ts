import { describe, expect, it } from "vitest";
import { errorText, isCommandError } from "../src/shell";

describe("errorText", () => {
  it("shows a typed CommandError's message, not [object Object]", () => {
    const err = { code: "project_refused", message: "/tmp/gone does not exist" };
    expect(isCommandError(err)).toBe(true);
    expect(errorText(err)).toBe("/tmp/gone does not exist");
  });

  it("keeps plain strings and Errors as they are", () => {
    expect(errorText("no project is open")).toBe("no project is open");
    expect(errorText(new Error("boom"))).toBe("boom");
    expect(isCommandError({ message: "no code" })).toBe(false);
  });
});

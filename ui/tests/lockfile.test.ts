import { describe, expect, it } from "vitest";
import lockJson from "../package-lock.json";

// `npm ci` refuses a lock that lacks an entry for any optional dependency, even one for another
// platform; a lock written by `npm install` on one machine can miss them when the registry it
// used lacked those packages for the chosen version.
type Entry = { version: string; optionalDependencies?: Record<string, string> };
const lock = lockJson as unknown as { packages: Record<string, Entry> };

describe("package-lock.json", () => {
  for (const name of ["@tauri-apps/cli", "rollup"]) {
    it(`records ${name}'s package for every platform, so npm ci works on any machine`, () => {
      const entry = lock.packages[`node_modules/${name}`];
      expect(entry, name).toBeDefined();
      // An exact version must match; a range (rollup's "fsevents": "~2.3.2") needs an entry.
      const missing = Object.entries(entry.optionalDependencies ?? {}).filter(([dep, wanted]) => {
        const locked = lock.packages[`node_modules/${dep}`];
        return locked === undefined || (/^\d/.test(wanted) && locked.version !== wanted);
      });
      expect(missing).toEqual([]);
      expect(Object.keys(entry.optionalDependencies ?? {}).length).toBeGreaterThan(5);
    });
  }
});

// What the UI's end-to-end scripts share: named checks with a closing tally, and polling.
// Each check prints `ok   name` or `FAIL name: reason`; `summary(label)` prints the line
// scripts/test.sh counts ("LABEL: N passed, N failed") and gives the exit code.

let passed = 0;
let failed = 0;

/** Runs one named check; a throw fails it and the run goes on. */
export async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    fail(name, err);
  }
}

/** Counts a failure outside any check (a harness that could not start, say). */
export function fail(name, err) {
  failed++;
  console.log(`FAIL ${name}: ${err instanceof Error ? err.message : err}`);
}

/** A part that cannot run here says why — and fails under PAIGE_NO_SKIPS=1 (scripts/test.sh
 * sets it: CI fails on a skip). */
export function skipped(why) {
  if (process.env.PAIGE_NO_SKIPS === "1") fail("skipped", `${why}, and PAIGE_NO_SKIPS=1 runs everything`);
  else console.log(`SKIPPED: ${why}`);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns something truthy (a throw counts as not yet). */
export async function waitFor(what, fn, timeoutMs = 20_000, everyMs = 200) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
    } catch {}
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Prints the tally line and returns the process exit code. */
export function summary(label) {
  console.log(`${label}: ${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

/** Fails when the page itself scrolls (the app is one window: its panels scroll inside),
 * naming the elements that reach past the window's bottom. */
export async function noPageScroll(page, where) {
  const over = await page.evaluate(() => {
    const root = document.scrollingElement ?? document.documentElement;
    const extra = root.scrollHeight - root.clientHeight;
    if (extra <= 0) return null;
    const past = [...document.querySelectorAll("body *")]
      .filter((e) => e.getBoundingClientRect().bottom > innerHeight + 0.5 && getComputedStyle(e).position !== "fixed")
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join(".")} bottom ${Math.round(e.getBoundingClientRect().bottom)}`);
    return { extra, past };
  });
  if (over) throw new Error(`${where}: the page scrolls by ${over.extra} px; past the bottom: ${over.past.join("; ")}`);
}

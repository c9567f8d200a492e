// The launch screen, Practice and spaced review in the real window (desktop-e2e.mjs runs it):
// the dashboard's state and ranked issues, a kata submitted and reviewed, a review answered by keys.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { check, waitFor } from "./checks.mjs";
import { comprehensionGrade, promptExample, reviewQuestion, startFakeAnthropic, userText } from "./fake-anthropic.mjs";
import { wd, withApp } from "./desktop-driver.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const python = process.env.PAIGE_TEST_PYTHON;
const artifacts = resolve(process.env.PAIGE_ARTIFACTS ?? join(here, "../test-artifacts"));

/** Runs the checks in a fresh app under `work`; returns the app's pid, for the clean-up. */
export async function dashboardAndPracticeInTheWindow(work) {
  // The launch screen and Practice: a project whose `gh` is a stand-in listing two issues, a
  // data dir seeded with one finished session, its knowledge gap and a kata with two constraints
  // (minLevel 3 and 7). Paige's model is a second fake: the issue assessment answers after
  // 1.5 s (so the dashboard's state shows before its issues), the practice review with level 4
  // after 1 s (so the progress shows; 4 unlocks the minLevel-3 constraint only). Spaced review's
  // question and grade (issue 31) answer from the request alone, each after 0.8 s.
  const dashProject = join(work, "dash-project");
  mkdirSync(join(dashProject, "src"), { recursive: true });
  writeFileSync(join(dashProject, "src", "retry.py"), "def retry(f):\n    return f()\n");
  const dashData = join(work, "dash-data");
  mkdirSync(dashData, { recursive: true });
  const ghDir = join(work, "gh-bin");
  mkdirSync(ghDir, { recursive: true });
  // As `gh issue list --json number,title,body,labels,assignees,comments` prints them.
  writeFileSync(
    join(ghDir, "issues.json"),
    JSON.stringify([
      { number: 12, title: "Greet the user by name", body: "The greeting ignores the name.", labels: [], assignees: [], comments: [] },
      { number: 9, title: "Add a --quiet flag", body: "Too much output.", labels: [], assignees: [], comments: [] },
    ]),
  );
  writeFileSync(
    join(ghDir, "gh"),
    `#!/bin/sh\nhere="$(dirname "$0")"\necho "$*" >> "$here/gh-calls"\ncase "$1 $2" in\n  "issue list") cat "$here/issues.json" ;;\n  *) echo "unknown command" >&2; exit 1 ;;\nesac\n`,
    { mode: 0o755 },
  );
  // The model ranks #12 first but lower: the window shows #9 (higher priority) first, with gh's titles.
  const assessed = (number, suitability, score) => ({
    ...promptExample("issue-assessment").issues[0],
    number,
    title: `the model's title ${number}`,
    summary: `Issue ${number} in Paige's words`,
    suitability,
    suitability_reason: `e2e: why ${number} is ${suitability}`,
    priority_score: score,
  });
  const review = { ...promptExample("practice-review"), level: 4, passed: true, feedback: "e2e: a clear loop; what if f never succeeds?" };
  const dashFake = await startFakeAnthropic({
    replies: {
      issue_assessment: { issues: [assessed(12, "stretch", 0.4), assessed(9, "good_fit", 0.9)] },
      practice_review: review,
      review_question: reviewQuestion,
      comprehension_grade: comprehensionGrade,
    },
    delays: { issue_assessment: 1500, practice_review: 1000, review_question: 800, comprehension_grade: 800 },
  });
  const kata = {
    id: "e2e-kata-retry",
    title: "Retry with a limit",
    description: "Call f until it succeeds, at most n times.",
    scaffolding: "def retry(f, n):\n    pass\n",
    constraints: [
      { title: "No while loops", description: "Use a for loop over range(n)", minLevel: 3 },
      { title: "Exponential backoff", description: "Double the wait between tries", minLevel: 7 },
    ],
  };
  /** Seeds the app's database (created and migrated by the running app) through Python's sqlite3. */
  async function seedDashboard() {
    const script = `import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
a = json.loads(sys.argv[2])
with db:
    db.execute("INSERT INTO sessions (id, project_dir, issue_number, issue_title, status, started_at, ended_at) VALUES ('e2e-session', ?, 3, 'Flaky uploads', 'completed', '2026-01-10T10:00:00.000Z', '2026-01-10T10:45:00.000Z')", (a["project"],))
    db.execute("INSERT INTO knowledge_gaps (id, session_id, topic, severity, evidence, last_encountered_at, addressed) VALUES ('e2e-gap', 'e2e-session', 'retry loops', 'medium', 'e2e', '2026-01-10T10:40:00.000Z', 1)")
    db.execute("INSERT INTO kata_specs (id, knowledge_gap_id, title, description, scaffolding_code, instructor_notes, constraints) VALUES (?, 'e2e-gap', ?, ?, ?, 'E2E-INSTRUCTOR-NOTES', ?)", (a["id"], a["title"], a["description"], a["scaffolding"], json.dumps(a["constraints"])))
`;
    await promisify(execFile)(python ?? "python3", ["-c", script, join(dashData, "paige.db"), JSON.stringify({ ...kata, project: realpathSync(dashProject) })], { timeout: 20_000 });
  }
  let dashRun;
  await withApp(
    {
      env: {
        ...process.env,
        PAIGE_AGENT_CMD: "bash --norc --noprofile",
        ANTHROPIC_API_KEY: "sk-ant-e2e-dash",
        ANTHROPIC_BASE_URL: dashFake.base,
        DATA_DIR: dashData,
        PAIGE_GH: join(ghDir, "gh"),
      },
      args: [dashProject],
    },
    async ({ s, exec, click, press, typeText }) => {
      const dashShown = () =>
        exec(`const d = document.querySelector('[data-testid="dashboard"]');
          const q = (css) => d?.querySelector(css) ?? null;
          return { visible: d !== null && d.offsetParent !== null,
                   cards: [...(d?.querySelectorAll('[data-testid="stat-card"]') ?? [])].map((c) => c.dataset.stat + "=" + c.querySelector('.dash-card-value')?.textContent),
                   radar: q('[data-testid="radar"]') !== null,
                   issuesSkeleton: q('[data-testid="issues-skeleton"]') !== null,
                   katas: [...(d?.querySelectorAll('[data-testid="dash-kata"]') ?? [])].map((k) => k.dataset.kataId),
                   issues: [...(d?.querySelectorAll('[data-testid="dash-issue"]') ?? [])].map((i) => ({
                     number: i.dataset.number, title: i.querySelector('.dash-issue-line strong, .dash-issue-line a')?.textContent,
                     badge: i.querySelector('[data-testid="suitability"]')?.textContent, suitability: i.querySelector('[data-testid="suitability"]')?.dataset.suitability })) };`);
      await check("the launch screen's dashboard shows when the window opens on a project with no file open", async () => {
        await waitFor("connected", async () => (await exec("return document.querySelector('[data-testid=conn-status]')?.dataset.state")) === "open");
        dashRun = JSON.parse(await waitFor("the run file", () => readFileSync(join(dashData, "run", "server.json"), "utf8")));
        await waitFor("the dashboard's stat cards", async () => (await dashShown()).cards.length > 0, 10_000);
        if (!(await dashShown()).visible) throw new Error("the dashboard is not visible");
        // Its first issue assessment done: the refresh below makes the only other one.
        await waitFor("the first issues", async () => (await dashShown()).issues.length === 2, 15_000).catch(async (err) => {
          throw new Error(`${err.message}: ${JSON.stringify(await dashShown())}`);
        });
      });
      let order;
      await check("after a reload the dashboard renders the seeded state with the issues it keeps (no model call); Refresh suggestions shows the skeleton, then the issues ranked again", async () => {
        await seedDashboard();
        const assessments = dashFake.callsOf("issue_assessment").length;
        await exec("window.__paigeBeforeReload = true; setTimeout(() => location.reload(), 0); return true");
        await waitFor("the reloaded page", () => exec("return window.__paigeBeforeReload !== true && document.querySelector('[data-testid=dashboard]') !== null"), 20_000);
        // The ranking Paige keeps comes with the state: no model call for a reload.
        await waitFor("the kept issues", async () => (await dashShown()).issues.length === 2, 10_000);
        if (dashFake.callsOf("issue_assessment").length !== assessments) throw new Error("a reload asked the model again");
        // Refresh, watched from inside the page every 25 ms until the issues are back.
        order = await wd("POST", `${s}/execute/async`, {
          script: `const done = arguments[arguments.length - 1];
            document.querySelector('[data-testid="dash-refresh"]').click();
            const t0 = performance.now(), seen = [];
            const d = () => document.querySelector('[data-testid="dashboard"]');
            const tick = () => {
              const state = d()?.querySelectorAll('[data-testid="stat-card"]').length > 0 && d()?.querySelector('[data-testid="radar"]') !== null
                && d()?.querySelector('[data-testid="dash-kata"]') !== null;
              const skeleton = d()?.querySelector('[data-testid="issues-skeleton"]') !== null;
              const issues = d()?.querySelectorAll('[data-testid="dash-issue"]').length ?? 0;
              const now = { state, skeleton, issues };
              if (!seen.length || JSON.stringify(seen.at(-1).now) !== JSON.stringify(now)) seen.push({ at: Math.round(performance.now() - t0), now });
              if ((issues > 0 && seen.some((o) => o.now.skeleton)) || performance.now() - t0 > 15000) return done(seen);
              setTimeout(tick, 25);
            };
            tick();`,
          args: [],
        });
        const stateFirst = order.find((o) => o.now.state && o.now.skeleton);
        const issuesAt = order.find((o) => o.now.issues > 0 && stateFirst && o.at > stateFirst.at);
        if (!stateFirst || !issuesAt) throw new Error(`states seen: ${JSON.stringify(order)}`);
        if (!stateFirst.now.skeleton || stateFirst.now.issues !== 0) throw new Error(`when the state showed: ${JSON.stringify(order)}`);
        // The model's 1.5 s: the issues come well after the state.
        if (issuesAt.at - stateFirst.at < 1000) throw new Error(`the issues followed the state by ${issuesAt.at - stateFirst.at} ms: ${JSON.stringify(order)}`);
        if (issuesAt.now.skeleton) throw new Error(`the skeleton stayed with the issues: ${JSON.stringify(order)}`);
        console.log(`     skeleton at ${stateFirst.at} ms, issues at ${issuesAt.at} ms after Refresh suggestions`);
        const shown = await dashShown();
        const cards = Object.fromEntries(shown.cards.map((c) => c.split("=")));
        if (cards.sessions !== "1" || cards.time !== "45 min" || cards.gaps !== "1 of 1") throw new Error(`stat cards ${JSON.stringify(shown.cards)}`);
        if (JSON.stringify(shown.katas) !== JSON.stringify([kata.id])) throw new Error(`katas ${JSON.stringify(shown.katas)}`);
        if (dashFake.callsOf("issue_assessment").length !== assessments + 1) throw new Error(`${dashFake.callsOf("issue_assessment").length - assessments} issue assessments after the refresh`);
      });
      await check("the ranked issues show best first with gh's titles and their suitability badges", async () => {
        const { issues } = await dashShown();
        const expected = [
          { number: "9", title: "#9 Add a --quiet flag", badge: "Good fit", suitability: "good_fit" },
          { number: "12", title: "#12 Greet the user by name", badge: "Stretch", suitability: "stretch" },
        ];
        // WebDriver hands the objects back with their keys in any order.
        const same = issues.length === expected.length && expected.every((e, i) => Object.keys(e).every((k) => issues[i][k] === e[k]));
        if (!same) throw new Error(`issues ${JSON.stringify(issues)}`);
        await exec(`document.querySelector('[data-testid="dash-issues"]').scrollIntoView(); return true`);
        mkdirSync(artifacts, { recursive: true });
        writeFileSync(join(artifacts, "desktop-dashboard.png"), Buffer.from(await wd("GET", `${s}/screenshot`), "base64"));
        console.log(`screenshot: ${join(artifacts, "desktop-dashboard.png")}`);
      });
      const practiceShown = () =>
        exec(`const t = (id) => document.querySelector('[data-testid="' + id + '"]')?.textContent ?? null;
          return { status: t("practice-status"), verdict: t("practice-verdict"), feedback: t("practice-feedback"), error: t("practice-error"),
                   unlocked: [...document.querySelectorAll('[data-testid="practice-unlocked"] li')].map((l) => l.textContent),
                   constraints: [...document.querySelectorAll('[data-testid="practice-constraint"]')].map((c) => ({ title: c.querySelector('strong')?.textContent, fresh: c.querySelector('.practice-new') !== null })),
                   submitDisabled: document.querySelector('[data-testid="practice-submit"]')?.disabled ?? null };`);
      const solution = "def retry(f, n):\n    for _ in range(n):\n        try:\n            return f()  # E2E-LEARNER-CODE\n        except Exception:\n            pass\n";
      await check("Practice in the top bar lists the seeded kata; opening it shows its scaffolding and no constraint unlocked yet", async () => {
        await click('[data-testid="practice-button"]');
        await waitFor("the seeded kata in the list", () => exec(`return document.querySelector('[data-testid="practice-kata"][data-kata-id="${kata.id}"]') !== null`), 10_000);
        const progress = await exec(`return document.querySelector('[data-testid="practice-kata"][data-kata-id="${kata.id}"] [data-testid="practice-progress"]')?.textContent`);
        if (progress !== "Not attempted yet · 0 attempts · 0 of 2 constraints unlocked") throw new Error(`progress ${JSON.stringify(progress)}`);
        await click(`[data-testid="practice-kata"][data-kata-id="${kata.id}"] [data-testid="practice-open"]`);
        const code = await waitFor("the kata's text area", () => exec(`return document.querySelector('[data-testid="practice-code"]')?.value ?? null`), 10_000);
        if (code !== kata.scaffolding) throw new Error(`scaffolding ${JSON.stringify(code)}`);
        const shown = await practiceShown();
        if (shown.constraints.length !== 0) throw new Error(`constraints before any attempt: ${JSON.stringify(shown.constraints)}`);
      });
      await check("typing a solution and Submit shows progress, then the fake's level 4 and exactly the minLevel-3 constraint newly unlocked", async () => {
        await click('[data-testid="practice-code"]');
        await press([["\uE009", "a"]]);
        await typeText(solution);
        const typed = await exec(`return document.querySelector('[data-testid="practice-code"]').value`);
        // A textarea keeps no auto-indent: the typed text is the text.
        if (typed !== solution) throw new Error(`the text area holds ${JSON.stringify(typed)}`);
        await click('[data-testid="practice-submit"]');
        const waiting = await waitFor("the review's progress", async () => {
          const p = await practiceShown();
          return p.status !== null ? p : null;
        }, 5_000);
        if (waiting.status !== "Paige is reviewing your solution…" || waiting.submitDisabled !== true || waiting.verdict !== null) throw new Error(`while reviewing: ${JSON.stringify(waiting)}`);
        const shown = await waitFor("the review", async () => {
          const p = await practiceShown();
          return p.verdict !== null || p.error !== null ? p : null;
        }, 20_000);
        const expected = {
          status: null,
          verdict: "Passed ✓ · level 4/10",
          feedback: review.feedback,
          error: null,
          unlocked: ["No while loops (level 3)"],
          constraints: [{ title: "No while loops", fresh: true }],
          submitDisabled: false,
        };
        const differ = Object.keys(expected).filter((k) => JSON.stringify(shown[k]) !== JSON.stringify(expected[k]));
        if (differ.length) throw new Error(`the review's ${differ.join(", ")} differ: ${JSON.stringify(shown)}`);
        mkdirSync(artifacts, { recursive: true });
        writeFileSync(join(artifacts, "desktop-practice.png"), Buffer.from(await wd("GET", `${s}/screenshot`), "base64"));
        console.log(`screenshot: ${join(artifacts, "desktop-practice.png")}`);
      });
      await check("the practice_review request carried the learner's typed code, the kata and no active constraint", async () => {
        const calls = dashFake.callsOf("practice_review");
        if (calls.length !== 1) throw new Error(`${calls.length} practice_review requests`);
        if (calls[0].apiKey !== "sk-ant-e2e-dash") throw new Error(`api key ${calls[0].apiKey}`);
        const asked = JSON.parse(userText(calls[0].body));
        if (asked.user_code !== solution) throw new Error(`user_code ${JSON.stringify(asked.user_code)}`);
        if (asked.kata_description !== kata.description || asked.instructor_notes !== "E2E-INSTRUCTOR-NOTES") throw new Error(`kata ${JSON.stringify(asked).slice(0, 300)}`);
        if (JSON.stringify(asked.active_constraints) !== "[]") throw new Error(`active_constraints ${JSON.stringify(asked.active_constraints)}`);
      });
      await check("the attempt is saved: the kata's level and attempt show in the Practice list", async () => {
        await click('[data-testid="practice-back"]');
        // The list shows what it had until the fresh practice:katas arrives.
        const progress = () => exec(`return document.querySelector('[data-testid="practice-kata"][data-kata-id="${kata.id}"] [data-testid="practice-progress"]')?.textContent ?? null`);
        await waitFor("the kata's new progress", async () => (await progress()) === "Best level 4/10 · 1 attempt · 1 of 2 constraints unlocked", 10_000).catch(async (err) => {
          throw new Error(`${err.message}: ${JSON.stringify(await progress())}`);
        });
      });
      // Spaced review (issue 31). The seeded gap is addressed; the kata, attempted at level 4 of
      // its hardest constraint's 7, is not mastered: the next dashboard request makes it a review item.
      const reviewShown = () =>
        exec(`const r = document.querySelector('[data-testid="review"]');
          const t = (id) => r?.querySelector('[data-testid="' + id + '"]')?.textContent ?? null;
          return { open: r !== null, stage: r?.querySelector('[data-testid="review-card"]')?.dataset.stage ?? null,
                   topic: t("review-topic"), asking: t("review-asking"), question: t("review-question"), grading: t("review-grading"),
                   grade: t("review-grade"), why: t("review-why"), back: t("review-comes-back"), caughtUp: t("review-caught-up"),
                   openKata: r?.querySelector('[data-testid="review-open-kata"]') !== null,
                   focused: document.activeElement?.dataset.testid ?? null };`);
      // Every stage the review card goes through, recorded in the page as it is drawn (a
      // MutationObserver misses none of them, however short).
      const watchStages = () =>
        exec(`window.__reviewStages?.observer.disconnect();
          const seen = [];
          const note = () => {
            const card = document.querySelector('[data-testid="review"] [data-testid="review-card"]');
            const now = card ? card.dataset.stage + ":" + (card.querySelector('[data-testid="review-asking"], [data-testid="review-grading"]')?.textContent ?? "") : null;
            if (now && seen.at(-1) !== now) seen.push(now);
          };
          const observer = new MutationObserver(note);
          observer.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-stage"] });
          window.__reviewStages = { observer, seen };
          note();
          return true;`);
      const stagesSeen = () => exec("return window.__reviewStages?.seen ?? []");
      let reviewed;
      await check("after the attempt the dashboard shows the review due, and the count opens the review drawer listing the kata", async () => {
        // The dashboard is asked for again (a reload: no model call).
        await exec("window.__paigeBeforeReload = true; setTimeout(() => location.reload(), 0); return true");
        await waitFor("the reloaded page", () => exec("return window.__paigeBeforeReload !== true && document.querySelector('[data-testid=dashboard]') !== null"), 20_000);
        const dueNow = () => exec(`const b = document.querySelector('[data-testid="reviews-due"]');
          return b ? { text: b.textContent, count: Number(b.dataset.count) } : null`);
        const due = await waitFor("the reviews due", dueNow, 10_000).catch(async (err) => {
          throw new Error(`${err.message}: ${JSON.stringify(await exec("return document.querySelector('[data-testid=\"dash-reviews\"]')?.innerText ?? null"))}`);
        });
        if (due.count !== 1 || due.text !== "1 review due") throw new Error(`due ${JSON.stringify(due)}`);
        await exec(`document.querySelector('[data-testid="dash-reviews"]').scrollIntoView({ block: "center" }); return true`);
        mkdirSync(artifacts, { recursive: true });
        writeFileSync(join(artifacts, "desktop-dashboard-reviews.png"), Buffer.from(await wd("GET", `${s}/screenshot`), "base64"));
        console.log(`screenshot: ${join(artifacts, "desktop-dashboard-reviews.png")}`);
        await click('[data-testid="reviews-due"]');
        const items = await waitFor("the review drawer's items", async () => {
          const listed = await exec(`return [...document.querySelectorAll('[data-testid="review"] [data-testid="review-item"]')].map((r) => ({
            id: r.dataset.itemId, kind: r.dataset.kind, topic: r.querySelector('[data-testid="review-open"]')?.textContent,
            badge: r.querySelector('[data-testid="review-kind"]')?.textContent }))`);
          return listed.length ? listed : null;
        }, 10_000);
        console.log(`     reviews due: ${JSON.stringify(items)}`);
        const count = await exec(`return document.querySelector('[data-testid="review-count"]')?.textContent ?? null`);
        if (items.length !== 1 || count !== "1 review due") throw new Error(`${JSON.stringify(count)} listing ${JSON.stringify(items)}`);
        if (items[0].kind !== "kata" || items[0].topic !== kata.title || items[0].badge !== "Kata") throw new Error(`item ${JSON.stringify(items[0])}`);
        const focused = (await reviewShown()).focused;
        if (focused !== "review-open") throw new Error(`the keys are not on the first item (${focused})`);
        reviewed = items[0];
      });
      await check("opening the review item shows progress, then a question naming the kata, with the keys in the answer box", async () => {
        if (!reviewed) throw new Error("no review item listed");
        await watchStages();
        await click(`[data-testid="review-item"][data-item-id="${reviewed.id}"] [data-testid="review-open"]`);
        const shown = await waitFor("the review question", async () => {
          const r = await reviewShown();
          return r.question !== null ? r : null;
        }, 15_000);
        const stages = await stagesSeen();
        if (stages[0] !== "asking:Writing a question…" || stages.at(-1) !== "answering:") throw new Error(`stages ${JSON.stringify(stages)}`);
        if (shown.topic !== kata.title || !shown.question.includes(`“${kata.title}”`)) throw new Error(`question ${JSON.stringify(shown)}`);
        if (!shown.openKata) throw new Error("no way to open the kata in Practice beside its question");
        const calls = dashFake.callsOf("review_question");
        if (calls.length !== 1) throw new Error(`${calls.length} review_question requests`);
        if (calls[0].apiKey !== "sk-ant-e2e-dash") throw new Error(`api key ${calls[0].apiKey}`);
        const asked = JSON.parse(userText(calls[0].body)).item;
        if (asked.topic !== kata.title || asked.kind !== "kata") throw new Error(`the model was asked about ${JSON.stringify(asked)}`);
        await waitFor("the keys in the answer box", async () => (await reviewShown()).focused === "review-answer", 2_000).catch(async (err) => {
          throw new Error(`${err.message}: they are on ${(await reviewShown()).focused}`);
        });
      });
      const REVIEW_ANSWER = "It tries f at most n times,\nbecause range(n) bounds the loop: no (endless) retries!";
      await check("an answer typed into the box (Shift+Enter a new line) and Enter grades it: progress, then the grade, why and when it comes back", async () => {
        const [first, second] = REVIEW_ANSWER.split("\n");
        await watchStages();
        await typeText(first);
        await press([["\uE008", "\uE007"]]);
        await typeText(second);
        const typed = await exec(`return document.querySelector('[data-testid="review-answer"]')?.value ?? null`);
        if (typed !== REVIEW_ANSWER) throw new Error(`the answer box holds ${JSON.stringify(typed)}`);
        if (dashFake.callsOf("comprehension_grade").length !== 0) throw new Error("Shift+Enter sent the answer");
        await press(["\uE007"]);
        const shown = await waitFor("the grade", async () => {
          const r = await reviewShown();
          return r.grade !== null ? r : null;
        }, 15_000);
        const stages = await stagesSeen();
        if (JSON.stringify(stages) !== JSON.stringify(["answering:", "grading:Grading your answer…", "graded:"])) throw new Error(`stages ${JSON.stringify(stages)}`);
        if (shown.grade !== "✓ Correct" || shown.why !== "Right: you said what the line is for.") throw new Error(`graded ${JSON.stringify(shown)}`);
        if (!/^Again (tomorrow|in \d+ days)$/.test(shown.back ?? "")) throw new Error(`comes back ${JSON.stringify(shown.back)}`);
        console.log(`     the kata comes back: ${shown.back}`);
        const answers = dashFake.callsOf("comprehension_grade").map((c) => JSON.parse(userText(c.body)).learner_answer);
        if (JSON.stringify(answers) !== JSON.stringify([REVIEW_ANSWER])) throw new Error(`graded answers ${JSON.stringify(answers)}`);
        const last = (await exec(`return window.paige.framesOf("reviews:graded")`)).at(-1);
        if (last?.rating !== "easy" && last?.rating !== "good") throw new Error(`rating ${JSON.stringify(last)}`);
        // Nothing else is due: "All caught up", the keys on Close.
        if (!shown.caughtUp?.startsWith("All caught up")) throw new Error(`caught up ${JSON.stringify(shown.caughtUp)}`);
        await waitFor("the keys on Close", async () => (await reviewShown()).focused === "review-done", 2_000).catch(async (err) => {
          throw new Error(`${err.message}: they are on ${(await reviewShown()).focused}`);
        });
        mkdirSync(artifacts, { recursive: true });
        writeFileSync(join(artifacts, "desktop-review.png"), Buffer.from(await wd("GET", `${s}/screenshot`), "base64"));
        console.log(`screenshot: ${join(artifacts, "desktop-review.png")}`);
      });
      await check("Escape closes the review drawer, and the dashboard says no reviews are due", async () => {
        await exec("window.__reviewStages?.observer.disconnect(); return true");
        await press(["\uE00C"]);
        await waitFor("the drawer to close", async () => !(await reviewShown()).open, 5_000);
        const none = await waitFor("No reviews due", () => exec(`return document.querySelector('[data-testid="reviews-none"]')?.textContent ?? null`), 5_000);
        if (none !== "No reviews due") throw new Error(`after the review: ${JSON.stringify(none)}`);
      });
    },
  );
  await dashFake.close();
  return dashRun?.pid;
}

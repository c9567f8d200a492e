//! Issue 40, item 8: a model-based test of the coaching session's lifecycle. Proptest draws
//! interleavings of what the learner and the programs around Paige do — a UI connecting or
//! reloading, a session started, Claude Code started, exited or restarted, `paige serve`
//! restarted, the learner prompting Claude Code, a phase marked done (the panel or Claude
//! Code's tool), the session ended (the panel or the tool) — against a real core on real
//! SQLite, with the fake Messages API for the model calls. Claude Code is a stand-in driven
//! by a *literal* model, attached as `paige claude` attaches it: it starts with
//! `kickoff_for_claude_code` as its first prompt, then takes whatever Paige offers
//! (`claim_delivery`); every prompt reaches Paige through its UserPromptSubmit hook, and it
//! acts only on what a prompt names (`paige_run_coaching_pipeline` → it plans).
//!
//! After each step, once Paige has had time to deliver (each delivery looks every
//! `PAIGE_DELIVERY_POLL_MS`, 20 ms here), the invariants:
//! - a live session without a plan and a running Claude Code: the plan came (Claude Code got
//!   the kickoff and planned) within 5 s;
//! - no Claude Code is typed the same delivery twice, nor the kickoff of one session twice;
//! - the live session is the one the learner last started and did not end: Claude Code or
//!   Paige restarting or exiting ends nothing, and no session the learner did not end is
//!   `completed`;
//! - the learner's prompts, and only theirs, are counted (Paige's typed words never are);
//! - every connected UI shows the session the server has;
//! - a phase the learner marks done in the panel reaches a running Claude Code.
//!
//! Cases per run: `PAIGE_LIFECYCLE_CASES` (default 12; CI sets more). Not covered here (said
//! so): the intake interview (its own state machine has its own tests: `intake_guard.rs`),
//! and the app's terminal (its paste path: `kickoff.rs`).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use paige_core::coaching::{PipelineInput, StartRequest};
use paige_core::db::{PhaseStatus, SessionStatus};
use paige_core::governance::{HookEvent, HookInput};
use paige_core::protocol::{ConnectionId, ServerMessage};
use paige_core::{Core, Event};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use proptest::prelude::*;
use serde_json::json;

const POLL: Duration = Duration::from_millis(20);
/// What the learner types into Claude Code: prompts the rules classify without a model.
const LEARNER_PROMPTS: [&str; 3] =
    ["Write the greeting function for me", "just do it", "give me the code for the greeting"];

#[derive(Debug, Clone)]
enum Op {
    /// A UI connects and says hello; with `true` the oldest one goes away (a reload).
    Ui(bool),
    /// The learner starts a session on work they type (ending any live one: it is wrapped up
    /// in the background).
    Start,
    /// `paige claude` starts Claude Code, or restarts it when one runs.
    ClaudeStart,
    ClaudeExit,
    /// `paige serve` stops and starts again on the same data.
    ServeRestart,
    LearnerPrompt(usize),
    /// The learner marks the current phase done in the panel.
    PhaseDonePanel,
    /// Claude Code marks it done with `paige_update_phase`.
    PhaseDoneTool,
    /// The learner ends the session in the panel.
    EndPanel,
    /// Claude Code ends it with `paige_end_session`.
    EndTool,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => any::<bool>().prop_map(Op::Ui),
        3 => Just(Op::Start),
        3 => Just(Op::ClaudeStart),
        1 => Just(Op::ClaudeExit),
        1 => Just(Op::ServeRestart),
        2 => (0..LEARNER_PROMPTS.len()).prop_map(Op::LearnerPrompt),
        2 => Just(Op::PhaseDonePanel),
        1 => Just(Op::PhaseDoneTool),
        1 => Just(Op::EndPanel),
        1 => Just(Op::EndTool),
    ]
}

/// A UI: its connection and what its frames say the live session is.
struct Ui {
    id: ConnectionId,
    events: tokio::sync::broadcast::Receiver<Event>,
    shows: Option<String>,
}

impl Ui {
    fn connect(core: &Arc<Core>) -> Ui {
        let events = core.subscribe();
        let id = core.connect();
        let hello = json!({"type": "connection:hello", "payload": {"version": "1", "platform": "linux", "windowSize": {"width": 800, "height": 600}}});
        core.handle_text(id, &hello.to_string());
        Ui { id, events, shows: None }
    }

    /// Reads the frames that came for this UI.
    fn catch_up(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            let message = match event {
                Event::UiTo { connection, message } if connection == self.id => message,
                Event::UiTo { .. } => continue,
                event => match event.into_ui_message() {
                    Some(message) => message,
                    None => continue,
                },
            };
            match message {
                ServerMessage::SessionStarted(started) => self.shows = Some(started.session_id),
                ServerMessage::SessionEnded(ended) if self.shows.as_ref() == Some(&ended.summary.session_id) => {
                    self.shows = None;
                }
                _ => {}
            }
        }
    }
}

/// The stand-in Claude Code of one start: every prompt it was given, with the session
/// live then.
struct ClaudeCode {
    hook_session: String,
    received: Vec<(Option<String>, String)>,
}

/// What the test expects, kept beside the real thing.
#[derive(Default)]
struct Model {
    live: Option<String>,
    /// Sessions the learner (or Claude Code, for them) ended.
    ended: BTreeSet<String>,
    started: Vec<String>,
    /// Learner prompts given while each session was live.
    learner_prompts: HashMap<String, u32>,
    /// Phase-done notes owed to the running Claude Code: (session, phase).
    notes_owed: Vec<(String, i64)>,
    claude_starts: u32,
}

struct World {
    core: Arc<Core>,
    project: tempfile::TempDir,
    data: tempfile::TempDir,
    fake_url: String,
    uis: Vec<Ui>,
    claude: Option<ClaudeCode>,
    model: Model,
}

fn open_core(project: &std::path::Path, data: &std::path::Path, fake_url: &str) -> Arc<Core> {
    let mut config = paige_core::Config::new(project.to_owned(), data.to_owned(), "sk-ant-test");
    config.anthropic_base_url = Some(fake_url.to_owned());
    config.limits.delivery_poll = POLL;
    let core = Arc::new(Core::open(config, super::clock()).expect("core"));
    // As `Instance::start` does.
    core.coaching().resume_after_restart();
    core
}

impl World {
    fn new(fake_url: &str) -> World {
        let project = tempfile::tempdir().expect("project");
        std::fs::create_dir_all(project.path().join("src")).expect("src");
        std::fs::write(project.path().join("src/main.rs"), "fn main() {}\n").expect("write");
        let data = tempfile::tempdir().expect("data");
        let core = open_core(project.path(), data.path(), fake_url);
        World {
            core,
            project,
            data,
            fake_url: fake_url.to_owned(),
            uis: Vec::new(),
            claude: None,
            model: Model::default(),
        }
    }

    /// A hook as Claude Code runs it; the context it adds to the model's request.
    fn hook(&self, event: HookEvent, input: &HookInput) -> String {
        let decision = self.core.handle_hook(event, input);
        self.core.after_hook(event, input);
        match decision {
            paige_core::governance::HookDecision::Context { context } => context,
            _ => String::new(),
        }
    }

    /// Claude Code is given `text` as a prompt: its UserPromptSubmit, then what a literal
    /// model does with the prompt and the context the hook added to it.
    async fn prompt_claude_code(&mut self, text: String) {
        let Some(claude) = &mut self.claude else { return };
        claude.received.push((self.model.live.clone(), text.clone()));
        let input =
            HookInput { session_id: claude.hook_session.clone(), prompt: Some(text.clone()), ..HookInput::default() };
        let context = self.hook(HookEvent::UserPromptSubmit, &input);
        if format!("{text}\n{context}").contains("Call paige_run_coaching_pipeline once") {
            let input = PipelineInput {
                plan_text: "1. Read main.rs\n2. Write the greeting".into(),
                issue_summary: "Greet the user".into(),
                issue_number: None,
            };
            self.core.coaching().run_coaching_pipeline(input).await.expect("the literal model's plan is coached");
        }
    }

    async fn step(&mut self, op: &Op) {
        match op {
            Op::Ui(reload) => {
                if *reload && !self.uis.is_empty() {
                    let gone = self.uis.remove(0);
                    self.core.disconnect(gone.id);
                }
                self.uis.push(Ui::connect(&self.core));
            }
            Op::Start => {
                let n = self.model.started.len() + 1;
                let request =
                    StartRequest { title: Some(format!("Greet the user, take {n}")), ..StartRequest::default() };
                let session = self.core.coaching().begin_coaching_session(request).expect("start").id;
                // Starting new work in the panel ends the live session (wrapped up in the
                // background): the learner's choice.
                if let Some(previous) = self.model.live.replace(session.clone()) {
                    self.model.ended.insert(previous);
                }
                self.model.started.push(session);
                self.model.notes_owed.clear();
            }
            Op::ClaudeStart => {
                if self.claude.is_some() {
                    self.claude_exit();
                }
                self.model.claude_starts += 1;
                let hook_session = format!("cc-{}", self.model.claude_starts);
                self.claude = Some(ClaudeCode { hook_session: hook_session.clone(), received: Vec::new() });
                self.model.notes_owed.clear();
                let input =
                    HookInput { session_id: hook_session, source: Some("startup".into()), ..HookInput::default() };
                self.hook(HookEvent::SessionStart, &input);
                if let Some(kickoff) = self.core.coaching().kickoff_for_claude_code() {
                    self.prompt_claude_code(kickoff).await;
                }
            }
            Op::ClaudeExit => self.claude_exit(),
            Op::ServeRestart => {
                self.core.shutdown().await.expect("shutdown");
                self.core = open_core(self.project.path(), self.data.path(), &self.fake_url);
                // Every open tab reconnects by itself.
                let count = self.uis.len();
                self.uis = (0..count).map(|_| Ui::connect(&self.core)).collect();
            }
            Op::LearnerPrompt(i) => {
                if self.claude.is_some() {
                    if let Some(live) = &self.model.live {
                        *self.model.learner_prompts.entry(live.clone()).or_default() += 1;
                    }
                    self.prompt_claude_code(LEARNER_PROMPTS[*i].to_owned()).await;
                }
            }
            Op::PhaseDonePanel | Op::PhaseDoneTool => {
                let Some(phase) = self.current_phase() else { return };
                if matches!(op, Op::PhaseDonePanel) {
                    self.core.coaching().learner_completes_phase(phase).expect("phase done");
                    if self.claude.is_some() {
                        let live = self.model.live.clone().expect("a phase means a session");
                        self.model.notes_owed.push((live, phase));
                    }
                } else {
                    self.core.coaching().update_phase(phase, PhaseStatus::Complete).expect("phase done");
                }
            }
            Op::EndPanel | Op::EndTool => {
                let Some(live) = self.model.live.take() else { return };
                self.model.ended.insert(live);
                self.model.notes_owed.clear();
                if matches!(op, Op::EndPanel) {
                    self.core.coaching().end_session_from_ui().expect("end");
                } else {
                    self.core.coaching().end_session_with_wrapup("").await.expect("end");
                }
            }
        }
    }

    fn claude_exit(&mut self) {
        if let Some(claude) = self.claude.take() {
            let input = HookInput {
                session_id: claude.hook_session,
                reason: Some("prompt_input_exit".into()),
                ..HookInput::default()
            };
            self.hook(HookEvent::SessionEnd, &input);
        }
        self.model.notes_owed.clear();
    }

    fn current_phase(&self) -> Option<i64> {
        let live = self.model.live.as_ref()?;
        let plans = self.core.db().plans_for_session(live).ok()?;
        let phases = self.core.db().phases_for_plan(&plans.last()?.id).ok()?;
        phases.iter().find(|p| p.status != PhaseStatus::Complete).map(|p| p.number)
    }

    fn has_plan(&self, session: &str) -> bool {
        self.core.db().plans_for_session(session).is_ok_and(|plans| !plans.is_empty())
    }

    fn learner_counted(&self, session: &str) -> u32 {
        self.core.db().reliance_counts(session).map(|c| c.iter().sum()).unwrap_or(0)
    }

    /// Whether every wait of the invariants is over.
    fn settled(&self) -> bool {
        let planned = match (&self.model.live, &self.claude) {
            (Some(live), Some(_)) => self.has_plan(live),
            _ => true,
        };
        let counted = self.model.learner_prompts.iter().all(|(s, n)| self.learner_counted(s) == *n);
        let noted = self.model.notes_owed.iter().all(|(_, phase)| self.note_received(*phase));
        planned && counted && noted
    }

    fn note_received(&self, phase: i64) -> bool {
        let marker = format!("marked phase {phase} done");
        self.claude.as_ref().is_some_and(|c| c.received.iter().any(|(_, r)| r.contains(&marker)))
    }

    /// Lets Paige deliver: the running Claude Code takes each offer as `paige claude` does,
    /// until the invariants' waits are over (at most 5 s) and a few polls passed quietly.
    async fn settle(&mut self) {
        let started = Instant::now();
        let mut quiet_since = Instant::now();
        loop {
            let offered = if self.claude.is_some() { self.core.coaching().claim_delivery() } else { None };
            if let Some((_, text)) = offered {
                self.prompt_claude_code(text).await;
                quiet_since = Instant::now();
            } else if (self.settled() && quiet_since.elapsed() > POLL * 8) || started.elapsed() > Duration::from_secs(5)
            {
                break;
            }
            tokio::time::sleep(POLL / 2).await;
        }
        for ui in &mut self.uis {
            ui.catch_up();
        }
    }

    fn check(&self, history: &[Op]) {
        let core = &self.core;
        let live = core.active_session().map(|s| s.id);
        assert_eq!(live, self.model.live, "the live session is the one last started and not ended, after {history:?}");
        if let (Some(live), Some(_)) = (&live, &self.claude) {
            assert!(
                self.has_plan(live),
                "a running Claude Code got the kickoff and planned within 5 s, after {history:?}"
            );
        }
        if let Some(claude) = &self.claude {
            let mut seen = BTreeSet::new();
            for (session, text) in &claude.received {
                let paiges = !LEARNER_PROMPTS.contains(&text.as_str());
                assert!(
                    !paiges || seen.insert((session, text)),
                    "Claude Code was typed this twice in one session: {text:?}, after {history:?}"
                );
            }
        }
        for session in &self.model.started {
            let status = core.db().session(session).expect("session").status;
            assert!(
                status != SessionStatus::Completed || self.model.ended.contains(session),
                "session {session} was wrapped up as completed though nobody ended it, after {history:?}"
            );
            let learner = self.model.learner_prompts.get(session).copied().unwrap_or(0);
            assert_eq!(
                self.learner_counted(session),
                learner,
                "only the learner's prompts count as theirs (Paige's typed words never do), after {history:?}"
            );
        }
        for ui in &self.uis {
            assert_eq!(ui.shows, live, "UI {:?} shows the session the server has, after {history:?}", ui.id);
        }
        for (session, phase) in &self.model.notes_owed {
            assert!(
                self.note_received(*phase),
                "phase {phase} of {session}, marked done in the panel, reached the running Claude Code, after {history:?}"
            );
        }
    }
}

/// The coach agent's answer: two phases in `src/main.rs`.
fn coach_plan() -> serde_json::Value {
    let phase = |number: i64, title: &str| {
        json!({
            "number": number,
            "title": title,
            "description": format!("{title} in main.rs."),
            "expected_files": ["src/main.rs"],
            "hint_level": "file",
            "hints": {"file_hints": [{"path": "src/main.rs", "style": "suggested"}], "line_hints": []},
            "knowledge_gap_opportunities": []
        })
    };
    json!({
        "phases": [phase(1, "Read main"), phase(2, "Write the greeting")],
        "memory_connection": null,
        "estimated_difficulty": "beginner"
    })
}

async fn run_case(ops: Vec<Op>, fake_url: String) {
    let mut world = World::new(&fake_url);
    let mut history = Vec::new();
    for op in ops {
        world.step(&op).await;
        history.push(op);
        world.settle().await;
        world.check(&history);
    }
    world.core.shutdown().await.expect("shutdown");
}

#[test]
fn any_order_of_starts_restarts_prompts_phases_and_ends_keeps_the_session_whole() {
    let cases = std::env::var("PAIGE_LIFECYCLE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let fake = runtime.block_on(FakeAnthropic::start()).expect("fake");
    fake.always(Matcher::call_type("coach_agent"), Reply::json(&coach_plan()));
    let url = fake.base_url();
    let config = ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let result = runner.run(&proptest::collection::vec(op(), 4..14), |ops| {
        runtime.block_on(run_case(ops, url.clone()));
        Ok(())
    });
    if let Err(err) = result {
        panic!("{err}");
    }
    eprintln!("lifecycle: {cases} cases of 4–13 steps held every invariant");
}

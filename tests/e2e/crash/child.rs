//! The child: Paige opened on the DATA_DIR as a start would, then a write-heavy workload
//! until the parent kills it, printing `ack …` after each write Paige acknowledged.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use paige_core::db::{KataAttempt, NewKataSpec, NewKnowledgeGap, Severity};
use paige_core::governance::intents::Orchestration;
use paige_core::governance::ledger::{self, TraceEntry, TraceKind};
use paige_core::governance::{HookDecision, HookEvent, HookInput, SELECT_TOOL};
use paige_core::intake::guard::{GuardConfig, GuardEvent};
use paige_core::memory::{Importance, MemoryInput, Origin};
use paige_core::protocol::{
    BufferUpdate, ClientMessage, ConnectionId, CursorPosition, FileSave, ServerMessage, TabSwitch,
};
use paige_core::{Config, Core, Event, SystemClock};
use serde_json::json;

use super::{AGENT, CHILD_DEADLINE, INTENT, SAVED};

/// Opens Paige on the DATA_DIR as a start would, then writes until it is killed, printing
/// `ack …` after each write Paige acknowledged. Never returns.
pub(super) fn run(run: usize, data: PathBuf, project: PathBuf) -> ! {
    // The harness printed `test <name> ... ` without a newline: end that line first.
    say("");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("rt");
    let _entered = runtime.enter();
    let mut config = Config::new(project, data, "");
    config.model_dir = std::env::var_os("PAIGE_MODEL_DIR").map(PathBuf::from);
    let memory = paige_memory::open(&config, &[]);
    let core = Arc::new(Core::open(config, Arc::new(SystemClock)).expect("paige opens").with_memory(memory));
    let tokens = paige_core::token::Tokens {
        ui: format!("crash-{run}").into(),
        agent: format!("crash-agent-{run}").into(),
        local: format!("crash-local-{run}").into(),
    };
    core.announce(0, &tokens).expect("announce");
    // Loading the embedding model takes most of a second: it loads beside the workload,
    // which adds memories once it is in (as the first add would wait for it).
    let warm = Arc::new(AtomicBool::new(false));
    let (memory, warmed) = (core.memory().clone(), warm.clone());
    std::thread::spawn(move || {
        memory.query_memories("warm up", Some(1), None);
        warmed.store(true, Ordering::SeqCst);
    });
    let mut w = Workload::start(core, run);
    say("ready");
    let deadline = Instant::now() + CHILD_DEADLINE;
    for i in 0.. {
        if Instant::now() > deadline {
            eprintln!("the child was not killed within {CHILD_DEADLINE:?}");
            std::process::exit(3);
        }
        match i % 8 {
            0 => w.tab_switch(i),
            1 => w.buffer_update(i),
            2 => w.save(i),
            3 => w.governed_write(i),
            4 => w.denied_write(i),
            5 => w.kata_attempt(i),
            6 if warm.load(Ordering::SeqCst) => w.memory_add(i),
            _ => w.intake_event(i),
        }
        w.ack_logged_actions();
    }
    unreachable!("the workload loops until killed")
}

/// One line on stdout, flushed: the parent reads it even if the kill comes next.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).expect("stdout");
}

struct Workload {
    core: Arc<Core>,
    run: usize,
    events: tokio::sync::broadcast::Receiver<Event>,
    ui: ConnectionId,
    session: String,
    agent: String,
    kata: String,
}

impl Workload {
    /// A coaching session, a kata, an intake interview and a governed agent session
    /// bound to the intent: what the writes below go to.
    fn start(core: Arc<Core>, run: usize) -> Workload {
        let events = core.subscribe();
        let session = core.coaching().start_session(None, Some(format!("crash run {run}"))).expect("session").id;
        let ui = core.connect();
        let db = core.db();
        let gap = db
            .create_knowledge_gap(NewKnowledgeGap {
                session_id: session.clone(),
                topic: "error handling".into(),
                severity: Severity::Medium,
                evidence: "unwraps".into(),
                related_concepts: vec![],
            })
            .expect("gap");
        let kata = NewKataSpec {
            knowledge_gap_id: gap.id,
            title: format!("kata {run}"),
            description: "handle errors".into(),
            scaffolding_code: "fn main() {}".into(),
            instructor_notes: String::new(),
            constraints: vec![],
        };
        let kata = db.create_kata(kata).expect("kata").id;
        let config = serde_json::to_value(GuardConfig::default()).expect("guard config");
        db.create_intake(&session, &config, "Now write the parser.").expect("intake");
        let w = Workload { core, run, events, ui, session, agent: AGENT.into(), kata };
        w.hook(HookEvent::UserPromptSubmit, None, 0);
        let select = (SELECT_TOOL, json!({"intent_id": INTENT}));
        assert_eq!(w.hook(HookEvent::PreToolUse, Some(select.clone()), 0), HookDecision::None, "select");
        w.core.select_active_intent(INTENT).expect("selectable");
        w.hook(HookEvent::PostToolUse, Some(select), 0);
        w
    }

    fn hook(&self, event: HookEvent, tool: Option<(&str, serde_json::Value)>, i: u64) -> HookDecision {
        let (tool_name, tool_input) = tool.map_or((None, None), |(name, input)| (Some(name.to_owned()), Some(input)));
        // Claude Code writes each call to its transcript beside running the hook.
        let transcript = self.core.config().data_dir.join(format!("transcript-{}.jsonl", self.run));
        let id = format!("toolu_{}_{i}", self.run);
        if event == HookEvent::PreToolUse {
            crate::hook::record_call(&json!({"transcript_path": transcript, "tool_use_id": id,
                "tool_name": tool_name, "tool_input": tool_input}));
        }
        let input = HookInput {
            session_id: self.agent.clone(),
            transcript_path: Some(transcript),
            cwd: Some(self.core.project_root().path().to_owned()),
            hook_event_name: Some(event.name().into()),
            tool_name,
            tool_input,
            tool_use_id: Some(id),
            ..HookInput::default()
        };
        self.core.handle_hook(event, &input)
    }

    fn send(&self, message: ClientMessage) {
        if let Some(reply) = self.core.handle_message(self.ui, message) {
            panic!("the UI frame was refused: {reply:?}");
        }
    }

    fn tab_switch(&mut self, i: u64) {
        self.send(ClientMessage::EditorTabSwitch(TabSwitch { from_path: None, to_path: format!("tab{i}.rs") }));
    }

    /// Sizes alternate, so every update is significant and logged.
    fn buffer_update(&mut self, i: u64) {
        let content = "x".repeat(if i % 16 == 1 { 100 } else { 2000 });
        let cursor = CursorPosition { line: 1, column: 1 };
        let update = BufferUpdate { path: SAVED[0].into(), content, cursor_position: cursor, selections: vec![] };
        self.send(ClientMessage::BufferUpdate(update));
    }

    fn save(&mut self, i: u64) {
        let path = SAVED[(i / 8) as usize % SAVED.len()];
        let content = format!("run {} save {i}\n{}", self.run, "line of the learner's work\n".repeat(400));
        let hash = ledger::sha256_hex(content.as_bytes());
        say(&format!("try save {path} {hash}"));
        self.send(ClientMessage::FileSave(FileSave { path: path.into(), content }));
        let acked = self
            .drain()
            .into_iter()
            .any(|event| matches!(event, Event::Ui(ServerMessage::FsSaveAck(ack)) if ack.path == path && ack.success));
        assert!(acked, "no fs:save_ack for {path}");
        say(&format!("ack save {path} {hash}"));
    }

    /// Claude Code's Write inside the intent's scope: PreToolUse, the file written,
    /// PostToolUse; the ledger's last line is its mutation.
    fn governed_write(&mut self, i: u64) {
        // A few files, rewritten: an intent's scope may cover only so many.
        let rel = format!("src/weather/w{}.rs", i / 8 % 6);
        let content = format!("pub fn forecast() -> u32 {{ {} }}\n", self.run as u64 * 1_000_000 + i);
        let path = self.core.project_root().path().join(&rel);
        let file_path = path.display().to_string();
        let write = ("Write", json!({"file_path": file_path, "content": content}));
        let mut decision = self.hook(HookEvent::PreToolUse, Some(write.clone()), i);
        if matches!(&decision, HookDecision::Deny { reason } if reason.starts_with("Stale File")) {
            // Killed between the agent's write and its PostToolUse: the agent reads the
            // file again, as the denial tells it to.
            let read = ("Read", json!({"file_path": file_path}));
            self.hook(HookEvent::PreToolUse, Some(read.clone()), i);
            self.hook(HookEvent::PostToolUse, Some(read), i);
            decision = self.hook(HookEvent::PreToolUse, Some(write.clone()), i);
        }
        assert_eq!(decision, HookDecision::None, "{rel}");
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, &content).expect("the agent's write");
        self.hook(HookEvent::PostToolUse, Some(write), i);
        let entry = self.last_trace();
        assert!(
            entry.kind == TraceKind::Mutation
                && entry.file.as_deref() == Some(rel.as_str())
                && entry.file_hash.as_deref() == Some(ledger::sha256_hex(content.as_bytes()).as_str()),
            "the ledger's last line is not the write of {rel}: {entry:?}"
        );
        say(&format!("ack ledger {}", entry.hash.expect("hash")));
    }

    /// A Write outside the scope: denied, and the denial ledgered.
    fn denied_write(&mut self, i: u64) {
        let path = self.core.project_root().path().join(format!("src/other/r{}_{i}.rs", self.run));
        let write = ("Write", json!({"file_path": path.display().to_string(), "content": "x"}));
        match self.hook(HookEvent::PreToolUse, Some(write), i) {
            HookDecision::Deny { reason } if reason.starts_with("Scope Violation") => {}
            other => panic!("an out-of-scope write was not denied as such: {other:?}"),
        }
        let entry = self.last_trace();
        assert_eq!(entry.kind, TraceKind::Denial, "{entry:?}");
        say(&format!("ack ledger {}", entry.hash.expect("hash")));
    }

    fn kata_attempt(&mut self, i: u64) {
        let code = format!("crash-{}-{i}", self.run);
        let attempt = KataAttempt { code: code.clone(), level: Some(3), passed: Some(false), ..Default::default() };
        self.core.db().record_kata_attempt(&self.kata, &attempt).expect("attempt recorded");
        say(&format!("ack kata {code}"));
    }

    fn memory_add(&mut self, i: u64) {
        let origin = format!("crash-{}-{i}", self.run);
        let memory = MemoryInput {
            content: format!("the learner handled errors with ? in run {} step {i}", self.run),
            tags: vec!["errors".into()],
            importance: Importance::Medium,
        };
        let project = self.core.project_name();
        let added =
            self.core.memory().add_memories(&[memory], &Origin::Session(origin.clone()), &project, self.core.now());
        assert_eq!(added.added, 1, "memory add");
        say(&format!("ack memory mem_{origin}_0"));
    }

    fn intake_event(&mut self, i: u64) {
        let event = match i % 16 {
            7 => GuardEvent::TypingStarted,
            _ => GuardEvent::AnswerSubmitted { turn: i as u32, answer: format!("answer {i}") },
        };
        let at = self.core.now().timestamp_millis();
        let stored = serde_json::to_value(&event).expect("event");
        let seq = self.core.db().append_intake_event(&self.session, at, &stored).expect("intake event stored");
        say(&format!("ack intake {} {seq}", self.session));
    }

    /// Acknowledges the action rows Paige logged (and announced) since the last call.
    fn ack_logged_actions(&mut self) {
        self.drain();
    }

    /// The events pushed since the last call; logged actions are acknowledged on the way.
    fn drain(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            match self.events.try_recv() {
                Ok(Event::ActionLogged(entry)) => say(&format!("ack action {}", entry.id)),
                Ok(event) => events.push(event),
                Err(tokio::sync::broadcast::error::TryRecvError::Empty) => return events,
                Err(err) => panic!("the event bus: {err}"),
            }
        }
    }

    /// The ledger's last line, read from the end of the file.
    fn last_trace(&self) -> TraceEntry {
        let path = Orchestration::new(self.core.project_root().path()).trace_path();
        let mut file = std::fs::File::open(&path).expect("ledger");
        let len = file.seek(SeekFrom::End(0)).expect("seek");
        file.seek(SeekFrom::Start(len.saturating_sub(16 * 1024))).expect("seek");
        let mut tail = String::new();
        file.read_to_string(&mut tail).expect("read the ledger");
        let last = tail.lines().last().expect("a ledger line");
        serde_json::from_str(last).unwrap_or_else(|err| panic!("the ledger's last line {last:?}: {err}"))
    }
}

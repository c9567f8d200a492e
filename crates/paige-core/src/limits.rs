//! Caps on what Paige holds in memory and on how long a connection may sit idle, so no
//! client, file or agent can make it exhaust memory or file handles. Each is configurable
//! through its environment variable; every refusal names the cap it hit.

use std::collections::HashMap;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// `PAIGE_MAX_FILE_BYTES`: the largest file Paige reads (UI and MCP alike).
    pub max_file_bytes: u64,
    /// `PAIGE_MAX_BUFFER_BYTES`: the largest unsaved buffer the editor may send.
    pub max_buffer_bytes: usize,
    /// `PAIGE_MAX_BUFFERS_BYTES`: all buffers together; clean ones are evicted first.
    pub max_buffers_bytes: usize,
    /// `PAIGE_MAX_DIFF_BYTES`: one file's diff; longer ones are cut with a marker.
    pub max_diff_bytes: usize,
    /// `PAIGE_MAX_HOOK_CONTEXT_BYTES`: context a hook hands Claude Code; cut with a marker.
    pub max_hook_context_bytes: usize,
    /// `PAIGE_MAX_WS_FRAME_BYTES`: one `/ws` message; a bigger one closes the socket.
    pub max_ws_frame_bytes: usize,
    /// `PAIGE_MAX_CONNECTIONS`: open TCP connections per listener (at least 256).
    pub max_connections: usize,
    /// `PAIGE_HEADER_READ_TIMEOUT_MS`: from a request's first byte to the end of its head.
    pub header_read_timeout: Duration,
    /// `PAIGE_IDLE_TIMEOUT_MS`: a connection with no request in flight is closed after this
    /// (WebSockets and MCP streams are exempt: they live long by design).
    pub idle_timeout: Duration,
    /// `PAIGE_MAX_VERSION_STORE_BYTES`: the versions of learner files the change detector
    /// keeps in `DATA_DIR/versions/` (oldest out first; never a file's latest version).
    pub max_version_store_bytes: u64,
    /// `PAIGE_SESSION_ABANDON_AFTER_MS`: a session left `active` (a crash, a closed window)
    /// stays resumable until it has been idle this long; then it is marked `abandoned`.
    pub session_abandon_after: Duration,
    /// `PAIGE_STEP_CHECK_TIMEOUT_MS`: how long a phase's step check (the project's tests) may
    /// run before Paige stops it and says so.
    pub step_check_timeout: Duration,
    /// `PAIGE_GH_TIMEOUT_MS`: how long the dashboard's `gh issue list` may take before Paige
    /// stops it and says GitHub did not answer; the coaching panel's calls wait no longer.
    pub gh_timeout: Duration,
    /// `PAIGE_DELIVERY_POLL_MS`: how often a delivery waiting for Claude Code (the kickoff, a
    /// phase-done note) looks at its terminal again; it first waits two of these, for an
    /// interview that starts with the session.
    pub delivery_poll: Duration,
    /// `PAIGE_EMBEDDER_IDLE_MS`: the embedding model's ~90 MB of weights are released after
    /// this long without an embed (reloaded on the next one).
    pub embedder_idle: Duration,
    /// `PAIGE_OBSERVER_*`: the Observer's thresholds (cooldown, flow state, idle, …).
    pub observer: ObserverSettings,
    /// `PAIGE_INTAKE_TIMEBOX_MS`, `PAIGE_INTAKE_TYPING_QUIET_MS`, `PAIGE_INTAKE_CONTROL_WAIT_MS`:
    /// the intake interview's timebox (4:00), when a quiet typist has finished (20 s), and how
    /// long the next question waits for the last answer's score (2 s).
    pub intake_timebox: Duration,
    pub intake_typing_quiet: Duration,
    pub intake_control_wait: Duration,
    /// `PAIGE_MODEL_*_TIMEOUT_MS`: how long one model call may take, retries included.
    pub model_deadlines: ModelDeadlines,
}

/// The fewest connections a listener may be limited to: the load test runs 110 clients.
pub const MIN_CONNECTIONS: usize = 256;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: crate::files::DEFAULT_MAX_FILE_BYTES,
            max_buffer_bytes: 10 << 20,
            max_buffers_bytes: 64 << 20,
            max_diff_bytes: 1 << 20,
            max_hook_context_bytes: 64 << 10,
            max_ws_frame_bytes: 16 << 20,
            max_connections: 512,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_version_store_bytes: 512 << 20,
            session_abandon_after: Duration::from_secs(7 * 24 * 3600),
            step_check_timeout: Duration::from_secs(60),
            gh_timeout: Duration::from_secs(20),
            delivery_poll: Duration::from_millis(500),
            embedder_idle: Duration::from_secs(5 * 60),
            observer: Default::default(),
            intake_timebox: Duration::from_secs(240),
            intake_typing_quiet: Duration::from_secs(20),
            intake_control_wait: Duration::from_secs(2),
            model_deadlines: Default::default(),
        }
    }
}

/// A limit variable set to something that is not a whole number of at least `min`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var} must be a whole number of at least {min}, got {value:?}")]
pub struct InvalidLimit {
    pub var: &'static str,
    pub value: String,
    pub min: u64,
}

impl Limits {
    /// The defaults, with each variable that is set in `env` applied.
    pub fn from_env(env: &HashMap<String, String>) -> Result<Limits, InvalidLimit> {
        let mut limits = Limits::default();
        let number = |name: &'static str, min: u64| -> Result<Option<u64>, InvalidLimit> {
            let Some(raw) = env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty()) else { return Ok(None) };
            match raw.parse::<u64>() {
                Ok(n) if n >= min => Ok(Some(n)),
                _ => Err(InvalidLimit { var: name, value: raw.to_owned(), min }),
            }
        };
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        if let Some(n) = number("PAIGE_MAX_FILE_BYTES", 1)? {
            limits.max_file_bytes = n;
        }
        if let Some(n) = number("PAIGE_MAX_BUFFER_BYTES", 1)? {
            limits.max_buffer_bytes = size(n);
        }
        if let Some(n) = number("PAIGE_MAX_BUFFERS_BYTES", 1)? {
            limits.max_buffers_bytes = size(n);
        }
        if let Some(n) = number("PAIGE_MAX_DIFF_BYTES", 1024)? {
            limits.max_diff_bytes = size(n);
        }
        if let Some(n) = number("PAIGE_MAX_HOOK_CONTEXT_BYTES", 1024)? {
            limits.max_hook_context_bytes = size(n);
        }
        if let Some(n) = number("PAIGE_MAX_WS_FRAME_BYTES", 64 << 10)? {
            limits.max_ws_frame_bytes = size(n);
        }
        if let Some(n) = number("PAIGE_MAX_CONNECTIONS", MIN_CONNECTIONS as u64)? {
            limits.max_connections = size(n);
        }
        if let Some(n) = number("PAIGE_HEADER_READ_TIMEOUT_MS", 100)? {
            limits.header_read_timeout = Duration::from_millis(n);
        }
        if let Some(n) = number("PAIGE_IDLE_TIMEOUT_MS", 100)? {
            limits.idle_timeout = Duration::from_millis(n);
        }
        if let Some(n) = number("PAIGE_MAX_VERSION_STORE_BYTES", 1 << 20)? {
            limits.max_version_store_bytes = n;
        }
        if let Some(n) = number("PAIGE_SESSION_ABANDON_AFTER_MS", 1000)? {
            limits.session_abandon_after = Duration::from_millis(n);
        }
        if let Some(n) = number("PAIGE_STEP_CHECK_TIMEOUT_MS", 100)? {
            limits.step_check_timeout = Duration::from_millis(n);
        }
        if let Some(n) = number("PAIGE_GH_TIMEOUT_MS", 100)? {
            limits.gh_timeout = Duration::from_millis(n);
        }
        if let Some(n) = number("PAIGE_DELIVERY_POLL_MS", 10)? {
            limits.delivery_poll = Duration::from_millis(n);
        }
        if let Some(n) = number("PAIGE_EMBEDDER_IDLE_MS", 100)? {
            limits.embedder_idle = Duration::from_millis(n);
        }
        for (var, field) in [
            ("PAIGE_INTAKE_TIMEBOX_MS", &mut limits.intake_timebox),
            ("PAIGE_INTAKE_TYPING_QUIET_MS", &mut limits.intake_typing_quiet),
            ("PAIGE_INTAKE_CONTROL_WAIT_MS", &mut limits.intake_control_wait),
        ] {
            if let Some(n) = number(var, 100)? {
                *field = Duration::from_millis(n);
            }
        }
        for (var, field) in limits.model_deadlines.fields() {
            if let Some(n) = number(var, 10)? {
                *field = Duration::from_millis(n);
            }
        }
        let o = &mut limits.observer;
        for (var, field) in [
            ("PAIGE_OBSERVER_COOLDOWN_MS", &mut o.cooldown),
            ("PAIGE_OBSERVER_FLOW_WINDOW_MS", &mut o.flow_window),
            ("PAIGE_OBSERVER_IDLE_MS", &mut o.idle_after),
            ("PAIGE_OBSERVER_IDLE_CHECK_MS", &mut o.idle_check),
            ("PAIGE_OBSERVER_IDLE_REPEAT_MAX_MS", &mut o.idle_repeat_max),
            ("PAIGE_OBSERVER_STALE_MS", &mut o.stale_after),
            ("PAIGE_OBSERVER_QUIET_MS", &mut o.quiet_output),
        ] {
            if let Some(n) = number(var, 10)? {
                *field = Duration::from_millis(n);
            }
        }
        if let Some(n) = number("PAIGE_OBSERVER_FLOW_ACTIONS", 1)? {
            o.flow_actions = size(n);
        }
        if let Some(n) = number("PAIGE_OBSERVER_BUFFER_UPDATES", 1)? {
            o.buffer_updates = u32::try_from(n).unwrap_or(u32::MAX);
        }
        if let Some(n) = number("PAIGE_OBSERVER_MIN_CONFIDENCE_PCT", 1)? {
            o.min_confidence_pct = u8::try_from(n.min(100)).unwrap_or(100);
        }
        Ok(limits)
    }
}

/// Caps glibc's malloc at two arenas for this process. glibc gives each thread that allocates
/// under contention an arena of its own (up to eight per core) and keeps what is freed there:
/// under a steady load `paige serve`'s RSS crept up by about 7 % a minute (the soak: 87 → 97 MB
/// in 150 s, while heaptrack showed the live heap flat at 26 MB); with two arenas it stays flat
/// (77 MB, +1.5 % in 120 s) at the same throughput. Call first thing in `main`, before any
/// thread starts; `MALLOC_ARENA_MAX` in the environment, when set, wins.
pub fn cap_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt(3) only sets a tunable; called before other threads allocate.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

/// Hands the pages malloc holds free back to the OS (`malloc_trim(3)`, which on glibc also
/// releases free pages inside the heap, not only at its top). Returns whether any were
/// released. The server calls it every [`RELEASE_FREE_MEMORY_EVERY`].
pub fn release_free_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim(3) takes malloc's own locks; it is safe from any thread.
        unsafe { libc::malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// How often the server hands free pages back ([`release_free_memory`]).
pub const RELEASE_FREE_MEMORY_EVERY: Duration = Duration::from_secs(10);

/// Cuts `text` to at most `max` bytes (on a character boundary), ending it with a marker
/// that says what was cut; unchanged when it fits.
pub fn truncate_with_marker(text: &mut String, max: usize, what: &str) {
    if text.len() <= max {
        return;
    }
    let marker = format!("\n[… {what} cut at {max} bytes; {} bytes left out]\n", text.len());
    let mut keep = max.saturating_sub(marker.len());
    while !text.is_char_boundary(keep) {
        keep -= 1;
    }
    text.truncate(keep);
    text.push_str(&marker);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_characters_whole_and_says_what_was_cut() {
        let mut text = "é".repeat(1000);
        truncate_with_marker(&mut text, 200, "diff");
        assert!(text.len() <= 200, "{}", text.len());
        assert!(text.contains("diff cut at 200 bytes; 2000 bytes left out"), "{text}");
        let mut short = "fits".to_owned();
        truncate_with_marker(&mut short, 200, "diff");
        assert_eq!(short, "fits");
    }

    #[test]
    fn limits_come_from_the_environment_and_refuse_values_below_their_minimum() {
        let env: HashMap<String, String> = [("PAIGE_MAX_FILE_BYTES", "2048"), ("PAIGE_IDLE_TIMEOUT_MS", "1500")]
            .map(|(k, v)| (k.into(), v.into()))
            .into();
        let limits = Limits::from_env(&env).expect("limits");
        assert_eq!(limits.max_file_bytes, 2048);
        assert_eq!(limits.idle_timeout, Duration::from_millis(1500));
        assert_eq!(limits.max_connections, Limits::default().max_connections);
        let env: HashMap<String, String> = [("PAIGE_MAX_CONNECTIONS".into(), "10".into())].into();
        let err = Limits::from_env(&env).expect_err("too few connections");
        assert!(err.to_string().contains("PAIGE_MAX_CONNECTIONS"), "{err}");
        let env: HashMap<String, String> = [("PAIGE_MAX_FILE_BYTES".into(), "ten".into())].into();
        assert!(Limits::from_env(&env).is_err());
    }

    #[test]
    fn each_kind_of_model_call_has_a_deadline_from_the_environment() {
        let env: HashMap<String, String> = [
            ("PAIGE_MODEL_TRIAGE_TIMEOUT_MS".into(), "1500".into()),
            ("PAIGE_MODEL_MATERIALS_TIMEOUT_MS".into(), "90000".into()),
        ]
        .into();
        let deadlines = Limits::from_env(&env).expect("limits").model_deadlines;
        assert_eq!(deadlines.for_call("observer_triage").0, Duration::from_millis(1500));
        assert_eq!(deadlines.for_call("learning_materials").0, Duration::from_secs(90));
        assert_eq!(deadlines.for_call("explain_this").0, Duration::from_secs(90), "unset: the default");
        let env: HashMap<String, String> = [("PAIGE_MODEL_COACH_TIMEOUT_MS".into(), "soon".into())].into();
        let err = Limits::from_env(&env).expect_err("not a number");
        assert!(err.to_string().contains("PAIGE_MODEL_COACH_TIMEOUT_MS"), "{err}");
    }

    #[test]
    fn the_observers_idle_back_off_cap_comes_from_the_environment() {
        assert_eq!(Limits::default().observer.idle_repeat_max, Duration::from_secs(40 * 60));
        let env: HashMap<String, String> = [("PAIGE_OBSERVER_IDLE_REPEAT_MAX_MS".into(), "600000".into())].into();
        assert_eq!(Limits::from_env(&env).expect("limits").observer.idle_repeat_max, Duration::from_secs(600));
    }
}

/// The Observer's thresholds (`PAIGE_OBSERVER_*`); the spec's values by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObserverSettings {
    /// No nudge within this long of the last one (120 s).
    pub cooldown: Duration,
    /// More than `flow_actions` learner actions within `flow_window` is flow: leave them be.
    pub flow_window: Duration,
    pub flow_actions: usize,
    /// Every this many buffer updates is a trigger (5).
    pub buffer_updates: u32,
    /// No learner action for this long is idle (5 min), checked every `idle_check` (30 s).
    pub idle_after: Duration,
    pub idle_check: Duration,
    /// While the learner stays idle the Observer looks again on a back-off: at `idle_after`
    /// of idle time, then each gap doubles (5, 10, 20, 40 min) until it reaches this cap,
    /// then every cap (80, 120, … min). Activity ends the spell and resets it (40 min).
    pub idle_repeat_max: Duration,
    /// A nudge needs at least this confidence, in hundredths (70).
    pub min_confidence_pct: u8,
    /// A nudge not typed into Claude Code within this long is stale (60 s).
    pub stale_after: Duration,
    /// The terminal must have been quiet this long before a nudge is typed (2 s).
    pub quiet_output: Duration,
}

impl Default for ObserverSettings {
    fn default() -> Self {
        ObserverSettings {
            cooldown: Duration::from_secs(120),
            flow_window: Duration::from_secs(60),
            flow_actions: 10,
            buffer_updates: 5,
            idle_after: Duration::from_secs(300),
            idle_check: Duration::from_secs(30),
            idle_repeat_max: Duration::from_secs(40 * 60),
            min_confidence_pct: 70,
            stale_after: Duration::from_secs(60),
            quiet_output: Duration::from_secs(2),
        }
    }
}

/// One deadline per kind of model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelDeadlines {
    /// `PAIGE_MODEL_TRIAGE_TIMEOUT_MS`: the Haiku calls others wait on — the Observer's
    /// triage, the pipeline's memory filter, the interview's CONTROL score (30 s).
    pub triage: Duration,
    /// `PAIGE_MODEL_COACH_TIMEOUT_MS`: the coach agent, "just show me", the wrap-up (180 s).
    pub coach: Duration,
    /// `PAIGE_MODEL_EXPLAIN_TIMEOUT_MS`: Explain This (90 s).
    pub explain: Duration,
    /// `PAIGE_MODEL_REVIEW_TIMEOUT_MS`: a practice solution's review (120 s).
    pub review: Duration,
    /// `PAIGE_MODEL_DASHBOARD_TIMEOUT_MS`: the dashboard's issue assessment (120 s).
    pub dashboard: Duration,
    /// `PAIGE_MODEL_MATERIALS_TIMEOUT_MS`: learning materials, web searches included (240 s).
    pub materials: Duration,
    /// `PAIGE_MODEL_INTERVIEW_TIMEOUT_MS`: one streamed interview question (60 s).
    pub interview: Duration,
}

impl Default for ModelDeadlines {
    fn default() -> Self {
        ModelDeadlines {
            triage: Duration::from_secs(30),
            coach: Duration::from_secs(180),
            explain: Duration::from_secs(90),
            review: Duration::from_secs(120),
            dashboard: Duration::from_secs(120),
            materials: Duration::from_secs(240),
            interview: Duration::from_secs(60),
        }
    }
}

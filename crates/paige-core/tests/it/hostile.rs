//! Hostile input against the file layer and the core's memory caps: symlink races, special
//! files, huge files and buffers, private data files, a crashed run's leftovers.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use paige_core::governance::{HookDecision, HookEvent, HookInput};
use paige_core::{Config, Core, Limits, ProjectError};
use serde_json::{Value, json};

use crate::clock;

const CONN: paige_core::protocol::ConnectionId = paige_core::protocol::ConnectionId(1);

/// A core over `project` with its own data dir and `limits`.
fn core_with(project: &Path, limits: Limits) -> (Arc<Core>, tempfile::TempDir) {
    let data = tempfile::tempdir().expect("data");
    let config = Config { limits, ..Config::new(project.to_owned(), data.path().to_owned(), "test") };
    (Arc::new(Core::open(config, clock()).expect("core")), data)
}

fn frame(core: &std::sync::Arc<Core>, kind: &str, payload: Value) -> Option<Value> {
    let text = json!({"type": kind, "payload": payload}).to_string();
    core.handle_text(CONN, &text).map(|reply| serde_json::from_str(&reply).expect("reply is JSON"))
}

/// Runs `work` on its own thread and fails the test if it has not finished within 5 s: a
/// blocking open would otherwise hang the whole suite.
fn within_5s<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    rx.recv_timeout(Duration::from_secs(5)).unwrap_or_else(|_| panic!("{what} blocked for more than 5 s"))
}

/// Swaps `a` and `b` atomically (renameat2 RENAME_EXCHANGE) as fast as it can until stopped.
fn swapper(a: std::path::PathBuf, b: std::path::PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            let cwd = rustix::fs::CWD;
            rustix::fs::renameat_with(cwd, &a, cwd, &b, rustix::fs::RenameFlags::EXCHANGE).expect("exchange");
            swaps += 1;
        }
        swaps
    })
}

#[test]
fn a_directory_swapped_for_a_symlink_during_saves_and_opens_never_leads_outside() {
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("f.txt"), "SECRET").expect("secret");
    let project = tempfile::tempdir().expect("project");
    std::fs::create_dir(project.path().join("d")).expect("d");
    std::fs::write(project.path().join("d/f.txt"), "inside").expect("inside");
    std::os::unix::fs::symlink(outside.path(), project.path().join("s")).expect("symlink");
    let (core, _data) = core_with(project.path(), Limits::default());

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = swapper(project.path().join("d"), project.path().join("s"), stop.clone());
    let (mut opened, mut saved, mut refused) = (0, 0, 0);
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut i = 0;
    while Instant::now() < deadline {
        i += 1;
        match core.read_file("d/f.txt") {
            Ok(file) => {
                assert_eq!(file.content, "inside", "an open read a file outside the project");
                opened += 1;
            }
            Err(_) => refused += 1,
        }
        match core.write_file(&format!("d/new-{i}.txt"), "written".into()) {
            Ok(_) => saved += 1,
            Err(_) => refused += 1,
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swaps.join().expect("swapper");
    let escaped: Vec<_> = std::fs::read_dir(outside.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name != "f.txt")
        .collect();
    eprintln!("{swaps} swaps; {opened} opens and {saved} saves went through, {refused} refused");
    assert!(escaped.is_empty(), "saves wrote outside the project: {escaped:?}");
    assert!(opened > 0 && saved > 0, "the race never let an operation through; the test proves nothing");
    assert!(refused > 0, "no operation met the swap; the test proves nothing");
}

#[test]
fn fifos_sockets_and_devices_are_refused_at_once() {
    let project = tempfile::tempdir().expect("project");
    let p = project.path();
    for fifo in ["fifo.txt", "fifo"] {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            p.join(fifo),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .expect("mkfifo");
    }
    let _socket = std::os::unix::net::UnixListener::bind(p.join("sock.txt")).expect("socket");
    let mut special = vec!["fifo.txt", "fifo", "sock.txt"];
    // A device node needs root (CI runs as root); /dev/zero would read forever.
    let zero = rustix::fs::makedev(1, 5);
    match rustix::fs::mknodat(
        rustix::fs::CWD,
        p.join("zero"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o644),
        zero,
    ) {
        Ok(()) => special.push("zero"),
        Err(err) => eprintln!("no device node test: mknod needs root ({err})"),
    }
    let (core, _data) = core_with(p, Limits::default());
    for path in special {
        let c = core.clone();
        let read = within_5s(&format!("opening {path}"), move || c.read_file(path).map(|_| ()));
        let err = read.expect_err("a special file is refused");
        assert!(err.to_string().contains("not a regular file"), "{path}: {err}");

        let c = core.clone();
        let reply = within_5s(&format!("buffer:update of {path}"), move || {
            frame(
                &c,
                "buffer:update",
                json!({"path": path, "content": "x", "cursorPosition": {"line": 1, "column": 1}}),
            )
        });
        let reply = reply.expect("an error reply");
        assert_eq!(reply["payload"]["code"], "NOT_REGULAR_FILE", "{path}: {reply}");

        let c = core.clone();
        let reply = within_5s(&format!("file:open of {path}"), move || frame(&c, "file:open", json!({"path": path})));
        assert_eq!(reply.expect("an error reply")["payload"]["code"], "NOT_REGULAR_FILE", "{path}");

        let c = core.clone();
        within_5s(&format!("diff of {path}"), move || c.diff(path).map(|_| ()).unwrap_or(()));
    }
}

#[test]
fn a_file_over_the_size_cap_is_too_large_to_open_and_is_never_read() {
    let project = tempfile::tempdir().expect("project");
    let big = std::fs::File::create(project.path().join("big.log")).expect("create");
    big.set_len(1 << 30).expect("a sparse 1 GiB file");
    let (core, _data) = core_with(project.path(), Limits::default());
    let started = Instant::now();
    let err = core.read_file("big.log").expect_err("too large");
    assert!(started.elapsed() < Duration::from_secs(1), "it was read: {:?}", started.elapsed());
    assert!(err.to_string().contains("too large to open in Paige"), "{err}");
    let reply = frame(&core, "file:open", json!({"path": "big.log"})).expect("error reply");
    assert_eq!(reply["payload"]["code"], "TOO_LARGE");
    assert_eq!(reply["payload"]["context"]["cap"], "PAIGE_MAX_FILE_BYTES");
}

#[test]
fn buffers_stay_within_their_caps_and_an_unsaved_buffer_is_never_dropped() {
    let project = tempfile::tempdir().expect("project");
    let limits = Limits { max_buffer_bytes: 1 << 20, max_buffers_bytes: 8 << 20, ..Limits::default() };
    let (core, _data) = core_with(project.path(), limits);
    let update = |path: &str, content: String| {
        frame(
            &core,
            "buffer:update",
            json!({"path": path, "content": content, "cursorPosition": {"line": 1, "column": 1}}),
        )
    };
    // A saved (clean) buffer, the first to be evicted.
    assert_eq!(frame(&core, "file:save", json!({"path": "saved.txt", "content": "s".repeat(512 << 10)})), None);
    let chunk = 512 << 10;
    let mut refused = 0;
    for i in 0..200 {
        let letter = char::from(b'a' + (i % 26) as u8);
        match update(&format!("f{i:03}.txt"), letter.to_string().repeat(chunk)) {
            None => {}
            Some(reply) => {
                assert_eq!(reply["payload"]["code"], "TOO_LARGE", "{reply}");
                assert_eq!(reply["payload"]["context"]["cap"], "PAIGE_MAX_BUFFERS_BYTES");
                assert!(reply["payload"]["message"].as_str().is_some_and(|m| m.contains("PAIGE_MAX_BUFFERS_BYTES")));
                refused += 1;
            }
        }
    }
    // 8 MiB hold 16 half-MiB buffers: the clean one made room for the 16th dirty one.
    assert_eq!(refused, 200 - 16, "accepted until the total cap, refused after");
    assert_eq!(core.buffer("saved.txt").expect("path"), None, "the clean buffer was evicted first");
    for i in 0..16 {
        let buffer = core.buffer(&format!("f{i:03}.txt")).expect("path").expect("an accepted buffer is kept");
        assert!(buffer.dirty && buffer.content.len() == chunk);
    }
    // One buffer over the per-buffer cap keeps its last accepted content.
    let reply = update("f000.txt", "z".repeat((1 << 20) + 1)).expect("refused");
    assert_eq!(reply["payload"]["context"]["cap"], "PAIGE_MAX_BUFFER_BYTES", "{reply}");
    assert!(core.buffer("f000.txt").expect("path").expect("kept").content.starts_with('a'));
    // Closing a file frees its room.
    frame(&core, "file:close", json!({"path": "f001.txt"}));
    assert_eq!(update("late.txt", "l".repeat(chunk)), None);
}

#[test]
fn a_diff_and_the_hook_context_are_cut_at_their_caps_with_a_marker() {
    let project = tempfile::tempdir().expect("project");
    for i in 0..20 {
        std::fs::write(project.path().join(format!("f{i}.txt")), "old line\n".repeat(20_000)).expect("write");
    }
    let limits = Limits { max_diff_bytes: 64 << 10, max_hook_context_bytes: 16 << 10, ..Limits::default() };
    let (core, _data) = core_with(project.path(), limits);
    for i in 0..20 {
        let reply = frame(
            &core,
            "buffer:update",
            json!({"path": format!("f{i}.txt"), "content": "new line\n".repeat(20_000), "cursorPosition": {"line": 1, "column": 1}}),
        );
        assert_eq!(reply, None);
    }
    let diff = core.diff("f0.txt").expect("diff");
    assert!(diff.len() <= 64 << 10, "{}", diff.len());
    assert!(diff.contains("diff cut at 65536 bytes"), "{}", &diff[diff.len() - 200..]);
    let input: HookInput = serde_json::from_value(json!({"session_id": "s", "prompt": "help"})).expect("input");
    let HookDecision::Context { context } = core.handle_hook(HookEvent::UserPromptSubmit, &input) else {
        panic!("coach mode adds context to a prompt");
    };
    assert!(context.len() <= 16 << 10, "{}", context.len());
    assert!(context.contains("context cut at 16384 bytes"));
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777
}

#[test]
fn a_fresh_data_dir_and_the_database_files_are_private() {
    let project = tempfile::tempdir().expect("project");
    let parent = tempfile::tempdir().expect("parent");
    let data = parent.path().join("fresh/paige");
    let config = Config::new(project.path().to_owned(), data.clone(), "test");
    let core = Core::open(config, clock()).expect("core");
    core.db()
        .create_session(paige_core::db::NewSession {
            project_dir: project.path().to_owned(),
            issue_number: None,
            issue_title: None,
        })
        .expect("a write, so the WAL exists");
    assert_eq!(mode(&data), 0o700, "DATA_DIR");
    for file in ["paige.db", "paige.db-wal", "paige.db-shm"] {
        assert_eq!(mode(&data.join(file)), 0o600, "{file}");
    }
    drop(core);
    // A database an older Paige left readable by others is made private on open.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(data.join("paige.db"), std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let config = Config::new(project.path().to_owned(), data.clone(), "test");
    let _core = Core::open(config, clock()).expect("core");
    assert_eq!(mode(&data.join("paige.db")), 0o600);
}

/// The process umask, from /proc (reading it through umask(2) would change it for a moment).
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    let line = status.lines().find_map(|l| l.strip_prefix("Umask:")).expect("Umask line");
    u32::from_str_radix(line.trim(), 8).expect("octal")
}

#[test]
fn saving_keeps_an_existing_files_mode_and_gives_a_new_file_the_umasks() {
    use std::os::unix::fs::PermissionsExt;
    let project = tempfile::tempdir().expect("project");
    let script = project.path().join("run.sh");
    std::fs::write(&script, "echo hi\n").expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (core, _data) = core_with(project.path(), Limits::default());
    core.write_file("run.sh", "echo bye\n".into()).expect("save");
    assert_eq!(mode(&script), 0o755);
    core.write_file("src/new.rs", "fn main() {}\n".into()).expect("save a new file");
    assert_eq!(mode(&project.path().join("src/new.rs")), 0o666 & !umask());
    let leftovers: Vec<_> = std::fs::read_dir(project.path().join("src"))
        .expect("list")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(paige_core::files::TEMP_PREFIX))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_save_onto_a_special_file_or_through_a_swapped_symlink_is_refused() {
    let project = tempfile::tempdir().expect("project");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        project.path().join("pipe.txt"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .expect("mkfifo");
    let (core, _data) = core_with(project.path(), Limits::default());
    let err = within_5s("a save onto a FIFO", {
        let core = core.clone();
        move || core.write_file("pipe.txt", "x".into()).map(|_| ()).expect_err("refused")
    });
    assert!(matches!(err, ProjectError::File(paige_core::files::FileError::NotRegular { .. })), "{err}");
}

fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().expect("spawn");
    let pid = child.id();
    child.wait().expect("wait");
    pid
}

fn run_file(data: &Path, pid: u32, project: &Path) {
    let info = paige_core::run_info::RunInfo {
        pid,
        port: 1,
        token: Some("old".into()),
        agent_token: None,
        local_token: None,
        jail: None,
        landlock: None,
        no_jail_because: None,
        project_dir: project.to_owned(),
        started_at: chrono::Utc::now(),
    };
    paige_core::run_info::write(data, &info).expect("run file");
}

#[test]
fn a_run_file_left_by_a_crash_gets_the_projects_temp_files_removed_and_sessions_kept_active() {
    let project = tempfile::tempdir().expect("project");
    std::fs::create_dir_all(project.path().join("src")).expect("src");
    let temp = project.path().join("src/.paige-save-0123abcd");
    std::fs::write(&temp, "half a save").expect("temp");
    std::fs::write(project.path().join("src/keep.rs"), "kept").expect("keep");
    let data = tempfile::tempdir().expect("data");
    let config = Config::new(project.path().to_owned(), data.path().to_owned(), "test");
    let core = Core::open(config.clone(), clock()).expect("core");
    let session = core
        .db()
        .create_session(paige_core::db::NewSession {
            project_dir: project.path().to_owned(),
            issue_number: Some(7),
            issue_title: None,
        })
        .expect("session");

    // Another Paige still running: its temp files may be saves in progress.
    let mut alive = std::process::Command::new("sleep").arg("30").spawn().expect("spawn");
    run_file(data.path(), alive.id(), project.path());
    core.announce(4000, &fixed_tokens()).expect("announce");
    let _ = alive.kill();
    let _ = alive.wait();
    assert!(temp.exists(), "a running Paige's temp file was removed");

    run_file(data.path(), dead_pid(), project.path());
    core.announce(4000, &fixed_tokens()).expect("announce");
    assert!(!temp.exists(), "the crashed run's temp file is still there");
    assert_eq!(std::fs::read_to_string(project.path().join("src/keep.rs")).expect("read"), "kept");
    let after = core.db().session(&session.id).expect("session");
    assert_eq!(after.status, paige_core::db::SessionStatus::Active, "left active, to be resumed");
}

#[test]
fn only_diffs_still_valid_in_the_cache_are_answered_from_it() {
    let project = tempfile::tempdir().expect("project");
    std::fs::write(project.path().join("a.txt"), "one\n").expect("write");
    let (core, _data) = core_with(project.path(), Limits::default());
    let edit = |content: &str| {
        frame(
            &core,
            "buffer:update",
            json!({"path": "a.txt", "content": content, "cursorPosition": {"line": 1, "column": 1}}),
        )
    };
    assert_eq!(edit("two\n"), None);
    assert!(core.diffs_from_cache(Some("a.txt")).is_none(), "never diffed yet");
    let computed = core.diffs(Some("a.txt")).expect("diff");
    assert_eq!(core.diffs_from_cache(Some("a.txt")), Some(computed.clone()));
    assert_eq!(core.diffs_from_cache(None), Some(computed));
    assert_eq!(edit("three\n"), None);
    assert!(core.diffs_from_cache(Some("a.txt")).is_none(), "the buffer changed");
    core.diffs(None).expect("diff");
    std::fs::write(project.path().join("a.txt"), "one, longer\n").expect("write");
    assert!(core.diffs_from_cache(None).is_none(), "the file on disk changed");
    assert_eq!(core.diffs_from_cache(Some("b.txt")), Some(Vec::new()), "no buffer, no diff, nothing to read");
}

#[test]
fn a_start_removes_settings_and_version_temp_files_a_killed_paige_left_but_not_a_live_ones() {
    let project = tempfile::tempdir().expect("project");
    let (core, data) = core_with(project.path(), Limits::default());
    let shard = data.path().join("versions/ab");
    std::fs::create_dir_all(&shard).expect("shard");
    let dead = [
        data.path().join(format!(".paige-tmp-{}-a1b2c3", dead_pid())),
        shard.join(format!(".paige-tmp-{}-d4e5f6", dead_pid())),
    ];
    let live = [data.path().join(format!(".paige-tmp-{}-g7h8i9", std::process::id()))];
    for file in dead.iter().chain(&live) {
        std::fs::write(file, "half a write").expect("temp");
    }
    core.announce(4000, &fixed_tokens()).expect("announce");
    let left: Vec<_> = dead.iter().chain(&live).filter(|f| f.exists()).collect();
    assert_eq!(left, live.iter().collect::<Vec<_>>());
}

#[test]
fn a_transcript_path_naming_a_fifo_or_a_huge_file_never_hangs_a_hook_or_the_wrap_up() {
    use crate::governance::{A, Gov, INTENTS, denied};
    let outside = tempfile::tempdir().expect("claude dir");
    let fifo = outside.path().join("fifo.jsonl");
    rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, 0o644.into(), 0).expect("mkfifo");
    // 1 GiB of nothing, then the one line that counts: read from its end, not whole.
    let huge = outside.path().join("huge.jsonl");
    std::fs::File::create(&huge).expect("create").set_len(1 << 30).expect("sparse 1 GiB");
    let usage =
        json!({"type": "assistant", "message": {"model": "m", "usage": {"input_tokens": 2000, "output_tokens": 10}}});
    let mut file = std::fs::OpenOptions::new().append(true).open(&huge).expect("append");
    std::io::Write::write_all(&mut file, format!("\n{usage}\n").as_bytes()).expect("usage");
    let g = Gov::governed(INTENTS, &[]);
    let patch = |path: &Path| json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "transcript_path": path});
    let (g, on_fifo) = within_5s("a hook whose transcript is a FIFO", move || {
        g.prompt(A);
        g.select(A, "INT-005");
        let decision = g.hook("PreToolUse-Write", A, patch(&fifo));
        (g, decision)
    });
    // A transcript that cannot be read shows no call: the watched call is denied, at once.
    assert!(denied(&on_fifo).contains("transcript"), "{on_fifo:?}");
    let core = g.core.clone();
    // The UI's end of session condenses the transcript the last hook named: the FIFO.
    within_5s("a wrap-up from a FIFO transcript", move || {
        core.coaching().end_session_from_ui().map(|_| ()).map_err(|e| e.to_string())
    })
    .ok();
    let (_g, on_huge) = within_5s("a hook whose transcript is 1 GiB", move || {
        let decision = g.hook("PreToolUse-Write", A, patch(&huge));
        (g, decision)
    });
    assert!(denied(&on_huge).contains("used 2010 of 1000 tokens"), "{on_huge:?}");
}

fn fixed_tokens() -> paige_core::token::Tokens {
    paige_core::token::Tokens { ui: "token".into(), agent: "agent".into(), local: "local".into() }
}

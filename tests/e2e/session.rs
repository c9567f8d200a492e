//! Nothing of the learner's desktop session is in reach from coach mode's confinement
//! (issue 39, items 2 and 3), through the real launcher: `paige claude` exec'ing the jail and
//! `paige confine`, with a `claude` on PATH that is the attacker — it runs, as Claude Code's
//! tools would, against a session this test starts beside it: a real X server (Xvfb), a
//! `screen` session, a D-Bus session bus (on a path and an abstract address), a process it
//! may trace, a service on 127.0.0.1, and the terminal it was started on (TIOCSTI).
//!
//! Cells, as root: the jail (user namespace, no capabilities, its own network, Landlock and
//! seccomp inside), the jail without Landlock (its network namespace alone keeps a local TCP
//! service out: Landlock's port rules would too), and no jail (`PAIGE_JAIL=0`: Landlock and
//! seccomp alone, as where user namespaces are forbidden). As an ordinary user (nobody) whose
//! own session it is: the jail (with private mounts) and Landlock alone. Each first runs the
//! same script with no confinement at all, which must reach everything that user can: a test
//! that cannot fail proves nothing.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::World;
use crate::launch::learner_project;

/// What the attacker reports, one word a line, for each thing it reached.
const REACHED: [&str; 8] =
    ["X-REACHED", "SCREEN-TYPED", "BUS-PATH", "BUS-ABSTRACT", "TIOCSTI", "PTRACE", "MOUNTED", "TCP-LOCAL"];

/// The learner's session: killed when dropped.
struct Session {
    children: Vec<Child>,
    display: u32,
    screen: String,
    /// `screen`'s sockets (`SCREENDIR`), under `/run` as `/run/screen` is.
    screen_dir: PathBuf,
    bus_path: PathBuf,
    bus_abstract: String,
    /// Where the learner's shell in `screen` writes what it is typed.
    typed: PathBuf,
    /// A local service of the learner's on 127.0.0.1 (a dev server, a debug port).
    service: std::net::TcpListener,
    _dir: tempfile::TempDir,
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ =
            Command::new("screen").env("SCREENDIR", &self.screen_dir).args(["-S", &self.screen, "-X", "quit"]).output();
        // As root, `screen -X` reaches another user's session only through its own checks:
        // the session's shell is killed with the children below when that fails.
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn wait_until(what: &str, ok: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ok() {
        assert!(Instant::now() < deadline, "{what} did not start within 10 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `program` as `user` when given (with `setpriv`), else as this process.
fn as_user(program: &str, user: Option<(u32, u32)>) -> Command {
    match user {
        Some((uid, gid)) => {
            let mut command = Command::new("setpriv");
            command.arg(format!("--reuid={uid}")).arg(format!("--regid={gid}")).args(["--clear-groups", "--", program]);
            command
        }
        None => Command::new(program),
    }
}

/// The learner's session, run by `user` (the learner) when given, else by root.
fn start_session(user: Option<(u32, u32)>) -> Session {
    let dir = tempfile::Builder::new().prefix("paige-session-").tempdir_in("/run").expect("a folder in /run");
    let screen_dir = dir.path().join("screen");
    std::fs::create_dir(&screen_dir).expect("screen dir");
    std::fs::set_permissions(&screen_dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    if let Some((uid, gid)) = user {
        for path in [dir.path(), &screen_dir] {
            std::os::unix::fs::chown(path, Some(uid), Some(gid)).expect("chown");
        }
    }
    let pid = std::process::id();
    let display = 90 + pid % 100 + if user.is_some() { 100 } else { 0 };
    let xvfb = as_user("Xvfb", user)
        .arg(format!(":{display}"))
        .args(["-screen", "0", "640x480x24", "-nolisten", "tcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb (scripts/test.sh installs xvfb)");
    let bus_path = dir.path().join("bus");
    let bus_abstract = format!("paige-test-bus-{pid}-{display}");
    // One bus on a path (as `/run/user/UID/bus`), one on an abstract address (as older desktops).
    let bus = |address: String| {
        as_user("dbus-daemon", user)
            .args(["--session", "--nofork", "--address", &address])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon (scripts/test.sh installs dbus)")
    };
    let buses = [bus(format!("unix:path={}", bus_path.display())), bus(format!("unix:abstract={bus_abstract}"))];
    let screen = format!("paige-learner-{pid}-{display}");
    let typed = dir.path().join("typed-by-the-session");
    let status = as_user("screen", user)
        .env("SCREENDIR", &screen_dir)
        .args(["-dmS", &screen, "sh"])
        .current_dir(dir.path())
        .status()
        .expect("screen (scripts/test.sh installs it)");
    assert!(status.success(), "screen starts");
    wait_until("Xvfb", || Path::new(&format!("/tmp/.X11-unix/X{display}")).exists());
    wait_until("dbus-daemon", || bus_path.exists());
    let [path_bus, abstract_bus] = buses;
    let service = std::net::TcpListener::bind("127.0.0.1:0").expect("a local service");
    Session {
        children: vec![xvfb, path_bus, abstract_bus],
        display,
        screen,
        screen_dir,
        bus_path,
        bus_abstract,
        typed,
        service,
        _dir: dir,
    }
}

/// The attacker as a shell script (`claude` on PATH): each line prints its word on success.
fn attacker(session: &Session, project: &Path) -> String {
    format!(
        r##"#!/bin/sh
DISPLAY=:{display} xdpyinfo >/dev/null 2>&1 && echo X-REACHED
SCREENDIR={screen_dir} screen -S {screen} -X stuff 'echo typed > {typed}\n' 2>/dev/null
sleep 0.5; test -e {typed} && echo SCREEN-TYPED
dbus-send --bus=unix:path={bus} --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames >/dev/null 2>&1 && echo BUS-PATH
dbus-send --bus=unix:abstract={abstract_} --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames >/dev/null 2>&1 && echo BUS-ABSTRACT
python3 -c 'import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b"x")' 2>/dev/null && echo TIOCSTI
sleep 5 & victim=$!
python3 -c 'import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); sys.exit(0 if libc.ptrace(16, int(sys.argv[1]), 0, 0) == 0 else 1)' $victim 2>/dev/null && echo PTRACE
kill $victim 2>/dev/null
mkdir -p /tmp/paige-m 2>/dev/null; mount -t tmpfs none /tmp/paige-m 2>/dev/null && echo MOUNTED
python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2)' {service} 2>/dev/null && echo TCP-LOCAL
echo '// changed' >> {project}/src/main.rs 2>/dev/null && echo WROTE-PROJECT
echo attacker-done
"##,
        display = session.display,
        screen = session.screen,
        screen_dir = session.screen_dir.display(),
        typed = session.typed.display(),
        bus = session.bus_path.display(),
        abstract_ = session.bus_abstract,
        project = project.display(),
        service = session.service.local_addr().expect("port").port(),
    )
}

/// Runs `command` on a terminal of its own (`script`), so that TIOCSTI has one to type into.
/// Its input stays open until it ends: `script` hangs the terminal up at the end of its input.
fn on_a_terminal(command: &mut Command) -> String {
    use std::io::Read;
    let mut child =
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("script runs");
    let input = child.stdin.take();
    let mut stderr = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut stdout = String::new();
    let _ = child.stdout.take().expect("stdout").read_to_string(&mut stdout);
    let _ = child.wait();
    drop(input);
    let text = format!("{stdout}{}", errors.join().unwrap_or_default());
    assert!(text.contains("attacker-done"), "the attacker ran to its end: {text}");
    text
}

fn reached(text: &str) -> Vec<&'static str> {
    // A typed character is echoed at the start of the line that follows it.
    REACHED.into_iter().filter(|word| text.lines().any(|l| l.trim().ends_with(word))).collect()
}

/// The confined launch in one cell: `paige serve` with `serve_env`, then `paige claude`,
/// both run by `user` when given.
fn confined(session: &Session, serve_env: &[(&str, &str)], user: Option<(u32, u32)>) -> String {
    let _ = std::fs::remove_file(&session.typed);
    let mut world = World::ready();
    let bin = world.root.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    learner_project(&world);
    let script = bin.join("claude");
    std::fs::write(&script, attacker(session, &world.project())).expect("attacker");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    world.set("PATH", &path);
    for (key, value) in serve_env {
        world.set(key, value);
    }
    let setpriv = user.map(|(uid, gid)| format!("setpriv --reuid={uid} --regid={gid} --clear-groups -- "));
    if let Some((uid, gid)) = user {
        // The world is the learner's, as their home is: theirs to list (Landlock hides
        // DATA_DIR inside it by granting what is beside it on the way down).
        std::os::unix::fs::chown(world.root.path(), Some(uid), Some(gid)).expect("chown");
        for dir in ["project", "data", "home", "cwd", "bin"] {
            let dir = world.root.path().join(dir);
            std::fs::create_dir_all(&dir).expect("mkdir");
            let status = Command::new("chown").arg("-R").arg(format!("{uid}:{gid}")).arg(&dir).status().expect("chown");
            assert!(status.success());
        }
    }
    let mut paige = match &setpriv {
        Some(words) => world.spawn_wrapped(&words.split_whitespace().collect::<Vec<_>>(), &["serve"]),
        None => world.spawn(&["serve"]),
    };
    paige.wait_for("ready in", Duration::from_secs(10));
    let line = format!("{}{} claude -p go", setpriv.unwrap_or_default(), crate::PAIGE);
    let mut command = Command::new("script");
    command.args(["-qec", &line, "/dev/null"]).current_dir(world.cwd()).env_clear().envs(world.env.iter().cloned());
    let text = on_a_terminal(&mut command);
    assert!(!text.contains("WROTE-PROJECT"), "the project is read-only: {text}");
    assert_eq!(std::fs::read_to_string(world.project().join("src/main.rs")).expect("main"), "fn main() {}\n");
    drop(paige);
    text
}

/// Every cell for a learner who is `user` (root when None): first the same script with no
/// confinement at all, which must reach all it can as that user (a test that cannot fail
/// proves nothing), then each confined cell, which must reach none.
fn cells(user: Option<(u32, u32)>, cells: &[(&str, Vec<(&str, &str)>)]) {
    let session = start_session(user);
    let dir = tempfile::tempdir().expect("dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::create_dir_all(dir.path().join("src")).expect("src");
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").expect("main");
    let script = dir.path().join("attacker");
    std::fs::write(&script, attacker(&session, dir.path())).expect("attacker");
    if let Some((uid, gid)) = user {
        let status =
            Command::new("chown").arg("-R").arg(format!("{uid}:{gid}")).arg(dir.path()).status().expect("chown");
        assert!(status.success());
    }
    let setpriv = user.map(|(uid, gid)| format!("setpriv --reuid={uid} --regid={gid} --clear-groups -- "));
    let line = format!("{}sh {}", setpriv.unwrap_or_default(), script.display());
    let text = on_a_terminal(Command::new("script").args(["-qec", &line, "/dev/null"]));
    // An ordinary user cannot mount, even unconfined.
    let reachable: Vec<&str> = REACHED.into_iter().filter(|w| user.is_none() || *w != "MOUNTED").collect();
    assert_eq!(reached(&text), reachable, "unconfined, everything is in reach: {text}");

    for (cell, env) in cells {
        let text = confined(&session, env, user);
        assert!(reached(&text).is_empty(), "{cell}: reached {:?}\n{text}", reached(&text));
        assert!(!session.typed.exists(), "{cell}: nothing was typed into the learner's screen");
    }
}

#[test]
fn from_coach_modes_confinement_the_learners_display_screen_bus_terminal_and_processes_are_out_of_reach() {
    cells(
        None,
        &[
            ("the jail", vec![("PAIGE_LANDLOCK", "1")]),
            // The jail's own layers alone: its network namespace keeps the local service out.
            ("the jail without Landlock", vec![("PAIGE_LANDLOCK", "0")]),
            ("Landlock alone", vec![("PAIGE_JAIL", "0"), ("PAIGE_LANDLOCK", "1")]),
        ],
    );
}

/// The same for a learner who is an ordinary user, their session (X, `screen`, D-Bus) their
/// own: the jail in a user namespace (where Claude Code's own sandbox would also run), and
/// Landlock alone (as where AppArmor forbids user namespaces).
#[test]
fn as_an_ordinary_user_the_learners_own_session_is_out_of_reach_of_coach_modes_confinement() {
    let Some(user) = crate::guard::unprivileged_user() else {
        panic!("this test needs root and setpriv to run the learner as nobody (scripts/test.sh runs as root)");
    };
    cells(
        Some(user),
        &[
            ("the jail", vec![("PAIGE_LANDLOCK", "1")]),
            ("Landlock alone", vec![("PAIGE_JAIL", "0"), ("PAIGE_LANDLOCK", "1")]),
        ],
    );
}

//! The file watcher of the built `paige serve`, counted in the kernel's own bookkeeping.

use std::time::Duration;

use crate::World;

/// inotify watches held by process `pid`, from /proc/<pid>/fdinfo.
fn inotify_watches(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .expect("fdinfo")
        .filter_map(|entry| std::fs::read_to_string(entry.ok()?.path()).ok())
        .map(|info| info.lines().filter(|l| l.starts_with("inotify wd:")).count())
        .sum()
}

#[test]
fn node_modules_and_gitignored_trees_cost_no_inotify_watches() {
    let world = World::ready();
    let project = world.project();
    for i in 0..5000 {
        std::fs::create_dir_all(project.join(format!("node_modules/pkg{}/lib{}", i / 10, i % 10))).expect("mkdir");
    }
    for i in 0..500 {
        std::fs::create_dir_all(project.join(format!("target/debug/dep{i}"))).expect("mkdir");
    }
    std::fs::write(project.join(".gitignore"), "target/\n").expect(".gitignore");
    for dir in ["src/a", "src/b", "tests"] {
        std::fs::create_dir_all(project.join(dir)).expect("mkdir");
    }
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    // The watcher starts in the background; the prime follows it.
    paige.wait_for("change detector primed", Duration::from_secs(10));
    let watches = inotify_watches(paige.child.id());
    eprintln!("inotify watches with a 5,500-folder node_modules and target: {watches}");
    // The root, src, src/a, src/b and tests, and the folder of the watcher's own markers.
    assert_eq!(watches, 6, "only the folders the explorer shows are watched");
}

#[test]
fn a_fifo_named_gitignore_does_not_keep_paige_serve_from_starting() {
    let world = World::ready();
    let project = world.project();
    std::fs::create_dir_all(project.join("src")).expect("src");
    let fifo = std::ffi::CString::new(project.join(".gitignore").display().to_string()).expect("path");
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0, "mkfifo");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    let out = paige.output();
    assert!(out.contains("not a regular file"), "the FIFO is named in the log:\n{out}");
}

/// Whether this machine lets a test lower the inotify watch limit in a user namespace of its
/// own (`unshare -Ur`, `/proc/sys/user/max_inotify_watches`).
fn can_limit_watches() -> bool {
    std::process::Command::new("unshare")
        .args(["-Ur", "sh", "-c", "echo 3 > /proc/sys/user/max_inotify_watches"])
        .status()
        .is_ok_and(|s| s.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_watch_limit_paige_says_so_in_the_log_and_the_ui_and_keeps_working() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    if !can_limit_watches() {
        eprintln!("no user namespaces here: the watch-limit test cannot lower the limit");
        return;
    }
    let world = World::ready();
    for i in 0..10 {
        std::fs::create_dir_all(world.project().join(format!("src/m{i}"))).expect("mkdir");
    }
    // Only 3 inotify watches in paige's own user namespace; the project has 12 folders.
    let limit = "echo 3 > /proc/sys/user/max_inotify_watches && exec \"$0\" \"$@\"";
    let mut paige = world.spawn_wrapped(&["unshare", "-Ur", "sh", "-c", limit], &["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    let line = paige.wait_for("Paige watches 3 of the project's 12 folders", Duration::from_secs(5));
    assert!(line.contains("max_user_watches"), "the log says how to raise the limit: {line}");
    // A UI that connects is told, and the server keeps answering.
    let info = paige.run_info(&world.data_dir());
    let url = format!("ws://127.0.0.1:{}/ws?token={}", info["port"], info["token"].as_str().expect("token"));
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.expect("ws");
    let hello = serde_json::json!({"type": "connection:hello", "payload": {"version": "e2e", "platform": "test",
        "windowSize": {"width": 800, "height": 600}}});
    socket.send(Message::Text(hello.to_string().into())).await.expect("hello");
    let notice = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(Ok(message)) = socket.next().await {
            let text = message.into_text().unwrap_or_default().to_string();
            if text.contains("coaching:message") && text.contains("Paige watches 3") {
                return text;
            }
        }
        String::new()
    })
    .await
    .expect("a notice within 5 s");
    assert!(notice.contains("\"warning\""), "{notice}");
    let health = reqwest_free_get(info["port"].as_u64().expect("port") as u16, "/health");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
}

/// A plain HTTP/1.1 GET.
fn reqwest_free_get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").expect("send");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("read");
    reply
}

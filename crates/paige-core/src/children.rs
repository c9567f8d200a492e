//! Children that die with Paige: a program Paige starts in the background (a check's
//! runner, the guard self-check, the relay, the guard's own Claude Code and server) is sent
//! SIGKILL when the thread that started it ends, so a killed Paige leaves nothing running.
//!
//! `PR_SET_PDEATHSIG` fires when the *thread* that forked the child ends, not the process:
//! start these only from threads that live as long as the child should (a runtime's worker,
//! the main thread, or a thread that waits for the child), never from a blocking pool's.

/// Arms `command` to die with its parent. Between fork and exec it also checks that the
/// parent is still the one that forked it: a parent killed just before the `prctl` would
/// otherwise leave it running.
pub fn die_with_parent(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    // SAFETY: prctl(2), getppid(2) and raise(3) are async-signal-safe.
    unsafe {
        command.pre_exec(move || arm(parent));
    }
}

/// [`die_with_parent`] for a tokio command.
pub fn die_with_parent_async(command: &mut tokio::process::Command) {
    let parent = std::process::id();
    // SAFETY: as in `die_with_parent`.
    unsafe {
        command.pre_exec(move || arm(parent));
    }
}

/// Starts `command`, armed to die with this *process*, from a thread that lives as long as
/// the process: for a child that outlives the thread that wants it started (a server a
/// worker thread starts and hands on).
pub fn spawn_kept(mut command: std::process::Command) -> std::io::Result<std::process::Child> {
    type Job = (std::process::Command, std::sync::mpsc::Sender<std::io::Result<std::process::Child>>);
    static SPAWNER: std::sync::OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<Job>>> = std::sync::OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        let started = std::thread::Builder::new().name("paige-spawner".into()).spawn(move || {
            for (mut command, answer) in queue {
                let _ = answer.send(command.spawn());
            }
        });
        if let Err(err) = started {
            tracing::warn!("cannot start the spawner thread: {err}");
        }
        std::sync::Mutex::new(jobs)
    });
    die_with_parent(&mut command);
    let (answer, answered) = std::sync::mpsc::channel();
    let sent = spawner.lock().unwrap_or_else(std::sync::PoisonError::into_inner).send((command, answer));
    if let Err(std::sync::mpsc::SendError((mut command, _))) = sent {
        return command.spawn();
    }
    answered.recv().map_err(|_| std::io::Error::other("the spawner thread is gone"))?
}

fn arm(parent: u32) -> std::io::Result<()> {
    // SAFETY: only async-signal-safe calls.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if u32::try_from(libc::getppid()).ok() != Some(parent) {
            libc::raise(libc::SIGKILL);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child armed by a thread that ends is killed then; one started unarmed outlives it.
    #[test]
    fn a_child_dies_with_the_thread_that_started_it() {
        let start = |armed: bool| {
            std::thread::spawn(move || {
                let mut command = std::process::Command::new("sleep");
                command.arg("30");
                if armed {
                    die_with_parent(&mut command);
                }
                command.spawn().expect("sleep runs")
            })
            .join()
            .expect("thread")
        };
        let (mut armed, mut unarmed) = (start(true), start(false));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let status = loop {
            if let Some(status) = armed.try_wait().expect("wait") {
                break Some(status);
            }
            if std::time::Instant::now() > deadline {
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.and_then(|s| s.signal()), Some(libc::SIGKILL), "the armed child was killed");
        assert!(unarmed.try_wait().expect("wait").is_none(), "the unarmed child still runs");
        unarmed.kill().expect("kill");
        unarmed.wait().expect("reap");
    }

    /// A child started by `spawn_kept` from a thread that ends lives on (its parent is the
    /// process's spawner thread).
    #[test]
    fn a_kept_child_outlives_the_thread_that_asked_for_it() {
        let mut child = std::thread::spawn(|| {
            let mut command = std::process::Command::new("sleep");
            command.arg("30");
            spawn_kept(command).expect("sleep runs")
        })
        .join()
        .expect("thread");
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(child.try_wait().expect("wait").is_none(), "the kept child still runs");
        child.kill().expect("kill");
        child.wait().expect("reap");
    }
}

//! One running Paige: a core, its server on 127.0.0.1 and its run file. `paige serve` and
//! the desktop app start and stop through this one lifecycle.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use paige_core::memory::Memory;
use paige_core::run_info::{self, RunInfo, Token};
use paige_core::{Clock, Config, Core};
use tokio_util::sync::CancellationToken;

pub struct Instance {
    pub core: Arc<Core>,
    pub port: u16,
    /// The UI token: opens every private route. Never given to the terminal.
    pub token: Token,
    /// The agent token: opens only `POST /hooks/*`, `/mcp` and `paige claude`'s routes. The
    /// one the terminal's Claude Code gets (`AgentServer::token`); kept across restarts.
    pub agent_token: Token,
    /// The local tools' token (`paige session`, `paige memory`); kept across restarts.
    pub local_token: Token,
    info: RunInfo,
    run_file: PathBuf,
    stop: CancellationToken,
    /// Cancelled when the server ends, whether asked to or not.
    ended: CancellationToken,
    serving: Mutex<Option<tokio::task::JoinHandle<std::io::Result<()>>>>,
    /// The loop handing free memory back to the OS, until `stop`; awaited by [`Instance::stop`].
    releasing: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// Connections the kernel queues before they are accepted. A flood fills the queue faster
/// than a busy machine accepts; once it is full, new SYNs are dropped and a real client (or
/// `/health`) waits a 1 s retransmit. The kernel caps it at `net.core.somaxconn`.
const BACKLOG: u32 = 4096;

/// How long start-up waits for the change detector's prime before serving anyway.
const PRIME_WAIT: Duration = Duration::from_millis(20);

fn listen(port: u16) -> std::io::Result<tokio::net::TcpListener> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(std::net::SocketAddr::from(([127, 0, 0, 1], port)))?;
    socket.listen(BACKLOG)
}

impl Instance {
    /// Opens the core for `config` with its `memory` (connected here), starts its watcher,
    /// binds 127.0.0.1 on `config.port` (0: a free one), writes the run file and serves —
    /// with the web UI in `ui_dir` if given. The tokens are those kept in `DATA_DIR/tokens.json`
    /// (made on the first start), so a restart keeps every client's; `PAIGE_TOKEN`, when set,
    /// is the UI token instead. Must run inside a Tokio runtime.
    pub async fn start(
        config: Config,
        clock: Arc<dyn Clock>,
        memory: Memory,
        ui_dir: Option<&Path>,
    ) -> anyhow::Result<Instance> {
        // The database, and memory's connection (SQLite or ChromaDB over HTTP), block.
        // The git repository is found here too (a few file reads).
        let core = tokio::task::spawn_blocking(move || {
            Core::open(config, clock).map(|core| {
                let repo = paige_git::Repo::for_project(core.project_root().path());
                core.with_memory(memory).with_git(repo)
            })
        })
        .await
        .context("opening the core failed")??;
        // Kept in the data folder `Core::open` made (0700).
        let mut tokens =
            paige_core::token::load_or_create(&core.config().data_dir, core.config().agent_jail.ui_token_kept())?;
        if let Some(token) = &core.config().token {
            tokens.ui = token.as_str().into();
        }
        let core = Arc::new(core);
        // The learner's session goes on where the last run left it.
        {
            let core = core.clone();
            tokio::task::spawn_blocking(move || core.coaching().resume_after_restart())
                .await
                .context("resuming failed")?;
        }
        // Watching walks the project's folders, and the change detector's prime walks its
        // files: both in the background, so the server answers at once.
        core.start_watcher_in_background();
        // A small project is primed within milliseconds: waiting that long lets a hook that
        // comes at once find the baseline complete. A large one finishes in the background.
        let primed_by = tokio::time::Instant::now() + PRIME_WAIT;
        while !core.detector_primed() && tokio::time::Instant::now() < primed_by {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let wanted = core.config().port;
        let listener = listen(wanted).with_context(|| format!("cannot listen on 127.0.0.1:{wanted}"))?;
        let port = listener.local_addr().context("cannot read the bound address")?.port();
        let (info, run_file) = core.announce(port, &tokens)?;
        let mut server = crate::app_with_tokens(core.clone(), &tokens);
        if let Some(dir) = ui_dir {
            server = server.with_ui(dir);
        }
        let stop = CancellationToken::new();
        let ended = CancellationToken::new();
        let serving = {
            let (stop, ended) = (stop.clone(), ended.clone());
            tokio::spawn(async move {
                let served = crate::serve(listener, server, stop).await;
                ended.cancel();
                served
            })
        };
        let releasing = tokio::spawn(release_free_memory(stop.clone()));
        let paige_core::token::Tokens { ui: token, agent: agent_token, local: local_token } = tokens;
        Ok(Instance {
            core,
            port,
            token,
            agent_token,
            local_token,
            info,
            run_file,
            stop,
            ended,
            serving: Mutex::new(Some(serving)),
            releasing: Mutex::new(Some(releasing)),
        })
    }

    pub fn run_file(&self) -> &Path {
        &self.run_file
    }

    /// Resolves when the server has ended — after [`Instance::stop`], or on its own (a failure).
    pub async fn ended(&self) {
        self.ended.cancelled().await;
    }

    /// Stops accepting, closes the MCP sessions and gives in-flight requests up to `drain`;
    /// then shuts the core down (background work stopped, terminals killed, database
    /// checkpointed) and removes the run file if it is still ours. Each step is logged.
    /// Idempotent.
    pub async fn stop(&self, drain: Duration) -> anyhow::Result<()> {
        self.stop.cancel();
        let serving = self.serving.lock().unwrap_or_else(|p| p.into_inner()).take();
        let served = match serving {
            Some(task) => match tokio::time::timeout(drain, task).await {
                Ok(Ok(served)) => served.context("the HTTP server failed"),
                Ok(Err(join)) => Err(anyhow::anyhow!("the HTTP server task failed: {join}")),
                Err(_) => {
                    tracing::warn!("shutdown: requests still open after {drain:?}; closing them");
                    Ok(())
                }
            },
            None => Ok(()),
        };
        let releasing = self.releasing.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(task) = releasing {
            // Cancelled with `stop`; at most one malloc_trim still running.
            let _ = task.await;
        }
        tracing::info!("shutdown: stopping background tasks and checkpointing the database");
        let checkpointed = self.core.shutdown().await.context("cannot checkpoint the database");
        match run_info::remove_if_ours(&self.core.config().data_dir, &self.info) {
            Ok(true) => tracing::info!("shutdown: removed {}", self.run_file.display()),
            Ok(false) => tracing::warn!("shutdown: {} belongs to another Paige; left it", self.run_file.display()),
            Err(err) => tracing::warn!("shutdown: cannot remove {}: {err:#}", self.run_file.display()),
        }
        served.and(checkpointed)
    }
}

/// Until `stop`: every [`paige_core::limits::RELEASE_FREE_MEMORY_EVERY`], the pages malloc holds
/// free go back to the OS, so a burst of work does not leave the RSS at its peak.
async fn release_free_memory(stop: CancellationToken) {
    let mut every = tokio::time::interval(paige_core::limits::RELEASE_FREE_MEMORY_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    every.tick().await;
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = every.tick() => {
                let started = std::time::Instant::now();
                let released = tokio::task::spawn_blocking(paige_core::limits::release_free_memory).await;
                tracing::debug!(?released, took = ?started.elapsed(), "handed free memory back to the OS");
            }
        }
    }
}

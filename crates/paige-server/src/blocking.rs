//! Running the core's blocking work (files, SQLite, the project walk) from an async handler.

/// Runs `work` on the runtime's blocking pool, so a slow disk or a long diff never holds up
/// the tasks serving everyone else; `None` (logged) if it panicked.
pub(crate) async fn run<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => Some(value),
        Err(err) => {
            tracing::error!("blocking work failed: {err}");
            None
        }
    }
}

//! What the bench binaries share: percentiles over milliseconds, and a core served on a
//! free port with a `/ws` client connected. Each bench uses part of it.
#![allow(dead_code)]

use std::sync::Arc;

use paige_core::Core;

/// The bench servers' token.
pub const TOKEN: &str = "bench-token";

pub type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The `p` quantile (0–1) of `samples`, which it sorts.
pub fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

/// A core served on 127.0.0.1:<free port> until `stop`.
pub struct Served {
    stop: tokio_util::sync::CancellationToken,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Serves `core` and connects one `/ws` client to it.
pub async fn serve(core: Arc<Core>) -> (Socket, Served) {
    let server = paige_server::app(core, TOKEN);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let stop = tokio_util::sync::CancellationToken::new();
    let serving = tokio::spawn(paige_server::serve(listener, server, stop.clone()));
    let (socket, _) =
        tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}/ws?token={TOKEN}")).await.expect("connect");
    (socket, Served { stop, serving })
}

impl Served {
    /// Stops the server and waits for it.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.serving.await;
    }
}

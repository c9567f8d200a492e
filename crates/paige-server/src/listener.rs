//! The accept loop: every TCP connection served by hyper's HTTP/1.1 (with upgrades, for
//! `/ws`), under three rules that keep slow or hostile clients from exhausting the server:
//!
//! - **Header-read timeout:** a request head must be complete within
//!   `PAIGE_HEADER_READ_TIMEOUT_MS` of its first byte (slowloris).
//! - **Idle timeout:** a connection with no request in flight is closed after
//!   `PAIGE_IDLE_TIMEOUT_MS` without one. Upgraded WebSockets and streaming responses (MCP's
//!   SSE) are in flight for as long as they live, so they are exempt.
//! - **Connection limit:** at most `PAIGE_MAX_CONNECTIONS` at once. At the limit, the oldest
//!   connection with no request in flight makes room for the new one; only when every
//!   connection is busy is the new one closed at once. So a flood of idle or half-sent
//!   connections cannot keep a real client, or `/health`, out.
//!
//! Every socket gets `TCP_NODELAY` (Nagle's algorithm would hold a reply's second write, an
//! SSE event after its headers, until the client's delayed ACK, ~40 ms on Linux), and a
//! WebSocket a `TCP_QUICKACK` after each read (so a client that keeps Nagle on is not held
//! ~40 ms waiting for this side's delayed ACK before its next frame).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

/// The connection rules of one listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
}

impl From<&paige_core::Limits> for ConnectionLimits {
    fn from(limits: &paige_core::Limits) -> Self {
        ConnectionLimits {
            max_connections: limits.max_connections,
            header_read_timeout: limits.header_read_timeout,
            idle_timeout: limits.idle_timeout,
        }
    }
}

/// Serves `router` on `listener` until `stop` is cancelled; then stops accepting, asks every
/// connection to finish its current request and close, and waits for them.
pub(crate) async fn run(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let registry = Arc::new(Registry { started: Instant::now(), limits, inner: Mutex::default() });
    let connections = TaskTracker::new();
    loop {
        let stream = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(err) => {
                    // Out of file handles (EMFILE/ENFILE) or a connection reset before it was
                    // accepted: wait a moment rather than spin, and keep serving.
                    tracing::warn!("cannot accept a connection: {err}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some(slot) = registry.admit() else {
            tracing::warn!(limit = limits.max_connections, "connection limit reached and every connection is busy");
            drop(stream);
            continue;
        };
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {err}");
        }
        connections.spawn(serve_connection(stream, slot, router.clone(), stop.clone()));
    }
    connections.close();
    connections.wait().await;
    Ok(())
}

/// One connection: hyper serves it while a watchdog enforces the timeouts, eviction and
/// shutdown.
async fn serve_connection(stream: TcpStream, slot: Slot, router: Router, stop: CancellationToken) {
    let state = slot.state.clone();
    let io = TokioIo::new(TrackedIo { stream, state: state.clone(), _slot: slot });
    let service = {
        let state = state.clone();
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let in_flight = InFlight::begin(&state);
            let router = router.clone();
            async move {
                let response = router.oneshot(request.map(Body::new)).await.unwrap_or_else(|never| match never {});
                if response.status() == hyper::StatusCode::SWITCHING_PROTOCOLS {
                    in_flight.state.upgraded.store(true, Ordering::Relaxed);
                }
                // The request counts as in flight until its response body is done (or dropped):
                // an SSE stream stays in flight for as long as it is open.
                Ok::<_, Infallible>(response.map(|body| Body::new(Guarded { body, _in_flight: in_flight })))
            }
        })
    };
    // Half-close: a client that sends its request and closes its side (a hook past its deadline)
    // still has that request carried out; without it hyper drops the handler on the EOF, and a
    // hook's PostToolUse could be lost half-way.
    let conn =
        hyper::server::conn::http1::Builder::new().half_close(true).serve_connection(io, service).with_upgrades();
    tokio::pin!(conn);
    let mut check = tokio::time::interval(state.check_period());
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut draining = false;
    loop {
        tokio::select! {
            served = conn.as_mut() => {
                if let Err(err) = served {
                    tracing::debug!("connection ended: {err}");
                }
                return;
            }
            _ = state.evict.cancelled() => {
                tracing::debug!("connection closed to make room for a new one");
                return;
            }
            _ = stop.cancelled(), if !draining => {
                conn.as_mut().graceful_shutdown();
                draining = true;
            }
            _ = check.tick() => if let Some(reason) = state.expired() {
                tracing::debug!("connection closed: {reason}");
                return;
            }
        }
    }
}

/// The open connections of one listener, oldest first.
struct Registry {
    started: Instant,
    limits: ConnectionLimits,
    inner: Mutex<RegistryInner>,
}

#[derive(Default)]
struct RegistryInner {
    next_id: u64,
    open: BTreeMap<u64, Arc<ConnState>>,
}

/// What the watchdog and the admission policy know about one connection.
struct ConnState {
    started: Instant,
    limits: ConnectionLimits,
    /// Requests whose response is not done yet.
    in_flight: AtomicUsize,
    /// Switched protocols (a WebSocket): long-lived by design.
    upgraded: AtomicBool,
    /// Milliseconds (since `started`) when the connection last had nothing in flight.
    idle_since_ms: AtomicU64,
    /// Milliseconds (since `started`, plus one; 0 = none) when the first byte of a request
    /// head arrived while nothing was in flight.
    head_started_ms: AtomicU64,
    /// Cancelled to close the connection for a newer one.
    evict: CancellationToken,
}

impl Registry {
    /// A slot for a new connection, evicting the oldest idle one when at the limit; `None`
    /// when every open connection is busy.
    fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.open.len() >= self.limits.max_connections {
            let victim = inner.open.iter().find(|(_, c)| c.evictable()).map(|(id, _)| *id)?;
            if let Some(evicted) = inner.open.remove(&victim) {
                evicted.evict.cancel();
            }
        }
        let id = inner.next_id;
        inner.next_id += 1;
        let state = Arc::new(ConnState {
            started: self.started,
            limits: self.limits,
            in_flight: AtomicUsize::new(0),
            upgraded: AtomicBool::new(false),
            idle_since_ms: AtomicU64::new(self.started.elapsed().as_millis() as u64),
            head_started_ms: AtomicU64::new(0),
            evict: CancellationToken::new(),
        });
        inner.open.insert(id, state.clone());
        Some(Slot { registry: self.clone(), id, state })
    }
}

impl ConnState {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn evictable(&self) -> bool {
        self.in_flight.load(Ordering::Relaxed) == 0 && !self.upgraded.load(Ordering::Relaxed)
    }

    fn check_period(&self) -> Duration {
        (self.limits.header_read_timeout.min(self.limits.idle_timeout) / 4)
            .clamp(Duration::from_millis(25), Duration::from_secs(1))
    }

    /// Why the connection should close now, if it should.
    fn expired(&self) -> Option<&'static str> {
        if !self.evictable() {
            return None;
        }
        let now = self.now_ms();
        match self.head_started_ms.load(Ordering::Relaxed) {
            0 => {
                let idle = now.saturating_sub(self.idle_since_ms.load(Ordering::Relaxed));
                (idle >= self.limits.idle_timeout.as_millis() as u64).then_some("idle timeout")
            }
            started => {
                let reading = now.saturating_sub(started - 1);
                (reading >= self.limits.header_read_timeout.as_millis() as u64).then_some("header read timeout")
            }
        }
    }
}

/// A connection's place in the registry; leaving it (the socket closed, also after an
/// upgrade) frees the place.
struct Slot {
    registry: Arc<Registry>,
    id: u64,
    state: Arc<ConnState>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.registry.inner.lock().unwrap_or_else(|p| p.into_inner()).open.remove(&self.id);
    }
}

/// One request from its head to the end of its response body.
struct InFlight {
    state: Arc<ConnState>,
}

impl InFlight {
    fn begin(state: &Arc<ConnState>) -> InFlight {
        state.in_flight.fetch_add(1, Ordering::Relaxed);
        state.head_started_ms.store(0, Ordering::Relaxed);
        InFlight { state: state.clone() }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.state.idle_since_ms.store(self.state.now_ms(), Ordering::Relaxed);
        self.state.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A response body that ends its request's time in flight when it is done or dropped.
struct Guarded {
    body: Body,
    _in_flight: InFlight,
}

impl http_body::Body for Guarded {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The socket, noting when a request head starts arriving on an idle connection. It holds
/// the connection's slot, so an upgraded WebSocket keeps counting until it closes.
struct TrackedIo {
    stream: TcpStream,
    state: Arc<ConnState>,
    _slot: Slot,
}

impl AsyncRead for TrackedIo {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before && self.state.upgraded.load(Ordering::Relaxed) {
            // On a WebSocket, acknowledge at once: a client that sends two small frames back
            // to back holds the second under its own Nagle algorithm until this ACK, which
            // Linux would otherwise delay by ~40 ms. Not sticky: renewed after every read.
            // (Plain HTTP requests arrive in one write from ordinary clients, and their reply
            // carries the ACK; an extra ACK packet per request cost 15 % of throughput.)
            #[cfg(target_os = "linux")]
            let _ = rustix::net::sockopt::set_tcp_quickack(&self.stream, true);
        }
        let state = &self.state;
        if buf.filled().len() > before
            && state.in_flight.load(Ordering::Relaxed) == 0
            && state.head_started_ms.load(Ordering::Relaxed) == 0
        {
            state.head_started_ms.store(state.now_ms() + 1, Ordering::Relaxed);
        }
        polled
    }
}

impl AsyncWrite for TrackedIo {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

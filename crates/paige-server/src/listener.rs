//! The accept loop: every TCP connection served by hyper's HTTP/1.1 (with upgrades, for
//! `/ws`), under three rules that keep slow or hostile clients from exhausting the server:
//!
//! - **Header-read timeout:** a request head must be complete within
//!   `PAIGE_HEADER_READ_TIMEOUT_MS` of its first byte (slowloris).
//! - **Idle timeout:** a connection with no request in flight is closed after
//!   `PAIGE_IDLE_TIMEOUT_MS` without one. Upgraded WebSockets and streaming responses (MCP's
//!   SSE) are in flight for as long as they live, so they are exempt.
//! - **Connection limit:** at most `PAIGE_MAX_CONNECTIONS` (M, default 512) at once. At the
//!   limit, the oldest connection with no request in flight makes room for the new one. So a
//!   flood of idle or half-sent connections cannot keep a real client, or `/health`, out.
//! - **WebSocket cap:** at most M/4 (128 by default) upgraded WebSockets at once; an upgrade
//!   beyond it is answered `503` with a JSON error before switching protocols. WebSockets live
//!   long by design and are never evicted, so without the cap idle authenticated sockets
//!   could pin every place (512 of them once starved `/hooks`, and `paige hook` let calls
//!   through); with it, at least 3M/4 places always stay for ordinary requests.
//! - **Reserve for hooks and MCP:** when all M places are busy (requests in flight: streams,
//!   slow uploads, long handlers) and none can be evicted, up to M/16 more connections (32 by
//!   default) are admitted from a reserve that serves only `POST /hooks/*`, `/mcp` and
//!   `/health`; anything else asked on a reserve connection gets `503` and the connection is
//!   closed. A reserve connection with nothing in flight makes room for a newer one, as above.
//!   So Claude Code's hooks and MCP calls are answered however the other places are used;
//!   only when the reserve too is all in flight is a new connection closed at once.
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
    /// M: ordinary places (`PAIGE_MAX_CONNECTIONS`, default 512, at least 256).
    pub max_connections: usize,
    /// Upgraded WebSockets at once: M/4 (128 by default). Beyond it an upgrade gets `503`.
    pub max_websockets: usize,
    /// Extra places for hooks, MCP and `/health` only, used when all M are busy: M/16 (32 by
    /// default).
    pub reserved_connections: usize,
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
}

impl From<&paige_core::Limits> for ConnectionLimits {
    fn from(limits: &paige_core::Limits) -> Self {
        let max_connections = limits.max_connections.max(1);
        ConnectionLimits {
            max_connections,
            max_websockets: (max_connections / 4).max(1),
            reserved_connections: (max_connections / 16).max(1),
            header_read_timeout: limits.header_read_timeout,
            idle_timeout: limits.idle_timeout,
        }
    }
}

/// What a reserve connection may ask: Claude Code's hooks and MCP calls, and liveness.
fn served_from_reserve(path: &str) -> bool {
    path.starts_with("/hooks/") || path == "/mcp" || path.starts_with("/mcp/") || path == "/health"
}

/// A request asking to switch to a WebSocket.
fn wants_websocket(request: &hyper::Request<Incoming>) -> bool {
    request
        .headers()
        .get(hyper::header::UPGRADE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.eq_ignore_ascii_case("websocket"))
}

/// `503` with the one error shape, closing the connection after it.
fn busy(message: &'static str) -> axum::response::Response {
    use axum::response::IntoResponse;
    let mut response =
        crate::error::HttpError::new(hyper::StatusCode::SERVICE_UNAVAILABLE, "busy", message).into_response();
    response.headers_mut().insert(hyper::header::CONNECTION, hyper::header::HeaderValue::from_static("close"));
    response.headers_mut().insert(hyper::header::RETRY_AFTER, hyper::header::HeaderValue::from_static("1"));
    response
}

/// Serves `router` on `listener` until `stop` is cancelled; then stops accepting, asks every
/// connection to finish its current request and close, and waits for them.
pub(crate) async fn run(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let registry = Arc::new(Registry {
        started: Instant::now(),
        limits,
        websockets: AtomicUsize::new(0),
        inner: Mutex::default(),
    });
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
            tracing::warn!(
                limit = limits.max_connections,
                reserve = limits.reserved_connections,
                "connection limit and its reserve reached and every connection is busy"
            );
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
    let registry = slot.registry.clone();
    let io = TokioIo::new(TrackedIo { stream, state: state.clone(), _slot: slot });
    let service = {
        let state = state.clone();
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let in_flight = InFlight::begin(&state);
            let router = router.clone();
            let registry = registry.clone();
            let (refused, claim) = if state.reserve && !served_from_reserve(request.uri().path()) {
                tracing::debug!(path = request.uri().path(), "refused on a reserve connection");
                (Some(busy("Paige is at its connection limit; only hooks and MCP are served now, try again")), None)
            } else if wants_websocket(&request) {
                match WebSocketClaim::take(&registry) {
                    Some(claim) => (None, Some(claim)),
                    None => {
                        tracing::debug!(limit = registry.limits.max_websockets, "refused a WebSocket over the cap");
                        (Some(busy("too many WebSockets are open; close one and try again")), None)
                    }
                }
            } else {
                (None, None)
            };
            async move {
                let response = match refused {
                    Some(refused) => refused,
                    None => router.oneshot(request.map(Body::new)).await.unwrap_or_else(|never| match never {}),
                };
                if response.status() == hyper::StatusCode::SWITCHING_PROTOCOLS {
                    // The place is the connection's now: its slot gives it back when it closes.
                    claim.unwrap_or_else(|| WebSocketClaim::force(&registry)).keep(&in_flight.state);
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
    /// Upgraded WebSockets, and upgrades under way (at most `limits.max_websockets`).
    websockets: AtomicUsize,
    inner: Mutex<RegistryInner>,
}

#[derive(Default)]
struct RegistryInner {
    next_id: u64,
    /// The ordinary places (at most `limits.max_connections`).
    open: BTreeMap<u64, Arc<ConnState>>,
    /// The reserve's (at most `limits.reserved_connections`): hooks, MCP and `/health` only.
    reserve: BTreeMap<u64, Arc<ConnState>>,
}

/// What the watchdog and the admission policy know about one connection.
struct ConnState {
    started: Instant,
    limits: ConnectionLimits,
    /// Requests whose response is not done yet.
    in_flight: AtomicUsize,
    /// Switched protocols (a WebSocket): long-lived by design. Holds one of the registry's
    /// WebSocket places until the connection closes.
    upgraded: AtomicBool,
    /// Admitted from the reserve: serves only hooks, MCP and `/health`.
    reserve: bool,
    /// Milliseconds (since `started`) when the connection last had nothing in flight.
    idle_since_ms: AtomicU64,
    /// Milliseconds (since `started`, plus one; 0 = none) when the first byte of a request
    /// head arrived while nothing was in flight.
    head_started_ms: AtomicU64,
    /// Cancelled to close the connection for a newer one.
    evict: CancellationToken,
}

impl Registry {
    /// A slot for a new connection: an ordinary place, evicting the oldest idle connection
    /// when all are taken; else a reserve place, likewise; `None` when every connection in
    /// both is busy.
    fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let reserve = if make_room(&mut inner.open, self.limits.max_connections) {
            false
        } else if make_room(&mut inner.reserve, self.limits.reserved_connections) {
            true
        } else {
            return None;
        };
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
            reserve,
        });
        if reserve {
            tracing::debug!("every ordinary place is busy; admitted a connection from the reserve");
            inner.reserve.insert(id, state.clone());
        } else {
            inner.open.insert(id, state.clone());
        }
        Some(Slot { registry: self.clone(), id, state })
    }
}

/// Whether `pool` has room for one more under `cap`, after evicting its oldest idle connection
/// if it had none.
fn make_room(pool: &mut BTreeMap<u64, Arc<ConnState>>, cap: usize) -> bool {
    if pool.len() < cap {
        return true;
    }
    let Some(victim) = pool.iter().find(|(_, c)| c.evictable()).map(|(id, _)| *id) else { return false };
    if let Some(evicted) = pool.remove(&victim) {
        evicted.evict.cancel();
    }
    true
}

/// One of the registry's WebSocket places, taken for an upgrade under way: given back when
/// dropped, unless [`WebSocketClaim::keep`] hands it to the upgraded connection.
struct WebSocketClaim {
    registry: Arc<Registry>,
}

impl WebSocketClaim {
    fn take(registry: &Arc<Registry>) -> Option<WebSocketClaim> {
        let cap = registry.limits.max_websockets;
        registry
            .websockets
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| (open < cap).then_some(open + 1))
            .ok()
            .map(|_| WebSocketClaim { registry: registry.clone() })
    }

    /// A place for an upgrade that did not ask for a WebSocket (none such route exists): taken
    /// even over the cap, so the count stays right when its connection closes.
    fn force(registry: &Arc<Registry>) -> WebSocketClaim {
        registry.websockets.fetch_add(1, Ordering::AcqRel);
        WebSocketClaim { registry: registry.clone() }
    }

    /// The upgrade happened: the connection holds the place until its slot is dropped.
    fn keep(self, state: &ConnState) {
        if state.upgraded.swap(true, Ordering::AcqRel) {
            return; // already holds one (cannot happen: a connection upgrades once)
        }
        std::mem::forget(self);
    }
}

impl Drop for WebSocketClaim {
    fn drop(&mut self) {
        self.registry.websockets.fetch_sub(1, Ordering::AcqRel);
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
        let mut inner = self.registry.inner.lock().unwrap_or_else(|p| p.into_inner());
        let pool = if self.state.reserve { &mut inner.reserve } else { &mut inner.open };
        pool.remove(&self.id);
        drop(inner);
        if self.state.upgraded.load(Ordering::Acquire) {
            self.registry.websockets.fetch_sub(1, Ordering::AcqRel);
        }
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

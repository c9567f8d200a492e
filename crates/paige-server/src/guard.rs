//! Who may talk to the server: loopback Host and Origin on every route (DNS-rebinding and
//! cross-site protection), and a per-launch bearer token on private routes — the UI token
//! on every one, the agent token only on the routes Claude Code needs ([`agent_may_use`]).

use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::error::HttpError;

/// Rejects with 403 a request whose `Host` is not a loopback name, or whose `Origin` is
/// present and not a loopback `http(s)` origin.
pub(crate) async fn loopback_only(request: Request, next: Next) -> Response {
    if let Err(reason) = check_loopback(request.headers()) {
        tracing::warn!(%reason, path = request.uri().path(), "rejected request");
        return HttpError::forbidden(reason).into_response();
    }
    next.run(request).await
}

/// Rejects with 401 a request without a token, given as `Authorization: Bearer <token>`
/// (the scheme in any case, RFC 7235) or — on `/ws` only, because a browser cannot set
/// headers on a WebSocket — as `?token=<token>`. Elsewhere a token in the URL, which leaks
/// into logs and history, is not accepted. The UI token opens every private route; the
/// agent token only those [`agent_may_use`] names, and anywhere else is refused with 403.
pub(crate) async fn require_token(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let from_header =
        request.headers().get(header::AUTHORIZATION).and_then(|value| value.to_str().ok()).and_then(bearer_token);
    let from_query = (request.uri().path() == "/ws")
        .then(|| request.uri().query())
        .flatten()
        .and_then(|q| q.split('&').find_map(|pair| pair.strip_prefix("token=")));
    let presented = from_header.or(from_query);
    let tokens = state.tokens();
    let matches = |kept: Option<&std::sync::Arc<str>>, token: &str| {
        kept.is_some_and(|kept| constant_time_eq(token.as_bytes(), kept.as_bytes()))
    };
    let (ui, agent, local) = match presented {
        // Every comparison runs, so the time taken says nothing about which matched.
        Some(token) => (
            matches(Some(&tokens.ui), token),
            matches(tokens.agent.as_ref(), token),
            matches(tokens.local.as_ref(), token),
        ),
        None => (false, false, false),
    };
    let (method, path) = (request.method(), request.uri().path());
    match presented {
        Some(_) if ui => next.run(request).await,
        Some(_) if agent && agent_may_use(method, path) => next.run(request).await,
        Some(_) if local && local_tools_may_use(method, path) => next.run(request).await,
        Some(_) if agent || local => {
            let reason = if agent {
                "the agent token may only post hook events, call MCP tools and launch Claude Code"
            } else {
                "the local tools' token may only start, show and end sessions and use memory"
            };
            tracing::warn!(reason, path, "rejected request");
            HttpError::forbidden(reason).into_response()
        }
        presented => {
            let path = request.uri().path();
            let agents = path == "/mcp" || path.starts_with("/mcp/") || path.starts_with("/hooks/");
            let reason = match presented {
                None => "missing bearer token",
                // Claude Code shows this: say how to get going again.
                Some(_) if agents => STALE_AGENT_TOKEN,
                Some(_) => {
                    "invalid bearer token: Paige's tokens were rotated, or this is another Paige's; open the `ui:` address Paige printed last"
                }
            };
            tracing::warn!(reason, path = request.uri().path(), "rejected request");
            let mut response = HttpError::unauthorized(reason).into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer realm=\"paige\""));
            response
        }
    }
}

/// Why an agent's call with an unknown token is refused, and how to recover.
pub(crate) const STALE_AGENT_TOKEN: &str = "invalid bearer token: this Paige does not know Claude Code's token (it was rotated with `paige token rotate`, or Claude Code was started for another Paige). Quit Claude Code and start it again with `paige claude` (in the app: close and reopen the terminal) — the session and its plan are kept.";

/// What the agent token opens: `POST /hooks/{event}` (Claude Code's hooks, through
/// `paige hook`), `/mcp` (its MCP client; every method, since Streamable HTTP uses GET and
/// DELETE too), and the three routes of its launcher, `paige claude`, which holds only this
/// token (issue 39: the run file names the UI token only where Claude Code cannot read it):
/// the kickoff (text Claude Code is given anyway), claiming Paige's deliveries to type, and
/// the relaunch into the view of the intent it selected. None reads a learner's file or
/// changes one. Not `/ws` (which saves files), not the rest of `/api/*`, not anything added
/// later.
fn agent_may_use(method: &axum::http::Method, path: &str) -> bool {
    use axum::http::Method;
    let hook = path.strip_prefix("/hooks/").is_some_and(|event| !event.is_empty() && !event.contains('/'));
    let launcher = matches!(
        (method, path),
        (&Method::GET, "/api/session/kickoff") | (&Method::POST, "/api/agent/claim" | "/api/agent/relaunch")
    );
    (hook && method == Method::POST) || path == "/mcp" || path.starts_with("/mcp/") || launcher
}

/// What the local tools' token opens: the routes `paige session` and `paige memory` call.
/// Where no OS layer hides the run file from Claude Code, the agent can read this token: so
/// not `/ws` (which saves files), not the token rotation (whose answer is the UI token), and
/// nothing added later.
fn local_tools_may_use(method: &axum::http::Method, path: &str) -> bool {
    use axum::http::Method;
    matches!(
        (method, path),
        (&Method::GET, "/api/session" | "/api/memory/stats")
            | (&Method::POST, "/api/session/start" | "/api/session/end" | "/api/memory/add" | "/api/memory/query")
    )
}

pub(crate) async fn not_found() -> HttpError {
    HttpError::not_found("no such route")
}

fn check_loopback(headers: &HeaderMap) -> Result<(), String> {
    let host =
        headers.get(header::HOST).ok_or("missing Host header")?.to_str().map_err(|_| "Host header is not text")?;
    if !is_loopback_host(strip_port(host)) {
        return Err(format!("Host {host:?} is not a loopback address"));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().map_err(|_| "Origin header is not text")?;
        let authority = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
        match authority {
            Some(authority) if !authority.contains('/') && is_loopback_host(strip_port(authority)) => {}
            _ => return Err(format!("Origin {origin:?} is not a loopback origin")),
        }
    }
    Ok(())
}

/// `host:port` → `host`; `[::1]:port` → `::1`.
fn strip_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

fn is_loopback_host(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host == "127.0.0.1" || host == "::1"
}

/// The credentials of an `Authorization: Bearer <token>` header; the scheme is matched
/// case-insensitively.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut map = HeaderMap::new();
        if let Some(host) = host {
            map.insert(header::HOST, host.parse().expect("header"));
        }
        if let Some(origin) = origin {
            map.insert(header::ORIGIN, origin.parse().expect("header"));
        }
        map
    }

    #[test]
    fn loopback_hosts_and_origins_pass() {
        for host in ["localhost", "localhost:3000", "LOCALHOST:1", "127.0.0.1:3000", "[::1]:3000", "[::1]"] {
            assert_eq!(check_loopback(&headers(Some(host), None)), Ok(()), "{host}");
        }
        for origin in ["http://localhost:5173", "https://127.0.0.1", "http://[::1]:3000"] {
            assert_eq!(check_loopback(&headers(Some("localhost"), Some(origin))), Ok(()), "{origin}");
        }
    }

    #[test]
    fn foreign_hosts_and_origins_are_refused() {
        for host in ["evil.com", "localhost.evil.com", "127.0.0.2:3000", "0.0.0.0:3000", "[::2]:1"] {
            assert!(check_loopback(&headers(Some(host), None)).is_err(), "{host}");
        }
        for origin in [
            "http://evil.com",
            "null",
            "file://",
            "http://localhost.evil.com",
            "http://localhost:3000/x",
            "ws://localhost",
        ] {
            assert!(check_loopback(&headers(Some("localhost"), Some(origin))).is_err(), "{origin}");
        }
        assert_eq!(check_loopback(&headers(None, None)), Err("missing Host header".into()));
    }

    #[test]
    fn the_bearer_scheme_is_matched_in_any_case() {
        for value in ["Bearer abc", "bearer abc", "BEARER  abc ", " bEaReR abc"] {
            assert_eq!(bearer_token(value), Some("abc"), "{value:?}");
        }
        for value in ["Basic abc", "Bearerabc", "abc", "Token abc"] {
            assert_eq!(bearer_token(value), None, "{value:?}");
        }
    }

    #[test]
    fn the_agent_token_opens_only_hooks_and_mcp() {
        use axum::http::Method;
        for (method, path) in [(Method::POST, "/hooks/pre-tool-use"), (Method::POST, "/mcp"), (Method::GET, "/mcp")] {
            assert!(agent_may_use(&method, path), "{method} {path}");
        }
        for (method, path) in [
            (Method::GET, "/ws"),
            (Method::GET, "/api/session"),
            (Method::POST, "/api/session/start"),
            (Method::POST, "/api/memory/add"),
            (Method::GET, "/hooks/stop"),
            (Method::POST, "/hooks/"),
            (Method::POST, "/hooks/a/b"),
            (Method::POST, "/mcpx"),
            (Method::GET, "/"),
        ] {
            assert!(!agent_may_use(&method, path), "{method} {path}");
        }
    }

    #[test]
    fn token_comparison_needs_an_exact_match() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::Duration;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::{TOKEN, fixture, initialize_body, post_mcp, running, stateless_tools_list_body};

async fn oneshot(request: Request<Body>) -> (StatusCode, axum::http::HeaderMap, Value) {
    let fixture = fixture();
    fixture.clock.advance(Duration::milliseconds(90_500));
    let response = paige_server::app(fixture.core.clone(), TOKEN).router.oneshot(request).await.expect("response");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
    (status, headers, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

fn get(path: &str, host: &str) -> Request<Body> {
    Request::get(path).header(header::HOST, host).body(Body::empty()).expect("request")
}

#[tokio::test]
async fn health_is_open_and_reports_uptime_in_seconds() {
    let (status, _, body) = oneshot(get("/health", "127.0.0.1:3000")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({"status": "ok", "uptime": 90.5}));
}

#[tokio::test]
async fn foreign_host_is_forbidden_on_every_route() {
    for path in ["/health", "/mcp", "/nowhere"] {
        let (status, _, body) = oneshot(get(path, "attacker.example:3000")).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}");
        assert_eq!(body["error"], r#"Host "attacker.example:3000" is not a loopback address"#);
    }
}

#[tokio::test]
async fn foreign_origin_is_forbidden_even_with_the_token() {
    let request = Request::get("/health")
        .header(header::HOST, "localhost:3000")
        .header(header::ORIGIN, "https://attacker.example")
        .body(Body::empty())
        .expect("request");
    let (status, _, _) = oneshot(request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn unknown_route_is_a_json_404() {
    let (status, _, body) = oneshot(get("/nowhere", "localhost")).await;
    assert_eq!((status, body), (StatusCode::NOT_FOUND, json!({"error": "no such route", "code": "not_found"})));
}

#[tokio::test]
async fn mcp_without_the_right_token_is_unauthorized_in_both_eras() {
    let server = running().await;
    for body in [initialize_body(), stateless_tools_list_body()] {
        let missing = post_mcp(&server.base, &body, &[]).await;
        assert_eq!(missing.status(), 401);
        assert_eq!(missing.headers()[header::WWW_AUTHENTICATE], r#"Bearer realm="paige""#);
        let wrong = post_mcp(&server.base, &body, &[("Authorization", "Bearer not-the-token")]).await;
        assert_eq!(wrong.status(), 401);
        let not_bearer = post_mcp(&server.base, &body, &[("Authorization", TOKEN)]).await;
        assert_eq!(not_bearer.status(), 401);
    }
    assert_eq!(server.sessions.count().await, 0, "no session was created");
}

#[tokio::test]
async fn mcp_from_a_foreign_origin_is_forbidden_in_both_eras() {
    let server = running().await;
    let auth = format!("Bearer {TOKEN}");
    for body in [initialize_body(), stateless_tools_list_body()] {
        let response =
            post_mcp(&server.base, &body, &[("Authorization", &auth), ("Origin", "http://attacker.example")]).await;
        assert_eq!(response.status(), 403);
        let rebinding = post_mcp(&server.base, &body, &[("Authorization", &auth), ("Host", "attacker.example")]).await;
        assert_eq!(rebinding.status(), 403);
    }
}

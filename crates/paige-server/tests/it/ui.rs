use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use tower::ServiceExt;

use crate::{TOKEN, fixture};

/// A fake Vite build: index.html and one asset.
fn dist() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("dist dir");
    std::fs::write(dir.path().join("index.html"), "<!doctype html><title>Paige</title>").expect("index");
    std::fs::create_dir(dir.path().join("assets")).expect("assets dir");
    std::fs::write(dir.path().join("assets/index-abc.js"), "console.log(1)").expect("asset");
    dir
}

async fn get(dist: &std::path::Path, path: &str, host: &str) -> (StatusCode, String, String) {
    let fixture = fixture();
    let router = paige_server::app(fixture.core.clone(), TOKEN).with_ui(dist).router;
    let request = Request::get(path).header(header::HOST, host).body(Body::empty()).expect("request");
    let response = router.oneshot(request).await.expect("response");
    let status = response.status();
    let kind =
        response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
    (status, kind, String::from_utf8_lossy(&bytes).into_owned())
}

#[tokio::test]
async fn with_ui_serves_index_html_at_the_root_without_a_token() {
    let dist = dist();
    let (status, kind, body) = get(dist.path(), "/", "127.0.0.1:3000").await;
    assert_eq!(status, StatusCode::OK);
    assert!(kind.starts_with("text/html"), "{kind}");
    assert!(body.contains("<title>Paige</title>"));
}

#[tokio::test]
async fn with_ui_serves_built_assets_with_their_type() {
    let dist = dist();
    let (status, kind, body) = get(dist.path(), "/assets/index-abc.js", "localhost").await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "console.log(1)"));
    assert!(kind.contains("javascript"), "{kind}");
}

#[tokio::test]
async fn ui_routes_keep_the_loopback_guard() {
    let dist = dist();
    for path in ["/", "/assets/index-abc.js"] {
        let (status, _, _) = get(dist.path(), path, "attacker.example").await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}");
    }
}

#[tokio::test]
async fn ui_does_not_shadow_the_api_or_the_404() {
    let dist = dist();
    let (status, _, _) = get(dist.path(), "/health", "localhost").await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = get(dist.path(), "/nowhere", "localhost").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = get(dist.path(), "/assets/missing.js", "localhost").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

//! The bundled web UI (`ui/dist`, built by Vite) served from the same origin as `/ws`, so a
//! plain browser can use Paige without the desktop window. Open routes (the page holds no
//! secret; it reads the token from its own URL), still behind the loopback guard.

use std::path::{Path, PathBuf};

use axum::Router;
use tower_http::services::{ServeDir, ServeFile};

use crate::{Server, guard};

/// Where `paige serve` looks for the built UI when no directory is given: `ui/dist` in the
/// working directory, then the one beside this crate's source (a development checkout).
pub fn default_ui_dirs() -> Vec<PathBuf> {
    vec![PathBuf::from("ui/dist"), Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/dist")]
}

impl Server {
    /// Adds `GET /` (the UI's `index.html`) and `/assets/*` from `dist`, a Vite build.
    pub fn with_ui(mut self, dist: &Path) -> Server {
        let ui = Router::new()
            .route_service("/", ServeFile::new(dist.join("index.html")))
            .nest_service("/assets", ServeDir::new(dist.join("assets")))
            .layer(axum::middleware::from_fn(guard::loopback_only));
        self.router = self.router.merge(ui);
        self
    }
}

/// True when `dir` holds a built UI.
pub fn is_ui_build(dir: &Path) -> bool {
    dir.join("index.html").is_file()
}

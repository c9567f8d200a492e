//! Links out of the app (learning materials, issues): the command `open_external(url)` opens
//! an `https:` URL in the system browser with `tauri-plugin-opener`'s `open_url`, Rust side
//! only. The webview gets no capability for it: the plugin is not registered, so its JS API
//! does not exist; this command, which refuses every other scheme, is the only way out.

use std::sync::Arc;

use tauri::Url;

use crate::{CommandError, CommandErrorCode};

/// The longest URL the command takes (a link a model found, not a document).
pub const MAX_URL_LEN: usize = 4096;

/// `url` if it is an absolute `https:` URL with a host; otherwise why not, as the
/// `url_refused` error the command rejects with. `http:`, `file:`, `javascript:`, `data:`
/// and relative links are refused.
pub fn https_url(url: &str) -> Result<Url, CommandError> {
    let refuse = |why: String| CommandError::new(CommandErrorCode::UrlRefused, why);
    if url.len() > MAX_URL_LEN {
        return Err(refuse(format!("the link is {} bytes, over the {MAX_URL_LEN} a link may have", url.len())));
    }
    let parsed = Url::parse(url.trim()).map_err(|err| refuse(format!("not an absolute URL ({err}): {url:?}")))?;
    if parsed.scheme() != "https" {
        return Err(refuse(format!("only https: links open in the browser, not {}: links", parsed.scheme())));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(refuse(format!("the link names no host: {url:?}")));
    }
    Ok(parsed)
}

type OpenFn = dyn Fn(&Url) -> Result<(), String> + Send + Sync;

/// What opens a checked URL: the system browser in the app (`ExternalOpener::system`), a
/// recorder in tests. Managed state; without it the command fails rather than opens.
#[derive(Clone)]
pub struct ExternalOpener(Arc<OpenFn>);

impl ExternalOpener {
    pub fn new(open: impl Fn(&Url) -> Result<(), String> + Send + Sync + 'static) -> ExternalOpener {
        ExternalOpener(Arc::new(open))
    }

    /// The user's default browser (`xdg-open` and the like, detached).
    pub fn system() -> ExternalOpener {
        ExternalOpener::new(|url| {
            tauri_plugin_opener::open_url(url.as_str(), None::<&str>).map_err(|err| err.to_string())
        })
    }

    /// Checks `url` (`https_url`), then opens it.
    pub fn open(&self, url: &str) -> Result<(), CommandError> {
        let url = https_url(url)?;
        (self.0)(&url).map_err(|err| CommandError::new(CommandErrorCode::Opener, format!("cannot open {url}: {err}")))
    }
}

/// Opens an `https:` link in the system browser; anything else is refused (`url_refused`).
#[tauri::command]
pub(crate) async fn open_external(url: String, opener: tauri::State<'_, ExternalOpener>) -> Result<(), CommandError> {
    let opener = opener.inner().clone();
    tauri::async_runtime::spawn_blocking(move || opener.open(&url))
        .await
        .map_err(|err| CommandError::new(CommandErrorCode::Internal, format!("the link was not opened: {err}")))?
}

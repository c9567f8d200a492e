use std::io::Write;

use super::{FileError, ProjectPath};

/// Writes `content` atomically: a temp file beside the target, synced, then renamed over it.
/// Creates missing parent directories. Never reachable from MCP.
pub fn write_file(path: &ProjectPath, content: &str) -> Result<(), FileError> {
    let err = |source| FileError::Write { path: path.rel().to_owned(), source };
    let dir = path.abs().parent().ok_or_else(|| err(std::io::Error::other("no parent directory")))?;
    std::fs::create_dir_all(dir).map_err(err)?;
    let mut tmp = tempfile::Builder::new().prefix(".paige-save-").tempfile_in(dir).map_err(err)?;
    tmp.write_all(content.as_bytes()).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    if let Ok(meta) = std::fs::metadata(path.abs()) {
        // Keep the file's permissions (an executable script stays executable).
        let _ = tmp.as_file().set_permissions(meta.permissions());
    }
    tmp.persist(path.abs()).map_err(|e| err(e.error))?;
    Ok(())
}

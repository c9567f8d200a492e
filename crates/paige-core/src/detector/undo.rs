//! Putting a file back, and `paige restore`: what a file holds is always kept in the version
//! store before Paige writes over it or moves it out, and nothing that cannot be kept is
//! written over or removed.

use super::manifest::Meta;
use super::{ChangeKind, DetectorError, Known, Store};
use crate::db::VersionKind;
use crate::files::{FileError, ProjectPath};

/// What an undo did: the file as the baseline knows it now (`None`: moved out), and the
/// version that keeps what the call had left.
pub(super) struct Undone {
    pub(super) known: Option<Known>,
    pub(super) left_sha: Option<String>,
}

/// Keeps what `file` holds now as a `kind` version; returns its hash (`None` when there is no
/// file). Content that cannot be read or kept is an error: the caller must then not write
/// over the file or remove it.
fn keep_current(
    db: &crate::db::Db,
    store: &Store,
    root: &std::path::Path,
    file: &ProjectPath,
    kind: VersionKind,
) -> Result<Option<String>, DetectorError> {
    match crate::files::read_bytes(file) {
        Ok(bytes) => {
            let mode = std::fs::symlink_metadata(file.abs()).map(|m| Meta::of(&m).mode).unwrap_or(0o644);
            Ok(Some(store.keep(db, root, file.rel(), &bytes, mode, kind)?))
        }
        Err(FileError::NotFound(_)) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

impl super::Detector {
    /// Puts the file back as `target` had it — the baseline, or the learner's last save
    /// through Paige — or, for a file that was not there, moves it into the version store.
    /// What the call left is kept first.
    pub(super) fn undo(&self, path: &str, target: Option<&Known>, change: ChangeKind) -> Result<Undone, DetectorError> {
        let file = self.ctx.root().resolve(path)?;
        let store = &self.store;
        let root = self.ctx.root().path();
        if change == ChangeKind::ModeChanged
            && let Some(known) = target
        {
            // Permissions only: the content stays, nothing to keep.
            crate::files::set_mode(&file, known.meta.mode)?;
            let meta = std::fs::symlink_metadata(file.abs()).map(|m| Meta::of(&m)).unwrap_or(known.meta);
            return Ok(Undone { known: Some(Known { meta, content: known.content.clone() }), left_sha: None });
        }
        // A "deleted" file may exist but be ignored now (the call changed .gitignore): kept too.
        let left_sha = keep_current(self.ctx.db(), store, root, &file, VersionKind::Replaced)?;
        let Some(known) = target else {
            // A new file: its content is safely kept, so it may leave the project.
            crate::files::remove_file(&file)?;
            return Ok(Undone { known: None, left_sha });
        };
        let bytes = self.content_bytes(path, &known.content)?;
        crate::files::write_bytes(&file, &bytes, Some(known.meta.mode))?;
        let meta = std::fs::symlink_metadata(file.abs()).map(|m| Meta::of(&m)).unwrap_or(known.meta);
        Ok(Undone { known: Some(Known { meta, content: known.content.clone() }), left_sha })
    }

    /// Brings a kept version back into its file (`paige restore <id>`); what the file holds
    /// now is kept first, so a restore loses nothing either. Returns the file's path.
    pub fn restore_version(&self, id: i64) -> Result<String, DetectorError> {
        restore_version(self.ctx.db(), &self.store, self.ctx.root(), id)
    }
}

/// [`super::Detector::restore_version`] without a running core: the CLI's way. A file that is gone (a
/// new file Paige moved into the store) is written anew, its folders with it.
pub fn restore_version(
    db: &crate::db::Db,
    store: &Store,
    root: &crate::files::ProjectRoot,
    id: i64,
) -> Result<String, DetectorError> {
    let (project, version) = db.file_version(id)?.ok_or(DetectorError::UnknownVersion(id))?;
    if std::path::Path::new(&project) != root.path() {
        return Err(DetectorError::OtherProject { id, project: project.into() });
    }
    let file = root.resolve(&version.path)?;
    keep_current(db, store, root.path(), &file, VersionKind::Replaced)?;
    let bytes = store.get(&version.sha256)?;
    crate::files::write_bytes(&file, &bytes, Some(version.mode))?;
    store.evict(db)?;
    Ok(version.path)
}

//! The record's signing key: `DATA_DIR/record-key`, the 32-byte Ed25519 secret as 64
//! lowercase hex digits and a newline, readable by its owner only (0600).
//!
//! It is created on first use from the OS's random source, written to a private temp file
//! (`O_EXCL`, mode 0600 from the start, never `chmod`ed) and hard-linked into place, so two
//! processes creating it at once agree on one key and no reader sees it half-written.
//! Loading refuses a key file anyone else may read (group or other permission bits), one
//! that is not a regular file (a symlink, a FIFO, a directory) and one of the wrong length —
//! each with what to do.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};

use super::RecordError;
use super::verify::parse_key;

/// The key file's name in `DATA_DIR`.
pub const KEY_FILE: &str = "record-key";

/// The key in `data_dir`, created when missing (the directory too, 0700).
pub fn load_or_create_key(data_dir: &Path) -> Result<SigningKey, RecordError> {
    if let Some(key) = load_key(data_dir)? {
        return Ok(key);
    }
    let path = data_dir.join(KEY_FILE);
    let failed = |what: &str, err: std::io::Error| key_error(&path, format!("cannot {what}: {err}"));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(data_dir)
        .map_err(|err| failed(&format!("create {}", data_dir.display()), err))?;
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|err| key_error(&path, format!("no random bytes from the OS: {err}")))?;
    let mut text = [0u8; 65];
    let encoded = hex::encode_to_slice(secret, &mut text[..64]);
    secret.fill(0);
    std::hint::black_box(&secret);
    encoded.map_err(|err| key_error(&path, format!("cannot encode the new key: {err}")))?;
    text[64] = b'\n';
    let tmp = data_dir.join(format!(".{KEY_FILE}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let written = write_new(&tmp, &text);
    // The hex text held the secret: not left behind on the stack.
    text.fill(0);
    std::hint::black_box(&text);
    if let Err(err) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(failed(&format!("write {}", tmp.display()), err));
    }
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => sync_dir(data_dir),
        // Another process made it first: use theirs.
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(failed("put the new key in place", err)),
    }
    load_key(data_dir)?.ok_or_else(|| key_error(&path, "vanished right after it was created".into()))
}

/// The key in `data_dir`; `None` when there is none yet.
pub fn load_key(data_dir: &Path) -> Result<Option<SigningKey>, RecordError> {
    let path = data_dir.join(KEY_FILE);
    let file = std::fs::OpenOptions::new()
        .read(true)
        // Not through a symlink; a FIFO must not block the open.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path);
    let file = match file {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
            return Err(key_error(&path, format!("is a symbolic link; {}", not_regular(&path))));
        }
        Err(err) => return Err(key_error(&path, format!("cannot open it: {err}"))),
    };
    let meta = file.metadata().map_err(|err| key_error(&path, format!("cannot read its metadata: {err}")))?;
    if !meta.is_file() {
        return Err(key_error(&path, format!("is not a regular file; {}", not_regular(&path))));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(key_error(
            &path,
            format!(
                "has mode {mode:04o}: other users may read it, and a key others can read proves nothing. \
                 If nobody else could have read it, run `chmod 600 {}`; otherwise delete it, and Paige makes a \
                 new key on the next export (give the new public key to whoever pinned the old one)",
                path.display()
            ),
        ));
    }
    let mut text = Vec::with_capacity(72);
    file.take(1024).read_to_end(&mut text).map_err(|err| key_error(&path, format!("cannot read it: {err}")))?;
    let key = parse_secret(&text);
    text.fill(0);
    std::hint::black_box(&text);
    key.map(Some).map_err(|problem| {
        key_error(
            &path,
            format!(
                "{problem}; it must hold the 32-byte secret as 64 hex digits. Restore it from a backup, or delete it \
                 and Paige makes a new key on the next export"
            ),
        )
    })
}

/// An Ed25519 public key given as 64 hex digits (`paige record verify --key`).
pub fn parse_public_key(text: &str) -> Result<VerifyingKey, RecordError> {
    parse_key(text).map_err(|problem| RecordError::PublicKey(format!("{text:?} {problem}")))
}

fn parse_secret(text: &[u8]) -> Result<SigningKey, String> {
    let trimmed = text.trim_ascii();
    if trimmed.len() != 64 {
        return Err(format!("it holds {} characters, not 64", trimmed.len()));
    }
    let mut secret = [0u8; 32];
    hex::decode_to_slice(trimmed, &mut secret).map_err(|_| "it is not hex".to_owned())?;
    let key = SigningKey::from_bytes(&secret);
    secret.fill(0);
    std::hint::black_box(&secret);
    Ok(key)
}

/// Creates `path` (never an existing file, never through a symlink) with mode 0600 from the
/// start, writes `bytes` and syncs them.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Makes the new directory entry durable; best effort (a crash only loses a key never used).
fn sync_dir(dir: &Path) {
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
}

fn not_regular(path: &Path) -> String {
    format!("the key must be a plain file. Move {} aside; Paige makes a new key on the next export", path.display())
}

fn key_error(path: &Path, problem: String) -> RecordError {
    RecordError::Key { path: PathBuf::from(path), problem }
}

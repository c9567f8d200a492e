use serde::Serialize;

use super::ProjectPath;
use super::language::{binary_by_extension, language_for};

/// A file as the editor sees it. Binary files carry no content.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileContent {
    pub path: String,
    pub content: String,
    pub language: String,
    pub line_count: usize,
    pub binary: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("file not found: {0}")]
    NotFound(String),
    #[error("{0} is a directory, not a file")]
    IsDirectory(String),
    #[error("{path} is {kind}, not a regular file; Paige opens only regular files")]
    NotRegular { path: String, kind: &'static str },
    #[error("{path} is too large to open in Paige ({size} bytes; the limit is {limit} bytes)")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("{0} changed while Paige was using it (a symlink appeared on its path); try again")]
    Changed(String),
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("{0} is a binary file")]
    Binary(String),
}

/// How many leading bytes are inspected to decide whether an unknown file is binary.
const SNIFF_LEN: usize = 8192;

/// What identifies one state of a file on disk: size and modification time.
pub(crate) type DiskStamp = (u64, i64, i64);

/// Opens a file for reading beneath the project root: never through a symlink, never
/// blocking (a FIFO opens at once and is then refused), and only if it is a regular file.
pub(crate) fn open_regular(path: &ProjectPath) -> Result<(std::fs::File, rustix::fs::Stat), FileError> {
    use rustix::fs::{FileType, Mode, OFlags};
    let rel = path.rel().to_owned();
    let fd = path
        .handle()
        .dir
        .open_at(path.rel(), OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty())
        .map_err(|errno| open_error(&rel, errno))?;
    let stat = rustix::fs::fstat(&fd).map_err(|errno| FileError::Read { path: rel.clone(), source: errno.into() })?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => Ok((std::fs::File::from(fd), stat)),
        FileType::Directory => Err(FileError::IsDirectory(rel)),
        other => Err(FileError::NotRegular { path: rel, kind: kind_name(other) }),
    }
}

/// A regular file opened for reading (see [`open_regular`]): its stamp is known before any
/// byte is read, so a cache can be checked and the file read with one open.
pub(crate) struct Opened {
    file: std::fs::File,
    stat: rustix::fs::Stat,
}

impl Opened {
    pub(crate) fn open(path: &ProjectPath) -> Result<Opened, FileError> {
        open_regular(path).map(|(file, stat)| Opened { file, stat })
    }

    pub(crate) fn stamp(&self) -> DiskStamp {
        stamp(&self.stat)
    }

    /// The whole file, up to the root's size cap.
    pub(crate) fn read_all(self, path: &ProjectPath) -> Result<Vec<u8>, FileError> {
        use std::io::Read;
        let limit = path.handle().max_file_bytes;
        let size = self.stat.st_size as u64;
        let too_large = |size| FileError::TooLarge { path: path.rel().to_owned(), size, limit };
        if size > limit {
            return Err(too_large(size));
        }
        let mut bytes = Vec::with_capacity(size as usize);
        self.file
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| FileError::Read { path: path.rel().to_owned(), source })?;
        if bytes.len() as u64 > limit {
            // It grew while being read.
            return Err(too_large(bytes.len() as u64));
        }
        Ok(bytes)
    }
}

/// The SHA-256 of a regular file of any size, read in 1 MiB pieces (a file past the size
/// cap is hashed, never held whole).
pub(crate) fn sha256_streaming(path: &ProjectPath) -> Result<String, FileError> {
    use sha2::Digest;
    use std::io::Read;
    let mut file = Opened::open(path)?.file;
    let mut hasher = sha2::Sha256::new();
    let mut piece = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut piece) {
            Ok(0) => break,
            Ok(n) => hasher.update(&piece[..n]),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => return Err(FileError::Read { path: path.rel().to_owned(), source }),
        }
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Reads a whole regular file, up to the root's size cap.
pub(crate) fn read_bytes(path: &ProjectPath) -> Result<Vec<u8>, FileError> {
    Opened::open(path)?.read_all(path)
}

/// The file's current size and mtime (for caches), without reading it; `None` when it is
/// missing or not a regular file.
pub(crate) fn disk_stamp(path: &ProjectPath) -> Option<DiskStamp> {
    Opened::open(path).ok().map(|opened| opened.stamp())
}

// The fields' types differ between platforms; on some the casts are no-ops.
#[allow(clippy::unnecessary_cast)]
fn stamp(stat: &rustix::fs::Stat) -> DiskStamp {
    (stat.st_size as u64, stat.st_mtime as i64, stat.st_mtime_nsec as i64)
}

fn open_error(rel: &str, errno: rustix::io::Errno) -> FileError {
    use rustix::io::Errno;
    match errno {
        Errno::NOENT | Errno::NOTDIR => FileError::NotFound(rel.to_owned()),
        Errno::ISDIR => FileError::IsDirectory(rel.to_owned()),
        // A symlink where the checked path had none, or a lookup that left the root.
        Errno::LOOP | Errno::XDEV => FileError::Changed(rel.to_owned()),
        // open(2) says ENXIO for a socket, and for a device without a driver.
        Errno::NXIO => FileError::NotRegular { path: rel.to_owned(), kind: "a socket or device" },
        other => FileError::Read { path: rel.to_owned(), source: other.into() },
    }
}

pub(crate) fn kind_name(kind: rustix::fs::FileType) -> &'static str {
    use rustix::fs::FileType;
    match kind {
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Symlink => "a symlink",
        FileType::Directory => "a directory",
        _ => "a special file",
    }
}

/// Reads a file: content, language id, line count; binary files are flagged, not returned.
pub fn read_file(path: &ProjectPath) -> Result<FileContent, FileError> {
    let bytes = read_bytes(path)?;
    let language = language_for(path.abs()).to_owned();
    let text = match binary_by_extension(path.abs()) {
        Some(true) => None,
        _ if sniff_binary(&bytes) => None,
        _ => String::from_utf8(bytes).ok(),
    };
    Ok(match text {
        Some(content) => FileContent {
            path: path.rel().to_owned(),
            line_count: line_count(&content),
            content,
            language,
            binary: false,
        },
        None => {
            FileContent { path: path.rel().to_owned(), content: String::new(), language, line_count: 0, binary: true }
        }
    })
}

/// Content sniffing: a NUL byte or invalid UTF-8 in the first 8 KiB means binary.
pub fn sniff_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(SNIFF_LEN)];
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        // An incomplete character at the end is text only if the sniff cut it off.
        Err(err) => err.error_len().is_some() || head.len() == bytes.len(),
    }
}

/// Whether the editor may keep a buffer for `path`: a text file, or one not created yet.
/// Binary (by extension, else by a sniff of its content) and special files are refused.
pub(crate) fn check_bufferable(path: &ProjectPath) -> Result<(), FileError> {
    use std::io::Read;
    if binary_by_extension(path.abs()) == Some(true) {
        return Err(FileError::Binary(path.rel().to_owned()));
    }
    let (file, _) = match open_regular(path) {
        Ok(opened) => opened,
        Err(FileError::NotFound(_)) => return Ok(()),
        Err(err) => return Err(err),
    };
    if binary_by_extension(path.abs()) == Some(false) {
        return Ok(());
    }
    let mut head = Vec::with_capacity(SNIFF_LEN);
    file.take(SNIFF_LEN as u64)
        .read_to_end(&mut head)
        .map_err(|source| FileError::Read { path: path.rel().to_owned(), source })?;
    if sniff_binary(&head) { Err(FileError::Binary(path.rel().to_owned())) } else { Ok(()) }
}

fn line_count(content: &str) -> usize {
    if content.is_empty() { 0 } else { content.lines().count() }
}

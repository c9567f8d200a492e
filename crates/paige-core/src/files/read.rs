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
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("{0} is a binary file")]
    Binary(String),
}

/// How many leading bytes are inspected to decide whether an unknown file is binary.
const SNIFF_LEN: usize = 8192;

/// Reads a file: content, language id, line count; binary files are flagged, not returned.
pub fn read_file(path: &ProjectPath) -> Result<FileContent, FileError> {
    let bytes = std::fs::read(path.abs()).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => FileError::NotFound(path.rel().to_owned()),
        std::io::ErrorKind::IsADirectory => FileError::IsDirectory(path.rel().to_owned()),
        _ => FileError::Read { path: path.rel().to_owned(), source },
    })?;
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

/// Whether a path is binary by extension, or else by a sniff of its current content on disk.
pub(crate) fn is_binary_path(path: &ProjectPath) -> bool {
    match binary_by_extension(path.abs()) {
        Some(known) => known,
        None => {
            use std::io::Read;
            let mut head = Vec::with_capacity(SNIFF_LEN);
            match std::fs::File::open(path.abs()) {
                Ok(file) => file.take(SNIFF_LEN as u64).read_to_end(&mut head).is_ok() && sniff_binary(&head),
                Err(_) => false,
            }
        }
    }
}

fn line_count(content: &str) -> usize {
    if content.is_empty() { 0 } else { content.lines().count() }
}

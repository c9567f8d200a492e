//! Monaco language ids by file extension, and which extensions are binary.

use std::path::Path;

/// The editor language for a file, from its extension (or well-known name); `plaintext` if unknown.
pub fn language_for(path: &Path) -> &'static str {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    match name {
        "Dockerfile" => return "dockerfile",
        "Makefile" | "makefile" => return "makefile",
        _ => {}
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    match ext.as_str() {
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "json" | "jsonc" => "json",
        "rs" => "rust",
        "py" | "pyi" => "python",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        "cs" => "csharp",
        "rb" => "ruby",
        "php" => "php",
        "swift" => "swift",
        "sh" | "bash" | "zsh" => "shell",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "less" => "less",
        "md" | "markdown" => "markdown",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        "xml" | "svg" => "xml",
        "sql" => "sql",
        "vue" => "vue",
        "svelte" => "svelte",
        "lua" => "lua",
        "dart" => "dart",
        "ex" | "exs" => "elixir",
        "hs" => "haskell",
        "scala" => "scala",
        "r" => "r",
        _ => "plaintext",
    }
}

/// Extensions that are always binary, whatever their content.
pub(crate) fn binary_by_extension(path: &Path) -> Option<bool> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let binary = matches!(
        ext.as_str(),
        "png"
            | "jpg"
            | "jpeg"
            | "gif"
            | "bmp"
            | "ico"
            | "webp"
            | "tiff"
            | "avif"
            | "heic"
            | "pdf"
            | "zip"
            | "gz"
            | "tgz"
            | "bz2"
            | "xz"
            | "zst"
            | "7z"
            | "rar"
            | "tar"
            | "jar"
            | "war"
            | "exe"
            | "dll"
            | "so"
            | "dylib"
            | "a"
            | "o"
            | "obj"
            | "lib"
            | "class"
            | "pyc"
            | "wasm"
            | "bin"
            | "woff"
            | "woff2"
            | "ttf"
            | "otf"
            | "eot"
            | "mp3"
            | "mp4"
            | "wav"
            | "ogg"
            | "flac"
            | "mov"
            | "avi"
            | "mkv"
            | "webm"
            | "sqlite"
            | "db"
            | "psd"
            | "xlsx"
            | "docx"
            | "pptx"
    );
    if binary {
        return Some(true);
    }
    (language_for(path) != "plaintext" || matches!(ext.as_str(), "txt" | "csv" | "log" | "env" | "lock"))
        .then_some(false)
}

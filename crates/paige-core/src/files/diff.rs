use std::time::Duration;

use similar::TextDiff;

/// How long the diff algorithm may search for the smallest diff; past it, a correct but
/// longer diff is produced, so a huge buffer never stalls a caller.
const DIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// A unified diff (3 lines of context) from `saved` to `current`, with `a/` and `b/` headers;
/// empty when they are equal.
pub fn unified_diff(rel_path: &str, saved: &str, current: &str) -> String {
    if saved == current {
        return String::new();
    }
    TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(saved, current)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{rel_path}"), &format!("b/{rel_path}"))
        .to_string()
}

use similar::TextDiff;

/// A unified diff (3 lines of context) from `saved` to `current`, with `a/` and `b/` headers;
/// empty when they are equal.
pub fn unified_diff(rel_path: &str, saved: &str, current: &str) -> String {
    if saved == current {
        return String::new();
    }
    TextDiff::from_lines(saved, current)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{rel_path}"), &format!("b/{rel_path}"))
        .to_string()
}

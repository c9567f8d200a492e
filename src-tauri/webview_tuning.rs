//! The Linux webview's (WebKitGTK's) rendering mode, chosen for memory before GTK starts.
//!
//! Without a GPU (no DRM render node, or `LIBGL_ALWAYS_SOFTWARE`), WebKitGTK's accelerated
//! compositing still runs, on Mesa's software OpenGL (llvmpipe): its layers and buffers are
//! textures in ordinary memory. There the app turns it off — the same as
//! `WEBKIT_DISABLE_COMPOSITING_MODE=1 WEBKIT_DISABLE_DMABUF_RENDERER=1` — and WebKit paints
//! the page on the CPU into one shared buffer. Measured with `scripts/measure-desktop.sh`
//! (Xvfb, sample project, medians of 3 runs): WebKitWebProcess RSS 319 → 234 MB, the tree's
//! distinct pages 390 → 308 MB, no measurable change in cold start; the window (Monaco,
//! xterm) renders the same. (The settings API's `HardwareAccelerationPolicy::Never`, set from
//! `with_webview`, comes too late for the first page: 10 MB more than the variables.)
//!
//! With a GPU nothing changes: the textures live in GPU memory and compositing keeps scrolling
//! smooth. Whoever sets any of `USER_CHOICES` decides alone (e.g.
//! `WEBKIT_DISABLE_COMPOSITING_MODE=1` on a GPU machine, or
//! `WEBKIT_FORCE_COMPOSITING_MODE=1` to keep compositing without one).

use std::ffi::OsString;

/// The variables through which a user already chose how WebKitGTK composites.
pub const USER_CHOICES: [&str; 4] = [
    "WEBKIT_DISABLE_COMPOSITING_MODE",
    "WEBKIT_FORCE_COMPOSITING_MODE",
    "WEBKIT_DISABLE_DMABUF_RENDERER",
    "WEBKIT_FORCE_DMABUF_RENDERER",
];

/// What the app sets to turn compositing off.
const NO_COMPOSITING: [(&str, &str); 2] =
    [("WEBKIT_DISABLE_COMPOSITING_MODE", "1"), ("WEBKIT_DISABLE_DMABUF_RENDERER", "1")];

/// The variables to set, given the environment (`env`) and whether a DRM render node
/// (`/dev/dri/renderD*`, a GPU Mesa can use) exists.
pub fn compositing_env(
    env: impl Fn(&str) -> Option<OsString>,
    render_node: bool,
) -> &'static [(&'static str, &'static str)] {
    if USER_CHOICES.iter().any(|name| env(name).is_some()) {
        return &[];
    }
    // Mesa's own reading of the variable (`env_var_as_boolean`).
    let forced_software = env("LIBGL_ALWAYS_SOFTWARE").is_some_and(|value| {
        matches!(value.to_str().map(str::to_ascii_lowercase).as_deref(), Some("1" | "true" | "y" | "yes"))
    });
    if render_node && !forced_software { &[] } else { &NO_COMPOSITING }
}

/// Sets the rendering variables for this process and the WebKit processes it starts.
/// Returns what it set, for the log. Call it first thing in `run`, while the process has
/// one thread: nothing else may read or write the environment concurrently.
pub fn prepare() -> &'static [(&'static str, &'static str)] {
    if !cfg!(target_os = "linux") {
        return &[];
    }
    let render_node = std::fs::read_dir("/dev/dri")
        .is_ok_and(|dir| dir.flatten().any(|entry| entry.file_name().to_string_lossy().starts_with("renderD")));
    let set = compositing_env(|name| std::env::var_os(name), render_node);
    for (name, value) in set {
        // SAFETY: called at the start of `run`, before logging, the async runtime, GTK or any
        // other thread exists, so no other thread can be reading the environment.
        unsafe { std::env::set_var(name, value) };
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let vars: Vec<(String, OsString)> = vars.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn compositing_off_only_without_a_gpu() {
        assert_eq!(compositing_env(env(&[]), false), NO_COMPOSITING);
        assert!(compositing_env(env(&[]), true).is_empty());
        assert_eq!(compositing_env(env(&[("LIBGL_ALWAYS_SOFTWARE", "1")]), true), NO_COMPOSITING);
        assert_eq!(compositing_env(env(&[("LIBGL_ALWAYS_SOFTWARE", "true")]), true), NO_COMPOSITING);
        assert!(compositing_env(env(&[("LIBGL_ALWAYS_SOFTWARE", "0")]), true).is_empty());
    }

    #[test]
    fn a_users_choice_wins() {
        for name in USER_CHOICES {
            assert!(compositing_env(env(&[(name, "1")]), false).is_empty(), "{name}");
            assert!(compositing_env(env(&[(name, "0"), ("LIBGL_ALWAYS_SOFTWARE", "1")]), true).is_empty(), "{name}");
        }
    }
}

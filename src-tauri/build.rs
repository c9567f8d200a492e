fn main() {
    // Capabilities live under src-tauri/ although the package root is the repository root.
    let attributes = tauri_build::Attributes::new().capabilities_path_pattern("src-tauri/capabilities/**/*");
    if let Err(err) = tauri_build::try_build(attributes) {
        panic!("tauri build step failed: {err:#}");
    }
}

//! The floor `scripts/measure-desktop.sh` measures Paige against: the same Tauri, the same
//! WebKitGTK rendering choice, one window with an empty page — nothing of Paige's. What the
//! app's process tree holds above this is Paige's own. Built only with `--features floor`.

fn main() {
    let _ = paige_app::webview_tuning::prepare();
    let mut context = tauri::generate_context!();
    // No window from the app's config: one of the same size on an empty page instead.
    context.config_mut().app.windows.clear();
    let result = tauri::Builder::default()
        // The empty page, from a protocol of its own (data: URLs need a feature the app lacks).
        .register_uri_scheme_protocol("floor", |_, _| {
            tauri::http::Response::builder()
                .header("content-type", "text/html")
                .body(b"<!doctype html><title>floor</title>".to_vec())
                .expect("a static response")
        })
        .on_page_load(|_, payload| {
            if payload.event() == tauri::webview::PageLoadEvent::Finished {
                println!("floor ready");
            }
        })
        .setup(move |app| {
            let url = tauri::WebviewUrl::CustomProtocol("floor://localhost/".parse().expect("a URL"));
            tauri::WebviewWindowBuilder::new(app, "main", url).title("floor").inner_size(1280.0, 800.0).build()?;
            Ok(())
        })
        .run(context);
    if let Err(err) = result {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}

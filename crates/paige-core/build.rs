// The migrations are compiled in with include_dir!; rebuild when they change.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}

//! The project tree a folder at a time (issue 32): connecting lists the root's first level,
//! a folder is listed when asked (`fs:list`), a page of 2,000 entries at most, by the rules of
//! the full walk, through the path guard, and the listings are kept for every UI while the
//! watcher says nothing changed.

use std::time::Duration;

use paige_core::Event;
use paige_core::files::{
    FsChange, FsChangeAction, ListError, MAX_CACHED_DIRS, PAGE_ENTRIES, ProjectRoot, TreeCache, TreeNode, TreeNodeKind,
    project_tree,
};
use paige_core::protocol::{ConnectionId, ServerMessage};
use serde_json::{Value, json};

use super::test_core;

fn project(files: &[&str]) -> (tempfile::TempDir, ProjectRoot) {
    let tmp = tempfile::tempdir().expect("temp dir");
    for path in files {
        let full = tmp.path().join(path);
        if path.ends_with('/') {
            std::fs::create_dir_all(&full).expect("mkdir");
            continue;
        }
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, "x").expect("write");
    }
    let root = ProjectRoot::new(tmp.path()).expect("root");
    (tmp, root)
}

/// Every path below `node`, depth first, as the tree orders them.
fn paths(node: &TreeNode) -> Vec<String> {
    let mut out = Vec::new();
    for child in node.children.iter().flatten() {
        out.push(child.path.clone());
        out.extend(paths(child));
    }
    out
}

/// The whole tree as the UI would build it: every folder listed, page by page.
fn listed_tree(cache: &TreeCache, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut offset = 0;
    loop {
        let page = cache.list(path, offset).expect("listed");
        for child in &page.children {
            out.push(child.path.clone());
            if child.kind == TreeNodeKind::Directory {
                out.extend(listed_tree(cache, &child.path));
            }
        }
        match page.next_offset {
            Some(next) => offset = next,
            None => return out,
        }
    }
}

const DEEP: &[&str] = &["a/b/c/d/e/f/deep.rs", "src/main.rs", "README.md"];

#[test]
fn the_first_tree_lists_the_root_and_the_small_folders_under_it_never_deeper() {
    let (_tmp, root) = project(DEEP);
    let cache = TreeCache::new(&root);
    let tree = cache.first_tree();
    assert_eq!(paths(&tree), ["a", "a/b", "src", "src/main.rs", "README.md"]);
    let a = &tree.children.as_ref().expect("root listed")[0];
    let b = &a.children.as_ref().expect("a is small: listed")[0];
    assert_eq!((b.path.as_str(), b.kind, b.children.is_none()), ("a/b", TreeNodeKind::Directory, true));
    assert_eq!(cache.listed(), ["", "a", "src"], "nothing deeper was read");
    // Asked for, a folder is listed, and only it.
    let page = cache.list("a/b", 0).expect("a/b");
    assert_eq!(page.children.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(), ["a/b/c"]);
    assert_eq!(cache.listed(), ["", "a", "a/b", "src"]);
}

#[test]
fn the_first_tree_lists_at_most_16_small_folders_under_the_root_and_no_big_one() {
    let mut files: Vec<String> = (0..20).map(|i| format!("d{i:02}/x.rs")).collect();
    files.extend((0..101).map(|i| format!("a_big/f{i:03}")));
    let (_tmp, root) = project(&files.iter().map(String::as_str).collect::<Vec<_>>());
    let cache = TreeCache::new(&root);
    let tree = cache.first_tree();
    let listed: Vec<&str> =
        tree.children.iter().flatten().filter(|c| c.children.is_some()).map(|c| c.path.as_str()).collect();
    let expected: Vec<String> = (0..15).map(|i| format!("d{i:02}")).collect();
    assert_eq!(listed, expected, "a_big (101 entries) and the folders past the first 16 wait for fs:list");
    assert!(!cache.listed().contains(&"a_big".to_owned()), "a listing cut short is not kept");
}

#[test]
fn hello_sends_the_first_level_without_walking_the_project() {
    let files: Vec<(&str, &str)> = DEEP.iter().map(|p| (*p, "x\n")).collect();
    let t = test_core(&files);
    let mut events = t.core.subscribe();
    let conn = t.core.connect();
    let hello = json!({"type": "connection:hello", "payload": {"version": "1", "platform": "linux", "windowSize": {"width": 1, "height": 1}}});
    t.core.handle_text(conn, &hello.to_string()).expect("init");
    let tree = std::iter::from_fn(|| events.try_recv().ok())
        .find_map(|event| match event {
            Event::UiTo { message: ServerMessage::FsTree(tree), .. } => Some(tree),
            _ => None,
        })
        .expect("fs:tree");
    let frame = serde_json::to_value(&tree).expect("json");
    assert_eq!(frame["root"]["children"][0]["children"][0], json!({"name": "b", "path": "a/b", "type": "directory"}));
    assert_eq!(t.core.project_tree().listed(), ["", "a", "src"], "connecting read no deeper folder");
}

#[test]
fn a_folder_of_5000_files_comes_in_pages_of_2000_and_the_first_frame_stays_small() {
    let names: Vec<String> = (0..5000).map(|i| format!("f{i:04}.txt")).chain(["sub/x.rs".into()]).collect();
    let (_tmp, root) = project(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let cache = TreeCache::new(&root);
    let first = cache.first_tree();
    let frame = serde_json::to_string(&first).expect("json");
    assert_eq!(first.children.as_ref().map(Vec::len), Some(PAGE_ENTRIES));
    assert_eq!(first.next_offset, Some(2000));
    assert!(frame.len() < 250_000, "the first frame is {} bytes", frame.len());
    let mut all: Vec<String> = first.children.iter().flatten().map(|c| c.path.clone()).collect();
    let mut offset = first.next_offset;
    let mut pages = Vec::new();
    while let Some(at) = offset {
        let page = cache.list("", at).expect("page");
        pages.push((page.offset, page.children.len(), page.total));
        all.extend(page.children.iter().map(|c| c.path.clone()));
        offset = page.next_offset;
    }
    assert_eq!(pages, [(2000, 2000, 5001), (4000, 1001, 5001)]);
    let walked: Vec<String> = project_tree(root.path()).children.iter().flatten().map(|c| c.path.clone()).collect();
    assert_eq!(all, walked, "the pages are the walk's first level, in its order");
    assert!(cache.list("", 9000).expect("past the end").children.is_empty());
}

#[test]
fn listing_folder_by_folder_gives_what_the_full_walk_gives() {
    let (tmp, root) = project(&[
        "src/main.rs",
        "src/lib/util.rs",
        "src/empty/",
        "README.md",
        ".gitignore",
        "debug.log",
        "secret/key.txt",
        "node_modules/x/index.js",
        ".git/HEAD",
        "dist/app.js",
        "build",
        "sub/.gitignore",
        "sub/skip.txt",
        "sub/keep.txt",
        "target/debug/x",
    ]);
    std::fs::write(tmp.path().join(".gitignore"), "*.log\nsecret/\n").expect("rules");
    std::fs::write(tmp.path().join("sub/.gitignore"), "*.txt\n!keep.txt\n").expect("rules");
    std::os::unix::fs::symlink(tmp.path().join("src"), tmp.path().join("link")).expect("symlink");
    let cache = TreeCache::new(&root);
    let walked = paths(&project_tree(root.path()));
    assert_eq!(listed_tree(&cache, ""), walked);
    assert!(walked.contains(&"link".to_owned()) && !walked.contains(&"link/main.rs".to_owned()), "{walked:?}");
    assert!(walked.contains(&"sub/keep.txt".to_owned()) && !walked.contains(&"sub/skip.txt".to_owned()));
    assert!(cache.list("src/empty", 0).expect("empty").children.is_empty());
}

#[test]
fn a_path_outside_the_project_a_file_or_a_folder_the_tree_leaves_out_is_refused_with_why() {
    let outside = tempfile::tempdir().expect("outside");
    let (tmp, root) = project(&["src/main.rs", "README.md", "node_modules/x.js", "secret/key", ".gitignore"]);
    std::fs::write(tmp.path().join(".gitignore"), "secret/\n").expect("rules");
    std::os::unix::fs::symlink(tmp.path().join("src"), tmp.path().join("link")).expect("symlink");
    std::os::unix::fs::symlink(outside.path(), tmp.path().join("escape")).expect("symlink");
    let cache = TreeCache::new(&root);
    let error = |path: &str| cache.list(path, 0).map(|_| ()).expect_err(path).to_string();
    assert_eq!(error("../"), r#"path "../" contains '..'; use a path inside the project"#);
    assert_eq!(error("/etc"), r#"path "/etc" is outside the project"#);
    assert_eq!(error("/"), r#"path "/" is outside the project"#);
    assert_eq!(error("escape"), r#"path "escape" is a symlink that points outside the project"#);
    assert_eq!(error("link"), r#""link" is a symlink or lies under one: the project tree does not follow symlinks"#);
    assert_eq!(error("README.md"), r#""README.md" is not a folder"#);
    assert_eq!(error("gone"), "folder not found: gone");
    assert!(error("node_modules").contains("left out of the project tree"));
    assert!(error("secret").contains("left out of the project tree"));
    assert!(matches!(cache.list("a\0b", 0), Err(ListError::Path(_))));
    // A FIFO is refused before it is opened: the listing cannot block on it.
    rustix::fs::mknodat(rustix::fs::CWD, tmp.path().join("pipe"), rustix::fs::FileType::Fifo, 0o644.into(), 0)
        .expect("mkfifo");
    assert_eq!(error("pipe"), r#""pipe" is not a folder"#);
    // The root and a folder however they are written.
    let abs = tmp.path().canonicalize().expect("canonical").join("src");
    for (path, listed) in
        [("", ""), (".", ""), ("src/", "src"), ("./src", "src"), (abs.to_str().expect("utf-8"), "src")]
    {
        assert_eq!(cache.list(path, 0).expect(path).path, listed, "{path}");
    }
}

#[test]
fn fs_list_is_answered_with_a_page_or_a_list_error_naming_the_path() {
    let t = test_core(&[("src/main.rs", "fn main() {}\n")]);
    let conn = ConnectionId(1);
    let ask = |payload: Value| -> Value {
        let reply = t.core.handle_text(conn, &json!({"type": "fs:list", "payload": payload}).to_string());
        serde_json::from_str(&reply.expect("a reply")).expect("json")
    };
    let page = ask(json!({"path": "src"}));
    assert_eq!(page["type"], "fs:children");
    assert_eq!(
        page["payload"],
        json!({"path": "src", "children": [{"name": "main.rs", "path": "src/main.rs", "type": "file"}],
               "offset": 0, "total": 1, "capped": false})
    );
    let refused = ask(json!({"path": "../../etc", "offset": 3}));
    assert_eq!(refused["type"], "fs:list_error");
    assert_eq!(refused["payload"]["path"], "../../etc");
    assert!(refused["payload"]["error"].as_str().is_some_and(|e| e.contains("'..'")), "{refused}");
    assert_eq!(ask(json!({"path": "src/main.rs"}))["payload"]["error"], r#""src/main.rs" is not a folder"#);
}

#[test]
fn a_change_the_watcher_reports_drops_the_listings_it_touches() {
    let (tmp, root) = project(&["src/a.rs", "src/old/x.rs", "debug.log", ".gitignore"]);
    let cache = TreeCache::new(&root);
    let names = |path: &str| -> Vec<String> {
        cache.list(path, 0).expect("listed").children.into_iter().map(|c| c.name).collect()
    };
    assert_eq!(names(""), ["src", ".gitignore", "debug.log"]);
    assert_eq!(names("src"), ["old", "a.rs"]);
    names("src/old");
    let change = |action, path: &str| FsChange { action, path: path.into(), new_path: None };
    // Removed: the folder's listing, and those below a removed folder, are gone.
    std::fs::remove_dir_all(tmp.path().join("src/old")).expect("rm");
    cache.changed(&change(FsChangeAction::Unlink, "src/old"));
    assert_eq!(cache.listed(), [""], "src and src/old dropped");
    assert_eq!(names("src"), ["a.rs"]);
    // An ignore file edited in place leaves the folder's timestamps alone: the report reads
    // the rules again.
    std::fs::write(tmp.path().join(".gitignore"), "*.log\n").expect("rules");
    cache.changed(&change(FsChangeAction::Change, ".gitignore"));
    assert_eq!(names(""), ["src", ".gitignore"]);
    // A file's content changing lists nothing again.
    names("src");
    cache.changed(&change(FsChangeAction::Change, "src/a.rs"));
    assert_eq!(cache.listed(), ["", "src"]);
}

#[test]
fn a_change_the_watcher_missed_shows_once_the_folder_itself_changed() {
    let (tmp, root) = project(&["src/a.rs"]);
    let cache = TreeCache::new(&root);
    assert_eq!(cache.list("src", 0).expect("src").total, 1);
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(tmp.path().join("src/b.rs"), "b").expect("write");
    assert_eq!(cache.list("src", 0).expect("src").total, 2, "the folder's mtime moved: read again");
}

#[test]
fn the_watcher_keeps_the_listings_current_for_every_ui() {
    let t = test_core(&[("src/a.rs", "a\n")]);
    t.core.start_watcher().expect("watcher");
    assert_eq!(t.core.list_folder("src", 0).expect("src").total, 1);
    let mut events = t.core.subscribe();
    std::fs::write(t.project.path().join("src/b.rs"), "b\n").expect("write");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !std::iter::from_fn(|| events.try_recv().ok())
        .any(|e| matches!(e.into_ui_message(), Some(ServerMessage::FsTreeUpdate(c)) if c.path == "src/b.rs"))
    {
        assert!(std::time::Instant::now() < deadline, "no fs:tree_update");
        std::thread::sleep(Duration::from_millis(20));
    }
    let names: Vec<String> = t.core.list_folder("src", 0).expect("src").children.into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["a.rs", "b.rs"]);
}

#[test]
fn at_most_512_folder_listings_are_kept_the_least_recently_used_going_first() {
    let dirs: Vec<String> = (0..MAX_CACHED_DIRS + 20).map(|i| format!("d{i:03}/")).collect();
    let (_tmp, root) = project(&dirs.iter().map(String::as_str).collect::<Vec<_>>());
    let cache = TreeCache::new(&root);
    cache.list("", 0).expect("root");
    for dir in &dirs {
        cache.list(dir, 0).expect("dir");
        cache.list("", 0).expect("root, used again");
    }
    let listed = cache.listed();
    assert_eq!(listed.len(), MAX_CACHED_DIRS);
    assert!(listed.contains(&String::new()) && listed.contains(&"d531".to_owned()), "the recent ones are kept");
    assert!(!listed.contains(&"d000".to_owned()), "the oldest went first");
}

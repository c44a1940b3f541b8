//! `docs/unsafe.md` lists every file of the workspace that contains `unsafe` code, with the
//! reason it is sound. This test keeps that list and the code in step: a file using `unsafe`
//! that the list does not cover fails, and so does a row naming a file without any.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The first-column paths of the table in docs/unsafe.md.
fn listed() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("docs/unsafe.md")).expect("docs/unsafe.md");
    text.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

/// Whether a line (outside comments) writes `unsafe` code.
fn writes_unsafe(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    let mut rest = code;
    while let Some(i) = rest.find("unsafe") {
        let before = rest[..i].chars().last();
        let after = rest[i + 6..].trim_start();
        let word_start = !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let kind = ["{", "fn ", "impl", "extern", "trait"]
            .iter()
            .any(|k| after.starts_with(k));
        if word_start && kind {
            return true;
        }
        rest = &rest[i + 6..];
    }
    false
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source files of every crate (absolute paths), and the repository root they are under.
fn crate_sources() -> (PathBuf, Vec<PathBuf>) {
    let root = repo().canonicalize().expect("repository root");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .flatten()
    {
        rust_files(&krate.path().join("src"), &mut files);
    }
    (root, files)
}

/// Repository-relative paths of the crates' source files that write `unsafe` code.
fn users() -> BTreeSet<String> {
    let (root, files) = crate_sources();
    files
        .into_iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .map(|t| t.lines().any(writes_unsafe))
                .unwrap_or(false)
        })
        .map(|f| {
            f.strip_prefix(&root)
                .expect("inside the repository")
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[test]
fn detector_sees_unsafe_code_only() {
    assert!(writes_unsafe("    let x = unsafe { f() };"));
    assert!(writes_unsafe("pub unsafe fn new(addr: usize) -> Buf {"));
    assert!(writes_unsafe("unsafe impl Send for T {}"));
    assert!(!writes_unsafe(
        "// SAFETY: an unsafe { block } in a comment"
    ));
    assert!(!writes_unsafe("#![forbid(unsafe_code)]"));
    assert!(!writes_unsafe("let unsafe_count = 3;"));
}

#[test]
fn every_unsafe_file_is_listed_with_its_reason() {
    let rows = listed();
    assert!(rows.len() > 5, "docs/unsafe.md's table was not found");
    let users = users();
    let covered = |f: &String| {
        rows.iter().any(|r| {
            if r.ends_with('/') {
                f.starts_with(r)
            } else {
                f == r
            }
        })
    };
    let unlisted: Vec<&String> = users.iter().filter(|f| !covered(f)).collect();
    assert!(
        unlisted.is_empty(),
        "files with unsafe code not in docs/unsafe.md (add a row saying why it is sound, or \
         move the code to a place that may hold unsafe): {unlisted:?}"
    );
    let stale: Vec<&String> = rows
        .iter()
        .filter(|r| {
            !users.iter().any(|f| {
                if r.ends_with('/') {
                    f.starts_with(*r)
                } else {
                    f == *r
                }
            })
        })
        .collect();
    assert!(
        stale.is_empty(),
        "rows of docs/unsafe.md naming no unsafe code: {stale:?}"
    );
}

/// Where an `unsafe {` block's `// SAFETY:` line is not the line right above the one that
/// opens it (nor on that line). Clippy accepts a reason anywhere in the comments above the
/// statement the block is part of, so a reason can drift away from its block (rustfmt splits a
/// statement, a comment line is added below it); this stricter rule keeps it next to the block:
/// other comment lines go above the `SAFETY:` line.
fn undocumented_blocks(text: &str) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let opens_block = |l: &str| {
        let code = l.split("//").next().unwrap_or("");
        code.split("unsafe")
            .skip(1)
            .any(|rest| rest.trim_start().starts_with('{'))
    };
    let reason = |l: &str| {
        let l = l.trim_start();
        l.starts_with("//") && l.contains("// SAFETY:")
    };
    let mut missing = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !opens_block(line) || line.contains("// SAFETY:") {
            continue;
        }
        if !(i > 0 && reason(lines[i - 1])) {
            missing.push(i + 1);
        }
    }
    missing
}

#[test]
fn detector_wants_the_reason_on_the_line_above() {
    assert!(undocumented_blocks("// SAFETY: ok\nunsafe { f() };").is_empty());
    assert!(undocumented_blocks("// context\n// SAFETY: ok\nlet x = unsafe { f() };").is_empty());
    assert!(undocumented_blocks("unsafe { f() }; // SAFETY: ok").is_empty());
    assert_eq!(
        undocumented_blocks("// SAFETY: ok\n// more\nlet x = unsafe { f() };"),
        vec![3]
    );
    assert_eq!(
        undocumented_blocks("// SAFETY: far\nlet x =\n    unsafe { f() };"),
        vec![3]
    );
    assert_eq!(undocumented_blocks("let x = unsafe { f() };"), vec![1]);
}

#[test]
fn every_unsafe_block_has_its_reason_right_above() {
    let (_, files) = crate_sources();
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for line in undocumented_blocks(&text) {
            bad.push(format!("{}:{line}", f.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "unsafe blocks whose `// SAFETY:` line is not the line right above: {bad:?}"
    );
}

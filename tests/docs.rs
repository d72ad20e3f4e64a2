//! The documentation's relative links resolve: a module split or a renamed file must update the
//! docs that point at it (docs/THEORY.md links every result to the code that implements it).

use std::path::{Path, PathBuf};

/// Relative link targets of a Markdown text: `](target)` and `](target#anchor)`, skipping URLs.
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let end = rest.find([')', ' ', '\n']).unwrap_or(rest.len());
        let target = rest[..end].split('#').next().unwrap_or_default();
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            out.push(target.to_string());
        }
    }
    out
}

fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [root.to_path_buf(), root.join("docs")] {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

#[test]
fn relative_links_in_the_docs_resolve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = markdown_files(root);
    assert!(files.iter().any(|f| f.ends_with("docs/THEORY.md")), "docs/THEORY.md not found among {files:?}");
    let mut checked = 0;
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let dir = file.parent().unwrap_or(root);
        for target in relative_links(&text) {
            checked += 1;
            if !dir.join(&target).exists() {
                broken.push(format!("{}: {target}", file.strip_prefix(root).unwrap_or(file).display()));
            }
        }
    }
    assert!(checked > 20, "only {checked} relative links found: is the link scanner broken?");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_scanner_finds_links_and_skips_urls() {
    let text = "see [a](docs/A.md#x), [b](https://x.org/y) and [c](../src/c.rs) or `[d](e f)`";
    assert_eq!(relative_links(text), vec!["docs/A.md", "../src/c.rs", "e"]);
}

/// Whether a build configuration or script asks trunk to minify: a `minify` key or `--minify`.
fn asks_to_minify(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.split('#').next().unwrap_or_default();
        line.trim_start().starts_with("minify") || line.contains("--minify") || line.contains("data-minify")
    })
}

/// scripts/setup.sh installs trunk with pass-through stand-ins for its minifiers
/// (scripts/tool-stubs), which only holds while nothing asks trunk to minify.
#[test]
fn nothing_asks_trunk_to_minify() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let setup = std::fs::read_to_string(root.join("scripts/setup.sh")).unwrap_or_default();
    assert!(
        setup.contains("scripts/tool-stubs") && setup.contains("patch.crates-io.minify-html.path"),
        "setup.sh no longer patches trunk's minifiers: drop this test"
    );
    let mut files = vec![root.join("Trunk.toml"), root.join("index.html")];
    for entry in std::fs::read_dir(root.join("scripts")).into_iter().flatten().flatten() {
        if entry.path().extension().is_some_and(|e| e == "sh") {
            files.push(entry.path());
        }
    }
    assert!(files.len() > 4, "scripts/*.sh not found: {files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        assert!(!asks_to_minify(&text), "{} asks trunk to minify, but its minifiers are stand-ins", file.display());
    }
}

#[test]
fn the_minify_scanner_sees_each_way_to_ask() {
    assert!(asks_to_minify("[build]\nminify = \"on_release\"\n"));
    assert!(asks_to_minify("trunk build --release --minify\n"));
    assert!(asks_to_minify("<link data-trunk rel=\"css\" data-minify />"));
    assert!(!asks_to_minify("# trunk's minifiers are stand-ins\nrelease = true\n"));
}

//! A small reader of Rust source for the architecture tests: module trees from file paths, the
//! paths each module names (`use` trees and inline `crate::`/`super::`/`self::` paths, outside
//! comments and strings), and three checks over them: module cycles among siblings, upward
//! imports, and long functions. Each check is a pure function of `(module path, text)` pairs, so
//! tests/architecture.rs also feeds it made-up violations and sees it fail.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One module: its path from the crate root (`["derive", "merge"]`) and its source text.
pub struct Module {
    pub path: Vec<String>,
    pub file: String,
    pub text: String,
}

/// Every module of the crate whose root file is `root_file` (`src/lib.rs`), by file path
/// (`src/a.rs` or `src/a/mod.rs` is `a`, `src/a/b.rs` is `a::b`; inline modules belong to their file).
pub fn modules(root_file: &Path) -> Vec<Module> {
    let mut out = Vec::new();
    let base: Vec<String> = Vec::new();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
    out.push(Module { path: base.clone(), file: root_file.display().to_string(), text: read(root_file) });
    if let Some(dir) = root_file.parent() {
        walk(dir, &base, &mut out, &read);
    }
    out
}

fn walk(dir: &Path, base: &[String], out: &mut Vec<Module>, read: &dyn Fn(&Path) -> String) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        if path.is_dir() {
            let mut sub = base.to_vec();
            sub.push(name);
            let mod_rs = path.join("mod.rs");
            if mod_rs.exists() {
                out.push(Module { path: sub.clone(), file: mod_rs.display().to_string(), text: read(&mod_rs) });
            }
            walk(&path, &sub, out, read);
        } else if path.extension().is_some_and(|e| e == "rs") && !matches!(name.as_str(), "mod" | "lib" | "main") {
            let mut sub = base.to_vec();
            sub.push(name);
            out.push(Module { path: sub, file: path.display().to_string(), text: read(&path) });
        }
    }
}

/// `text` with comments, string and char literals blanked (newlines kept, so line numbers hold).
pub fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let mut depth = 0usize;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(rest) {
            let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
            let open = 2 + hashes + usize::from(rest[0] == b'b');
            out.extend(std::iter::repeat_n(b' ', open));
            i += open;
            while i < b.len() && !b[i..].starts_with(&close) {
                blank(&mut out, b[i]);
                i += 1;
            }
            out.extend(std::iter::repeat_n(b' ', close.len().min(b.len() - i)));
            i += close.len();
        } else if b[i] == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' && i + 1 < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                blank(&mut out, b[i]);
                i += 1;
            }
            out.push(b' ');
            i += 1;
        } else if b[i] == b'\'' && char_literal_len(rest) > 0 {
            let n = char_literal_len(rest);
            out.extend(std::iter::repeat_n(b' ', n));
            i += n;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out.truncate(b.len());
    String::from_utf8_lossy(&out).into_owned()
}

/// `Some(hashes)` when `rest` opens a raw string `r"`, `r#"`, `br##"`...
fn raw_string_start(rest: &[u8]) -> Option<usize> {
    let r = if rest.starts_with(b"br") {
        2
    } else if rest.starts_with(b"r") {
        1
    } else {
        return None;
    };
    let hashes = rest[r..].iter().take_while(|&&c| c == b'#').count();
    (rest.get(r + hashes) == Some(&b'"')).then_some(hashes)
}

/// The length of a char literal at the start of `rest` (`'a'`, `'\n'`, `'\''`, `'\u{1F600}'`), or
/// 0 for a lifetime (`'a`).
fn char_literal_len(rest: &[u8]) -> usize {
    if rest.get(1) == Some(&b'\\') {
        rest[2..].iter().skip(1).position(|&c| c == b'\'').map_or(0, |p| p + 4)
    } else {
        let s = String::from_utf8_lossy(&rest[1..rest.len().min(6)]).into_owned();
        match s.chars().next() {
            Some(c) if s[c.len_utf8()..].starts_with('\'') => 2 + c.len_utf8(),
            _ => 0,
        }
    }
}

/// Every path (as segments) that `code` names starting with `crate`, `super` or `self`: each
/// leaf of a `use` tree, and each inline path. Comments and strings must be blanked already.
pub fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let tokens = tokenize(code);
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "use" {
            let end = tokens[i..].iter().position(|t| t == ";").map_or(tokens.len(), |p| i + p);
            expand_use(&tokens[i + 1..end], &mut Vec::new(), &mut out);
            i = end;
        } else if matches!(tokens[i].as_str(), "crate" | "super" | "self")
            && tokens.get(i + 1).is_some_and(|t| t == "::")
            && (i == 0 || tokens[i - 1] != "::")
        {
            let mut path = vec![tokens[i].clone()];
            let mut j = i + 1;
            while tokens.get(j).is_some_and(|t| t == "::") && tokens.get(j + 1).is_some_and(|t| is_ident(t)) {
                path.push(tokens[j + 1].clone());
                j += 2;
            }
            out.push(path);
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

fn is_ident(t: &str) -> bool {
    t.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
}

fn tokenize(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".to_string());
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
            i += 1;
        }
    }
    out
}

/// Expands a `use` tree (`a::{b, c::{d as e, *}}`) into its leaves, each prefixed by `prefix`.
fn expand_use(tokens: &[String], prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut i = 0;
    let depth0 = prefix.len();
    while i < tokens.len() {
        let t = tokens[i].as_str();
        match t {
            "{" => {
                // Split the group's items at top-level commas.
                let mut depth = 0;
                let mut start = i + 1;
                let mut j = i;
                while j < tokens.len() {
                    match tokens[j].as_str() {
                        "{" => depth += 1,
                        "}" => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        "," if depth == 1 => {
                            expand_use(&tokens[start..j], prefix, out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                    j += 1;
                }
                expand_use(&tokens[start..j.min(tokens.len())], prefix, out);
                prefix.truncate(depth0);
                return;
            }
            "::" => {}
            "as" | "*" => break,
            _ if is_ident(t) => prefix.push(t.to_string()),
            _ => break,
        }
        i += 1;
    }
    if prefix.len() > depth0 || !prefix.is_empty() {
        out.push(prefix.clone());
    }
    prefix.truncate(depth0);
}

/// The module a path names, resolved from module `from`: the longest known module prefix of
/// the absolute path, or `None` for paths outside the crate (`std::`, other crates).
pub fn resolve(from: &[String], path: &[String], known: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut abs: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("self") => from.to_vec(),
        Some("super") => from.to_vec(),
        _ => return None,
    };
    let mut rest = &path[1..];
    if path[0] == "super" {
        abs.pop();
        while rest.first().is_some_and(|s| s == "super") {
            abs.pop();
            rest = &rest[1..];
        }
    }
    abs.extend(rest.iter().cloned());
    while !known.contains(&abs) {
        abs.pop()?;
    }
    Some(abs)
}

/// `code` (comments and strings already blanked) with its inline unit-test modules
/// (`#[cfg(test)] mod name { ... }`) blanked: their imports are not the crate's structure.
pub fn without_test_modules(code: &str) -> String {
    let mut out = code.to_string();
    let mut from = 0;
    while let Some(p) = out[from..].find("#[cfg(test)]") {
        let at = from + p;
        from = at + 1;
        let rest = out[at + 12..].trim_start();
        let Some(after_mod) = rest.strip_prefix("mod ") else { continue };
        let name_len = after_mod.chars().take_while(|c| c.is_alphanumeric() || *c == '_').count();
        if !after_mod[name_len..].trim_start().starts_with('{') {
            continue;
        }
        let open = at + out[at..].find('{').unwrap_or(0);
        let mut depth = 0;
        let mut close = out.len();
        for (i, c) in out[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let blank: String = out[at..close].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect();
        out.replace_range(at..close, &blank);
    }
    out
}

/// The module references of a crate: `(from, to, file)` for every path that names another module.
pub fn references(mods: &[Module]) -> Vec<(Vec<String>, Vec<String>, String)> {
    let known: BTreeSet<Vec<String>> = mods.iter().map(|m| m.path.clone()).collect();
    let mut out = Vec::new();
    for m in mods {
        for path in named_paths(&without_test_modules(&code_only(&m.text))) {
            if let Some(to) = resolve(&m.path, &path, &known)
                && to != m.path
            {
                out.push((m.path.clone(), to, m.file.clone()));
            }
        }
    }
    out
}

/// Cycles among sibling modules: for each parent, the graph "child A names something inside child
/// B" (a reference to an ancestor or a descendant is not a sibling edge). Each cycle is reported
/// as `parent: a -> b -> a (file names ...)`.
pub fn sibling_cycles(mods: &[Module]) -> Vec<String> {
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> = BTreeMap::new();
    for (from, to, file) in references(mods) {
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common < from.len() && common < to.len() {
            graphs
                .entry(from[..common].to_vec())
                .or_default()
                .entry(from[common].clone())
                .or_default()
                .entry(to[common].clone())
                .or_insert(file);
        }
    }
    let mut cycles = Vec::new();
    for (parent, graph) in &graphs {
        for cycle in find_cycles(graph) {
            let evidence: Vec<String> =
                cycle.windows(2).map(|w| format!("{} names {}", graph[&w[0]][&w[1]], w[1])).collect();
            cycles.push(format!("{}: {} ({})", display(parent), cycle.join(" -> "), evidence.join("; ")));
        }
    }
    cycles
}

fn display(path: &[String]) -> String {
    if path.is_empty() { "crate".to_string() } else { path.join("::") }
}

/// One cycle through each strongly connected component of more than one node (as a closed walk
/// `a, b, ..., a`).
fn find_cycles(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut cycles = Vec::new();
    for start in graph.keys() {
        if seen.contains(start) {
            continue;
        }
        // Depth-first search for a walk back to `start`.
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut visited = BTreeSet::new();
        while let Some((node, walk)) = stack.pop() {
            for next in graph.get(&node).into_iter().flat_map(|e| e.keys()) {
                if next == start {
                    let mut cycle = walk.clone();
                    cycle.push(start.clone());
                    seen.extend(walk.iter().cloned());
                    cycles.push(cycle);
                    stack.clear();
                    break;
                }
                if visited.insert(next.clone()) {
                    let mut w = walk.clone();
                    w.push(next.clone());
                    stack.push((next.clone(), w));
                }
            }
        }
    }
    cycles
}

/// Upward imports: a module naming an item of one of its own ancestors (`super::Store` from
/// `ui/files.rs` when `Store` is defined in `ui/mod.rs`). Naming a sibling (`super::store::Store`)
/// or the crate root's items is not upward. Returns `file names path` lines.
pub fn upward_imports(mods: &[Module]) -> Vec<String> {
    let known: BTreeSet<Vec<String>> = mods.iter().map(|m| m.path.clone()).collect();
    let mut out = Vec::new();
    for m in mods {
        for path in named_paths(&without_test_modules(&code_only(&m.text))) {
            let Some(to) = resolve(&m.path, &path, &known) else { continue };
            if !to.is_empty() && to.len() < m.path.len() && m.path.starts_with(&to) {
                out.push(format!("{} names {}", m.file, path.join("::")));
            }
        }
    }
    out
}

/// `(name, first line, lines)` of every `fn` in `text` whose body spans more than `max` lines,
/// counted from the `fn` line to its closing brace.
pub fn long_functions(text: &str, max: usize) -> Vec<(String, usize, usize)> {
    let code = code_only(text);
    let bytes = code.as_bytes();
    let line_of = |pos: usize| code[..pos].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(p) = code[search..].find("fn ") {
        let at = search + p;
        search = at + 3;
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let name: String = code[at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        // The body: the first `{` before any `;` (a declaration without a body has none).
        let Some(open) = code[at..].find(['{', ';']).map(|o| at + o) else { break };
        if bytes[open] != b'{' {
            continue;
        }
        let mut depth = 0;
        let mut close = open;
        for (i, &c) in bytes.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let lines = line_of(close) - line_of(at) + 1;
        if lines > max {
            out.push((name, line_of(at), lines));
        }
    }
    out
}

/// `file:line` of every `_ => {}` or `_ => ()` arm (a match that drops what it does not name).
pub fn ignoring_wildcards(file: &str, text: &str) -> Vec<String> {
    let code = code_only(text);
    let mut out = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        if squeezed.contains("_=>{}") || squeezed.contains("_=>()") {
            out.push(format!("{file}:{}", i + 1));
        }
    }
    out
}

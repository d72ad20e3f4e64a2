//! End-to-end tests of the `hasseflow` binary: what a script sees.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn hasseflow(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hasseflow"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
    child.wait_with_output().expect("binary finishes")
}

fn ok(args: &[&str], stdin: &str) -> String {
    let out = hasseflow(args, stdin);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn json(args: &[&str], stdin: &str) -> serde_json::Value {
    serde_json::from_str(&ok(args, stdin)).expect("exactly one JSON object")
}

#[test]
fn analyze_json_has_the_documented_fields() {
    // The example of the issue: "mixed n=5" from the vectors.
    let v = json(&["analyze", "-", "--json"], "11...\n11...\n111..\n1111.\n11..1\n");
    assert_eq!(v["n"], 5);
    assert_eq!(v["depth"], 1);
    assert_eq!(v["dense"], true);
    assert_eq!(v["limit"], serde_json::json!(["11...", "11...", "111..", "1111.", "11..1"]));
    assert_eq!(v["classes"], serde_json::json!([[0, 1], [2], [3], [4]]));
    assert_eq!(v["hasse_edges"], serde_json::json!([[0, 1], [0, 3], [1, 2]]));
    assert_eq!(v["height"], 3);
    assert_eq!(v["width"], 2);
    assert_eq!(v["growth"], serde_json::json!([5, 14]));
}

#[test]
fn vector_mixed_case_via_cli() {
    let v = json(&["analyze", "-", "--json", "--first-reach"], "1....\n11...\n.11..\n..11.\n1...1\n");
    assert_eq!(v["depth"], 3);
    assert_eq!(v["dense"], false);
    assert_eq!(v["first_reach"][3], serde_json::json!([3, 2, 1, 0, null]));
}

#[test]
fn preset_then_analyze_and_convert_round_trip() {
    let mask = ok(&["preset", "sliding-window", "--n", "16", "w=4"], "");
    let v = json(&["analyze", "-", "--json"], &mask);
    assert_eq!(v["depth"], 5); // ceil(15 / 3)
    let grid = ok(&["convert", "-", "--to", "text"], &mask);
    assert_eq!(grid.lines().count(), 16);
    let back = ok(&["convert", "-", "--to", "json"], &grid);
    let again = ok(&["convert", "-", "--to", "text"], &back);
    assert_eq!(grid, again);
    let packed = ok(&["convert", "-", "--encoding", "packed"], &grid);
    assert!(packed.contains("\"packed\""));
    assert_eq!(ok(&["convert", "-", "--to", "text"], &packed), grid);
}

#[test]
fn ops_transform_masks() {
    let causal = ok(&["preset", "causal", "--n", "6", "--format", "text"], "");
    let sparse = ok(&["op", "sparsify", "-", "--format", "text"], &causal);
    assert_eq!(sparse.lines().nth(3), Some("..11.."));
    let dense = ok(&["op", "densify", "-", "--format", "text"], &sparse);
    assert_eq!(dense, causal);
    let anti = ok(&["op", "transpose", "-", "--format", "text"], &causal);
    assert_eq!(anti.lines().next(), Some("111111"));
}

#[test]
fn stacks_are_reported() {
    let file = r#"{"format":"hasseflow-mask","version":1,"n":3,"rows":["1..","11.","111"],
      "stack":{"mode":"once","layers":[{"heads":[{"rows":["1..","11.",".11"]}]},{"heads":[{"rows":["111",".11","..1"]},{"rows":["1..","...","..."]}]}]}}"#;
    let v = json(&["analyze", "-", "--json"], file);
    assert_eq!(v["stack"]["layers"], 2);
    assert_eq!(v["stack"]["heads"], serde_json::json!([1, 2]));
    // R(2) = Ā2·Ā1: position 2 reads only itself in layer 2, and 1..2 in layer 1.
    assert_eq!(v["stack"]["limit"], serde_json::json!(["111", "111", ".11"]));
    assert_eq!(v["stack"]["depth"], 2);
}

#[test]
fn bad_input_fails_with_one_line() {
    for (args, stdin, needle) in [
        (vec!["analyze", "-"], "{\"format\":\"hasseflow-mask\",\"version\":2,\"n\":1,\"rows\":[\"1\"]}", "version 2"),
        (vec!["analyze", "-"], "11\n1.1\n", "row 1 has 3 columns"),
        (vec!["analyze", "-"], "{oops", "malformed JSON"),
        (vec!["analyze", "/nonexistent/mask.json"], "", "cannot open"),
        (vec!["preset", "nope", "--n", "4"], "", "unknown preset"),
        (vec!["preset", "causal", "--n", "9000"], "", "allowed 1..=8192"),
        (vec!["preset", "sliding-window", "--n", "4", "w"], "", "not KEY=VALUE"),
        (vec!["op", "and", "-"], "1\n", "second mask"),
    ] {
        let out = hasseflow(&args, stdin);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
}

#[test]
fn help_everywhere_and_catalog_lists_every_preset() {
    for sub in [
        vec!["--help"],
        vec!["analyze", "--help"],
        vec!["preset", "--help"],
        vec!["convert", "--help"],
        vec!["op", "--help"],
    ] {
        assert!(ok(&sub, "").contains("Usage"), "{sub:?}");
    }
    let list = ok(&["preset", "--list"], "");
    for spec in hasseflow_core::presets::CATALOG {
        assert!(list.contains(spec.name), "{}", spec.name);
    }
}

//! End-to-end tests of the `hasseflow` binary: what a script sees.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn hasseflow(args: &[&str], stdin: &str) -> Output {
    hasseflow_bytes(args, stdin.as_bytes())
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

#[test]
fn derive_autoregressive_gives_the_causal_mask() {
    let v = json(&["derive", "autoregressive", "--n", "5", "--json"], "");
    assert_eq!(v["mask"], serde_json::json!(["1...", "11..", "111.", "1111"]));
    assert_eq!(v["positions"], serde_json::json!(["w_0", "w_1", "w_2", "w_3"]));
    assert_eq!(v["labels"], serde_json::json!(["w_1", "w_2", "w_3", "w_4"]));
    assert_eq!((v["nodes_before"].as_u64(), v["nodes_after"].as_u64()), (Some(10), Some(4)));
    assert_eq!((v["depth_dense"].as_u64(), v["depth_sparse"].as_u64()), (Some(1), Some(3)));
    assert_eq!(v["leaks"], serde_json::json!([]));
    let text = ok(&["derive", "autoregressive", "--n", "5"], "");
    assert!(text.contains("10 -> 4"), "{text}");
}

#[test]
fn derive_block_matches_the_block_two_stream_preset() {
    let v = json(&["derive", "block", "--n", "6", "--block", "2", "--json"], "");
    let preset = json(&["preset", "block-two-stream", "--n", "6", "s=2"], "");
    assert_eq!(v["mask"], preset["rows"]);
    assert_eq!((v["nodes_before"].as_u64(), v["nodes_after"].as_u64()), (Some(6), Some(5)));
    assert_eq!(v["consistent"], true);
    assert_eq!(v["minimal"], true);
    let v = json(
        &["derive", "block", "--n", "7", "--block", "3", "--minimal", "--interleaved", "--prompt", "2", "--json"],
        "",
    );
    let preset =
        json(&["preset", "block-two-stream", "--n", "7", "s=3", "drop_last=true", "order=interleaved", "prompt=2"], "");
    assert_eq!(v["mask"], preset["rows"]);
}

#[test]
fn derive_butterfly_writes_a_mask_file_that_analyze_reads() {
    let dir = std::env::temp_dir().join(format!("hasseflow-derive-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("butterfly.json");
    let out_s = out.to_str().expect("utf-8 path");
    let v = json(&["derive", "butterfly", "--n", "4", "--json", "--mask-out", out_s], "");
    assert_eq!((v["nodes_before"].as_u64(), v["nodes_after"].as_u64()), (Some(16), Some(10)));
    assert_eq!(v["mask"][9], "1.....11.1..");
    let file = std::fs::read_to_string(&out).expect("mask written");
    let a = json(&["analyze", "-", "--json"], &file);
    assert_eq!(a["n"], 12);
    assert_eq!(a["depth"], 1);
    assert_eq!(a["labels"][8], "w'_0[w_1]");
    let minimal = json(&["derive", "butterfly", "--n", "4", "--minimal", "--aggregate", "mask", "--json"], "");
    assert_eq!(minimal["n"], 10);
    assert_eq!(minimal["positions"][6], "m@0");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn derive_mae_and_a_family_file() {
    let v = json(&["derive", "mae", "--n", "8", "--span", "2", "--json"], "");
    assert_eq!((v["nodes_before"].as_u64(), v["nodes_after"].as_u64()), (Some(8), Some(8)));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/family_example.json");
    let v = json(&["derive", path, "--json", "--tasks"], "");
    assert_eq!(v["mask"], serde_json::json!(["1...", "11..", "1111", "1111"]));
    let t2 = &v["task_diagrams"][2];
    assert_eq!(t2["hasse_edges"], serde_json::json!([[0, 1], [1, 2]]));
    assert_eq!(t2["nodes"][2]["inputs"], serde_json::json!(["m@2", "m@3"]));
    assert_eq!(t2["labelled"][0]["content"], serde_json::json!(["w_0", "w_1", "m@2", "m@3"]));
    assert_eq!((v["nodes_before"].as_u64(), v["nodes_after"].as_u64()), (Some(6), Some(3)));
    let text = ok(&["derive", "-"], &std::fs::read_to_string(path).expect("example"));
    assert!(text.contains("m@2 predicts w_2"), "{text}");
}

/// One `derive` case: the figures of the supervision density and the loss position share.
struct Supervision {
    args: &'static [&'static str],
    targets: u64,
    sample: u64,
    density: f64,
    labelled: u64,
    positions: usize,
    share: f64,
    /// The two text-report lines, after their labels.
    text: [&'static str; 2],
}

#[test]
fn derive_reports_supervision_density_and_the_loss_position_share() {
    let cases = [
        Supervision {
            args: &["autoregressive", "--n", "8"],
            targets: 7,
            sample: 8,
            density: 0.875,
            labelled: 7,
            positions: 7,
            share: 1.0,
            text: ["0.875 (7 of 8 sample tokens are targets)", "1.000 (7 of 7 positions carry a loss)"],
        },
        Supervision {
            args: &["block", "--n", "8", "--block", "2"],
            targets: 8,
            sample: 8,
            density: 1.0,
            labelled: 8,
            positions: 16,
            share: 0.5,
            text: ["1.000 (8 of 8 sample tokens are targets)", "0.500 (8 of 16 positions carry a loss)"],
        },
        Supervision {
            args: &["butterfly", "--n", "8"],
            targets: 8,
            sample: 8,
            density: 1.0,
            labelled: 8,
            positions: 24,
            share: 8.0 / 24.0,
            text: ["1.000 (8 of 8 sample tokens are targets)", "0.333 (8 of 24 positions carry a loss)"],
        },
        Supervision {
            args: &["mae", "--n", "8", "--span", "3"],
            targets: 6,
            sample: 8,
            density: 0.75,
            labelled: 6,
            positions: 16,
            share: 0.375,
            text: ["0.750 (6 of 8 sample tokens are targets)", "0.375 (6 of 16 positions carry a loss)"],
        },
    ];
    for c in cases {
        let mut args = vec!["derive"];
        args.extend_from_slice(c.args);
        let text = ok(&args, "");
        assert!(text.contains(&format!("supervision density    {}", c.text[0])), "{args:?}: {text}");
        assert!(text.contains(&format!("loss position share    {}", c.text[1])), "{args:?}: {text}");
        args.push("--json");
        let v = json(&args, "");
        let counts = (v["target_tokens"].as_u64(), v["sample_tokens"].as_u64());
        assert_eq!(counts, (Some(c.targets), Some(c.sample)), "{args:?}");
        assert_eq!(v["supervision_density"].as_f64(), Some(c.density), "{args:?}");
        // `positions` in the JSON lists what each position holds.
        let positions = (v["labelled_positions"].as_u64(), v["positions"].as_array().map(Vec::len));
        assert_eq!(positions, (Some(c.labelled), Some(c.positions)), "{args:?}");
        assert_eq!(v["loss_position_share"].as_f64(), Some(c.share), "{args:?}");
    }
}

#[test]
fn derive_bad_family_fails_with_one_line() {
    for (args, stdin, needle) in [
        (vec!["derive", "-"], "{oops", "malformed family JSON at line 1"),
        (
            vec!["derive", "-"],
            r#"{"format":"hasseflow-family","version":1,"tasks":[{"inputs":["w_0","w_1"],"mask":["1.","1"]}]}"#,
            "tasks[0].mask[1]: 1 columns, expected 2",
        ),
        (
            vec!["derive", "-"],
            r#"{"format":"hasseflow-family","version":1,"tasks":[{"nodes":[{"id":"a","inputs":["w_0"],"reads":["b"]}]}]}"#,
            "unknown node 'b'",
        ),
        (vec!["derive", "/nonexistent/family.json"], "", "cannot open"),
        (vec!["derive", "block", "--n", "6"], "", "parameter 'block' is required"),
        (vec!["derive", "butterfly", "--n", "1"], "", "n must be at least 2"),
        (vec!["derive", "autoregressive", "--n", "4", "--block", "2"], "", "does not take 'block'"),
        (vec!["derive", "block", "--n", "6", "--block", "2", "--param", "block=3"], "", "'block' given twice"),
        (vec!["derive", "block", "--n", "6", "--param", "block"], "", "'block' is not KEY=VALUE"),
        (vec!["derive", "mae", "--n", "6", "--span", "2", "--stride", "x"], "", "'stride' = 'x'"),
        (vec!["derive", "-", "--n", "6"], "{}", "a family file takes no family parameters"),
        // Sizes that overflow a usize are refused, not wrapped.
        (
            vec!["derive", "block", "--n", "6", "--block", "2", "--prompt", "18446744073709551615"],
            "",
            "over 2^64 positions; the limit is 8192",
        ),
        (vec!["derive", "butterfly", "--n", "9223372036854775807"], "", "positions; the limit is 8192"),
    ] {
        let out = hasseflow(&args, stdin);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
    assert!(ok(&["derive", "--help"], "").contains("Usage"));
}

#[test]
fn derive_takes_every_family_parameter_of_the_core_table_as_a_flag_or_a_param() {
    use hasseflow_core::derive::{BuiltinFamily, FAMILIES};
    use hasseflow_core::presets::ParamKind;
    let help = ok(&["derive", "--help"], "");
    for entry in FAMILIES {
        assert!(help.contains(entry.title), "{help}");
        // Its defaults (required ones given), then each parameter set to another value its
        // bounds allow: the flag, and the same through --param, derive what the core builds.
        let defaults: Vec<(String, String)> =
            entry.params.iter().map(|p| (p.spec.name.to_string(), p.spec.default.to_string())).collect();
        for p in entry.params {
            let value = match p.spec.kind {
                ParamKind::Bool => "true".to_string(),
                ParamKind::Choice(options) => options[options.len() - 1].to_string(),
                _ if p.spec.name == "n" => "5".to_string(),
                _ => "1".to_string(),
            };
            let flag = format!("--{}", p.spec.name.replace('_', "-"));
            assert!(help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}[")), "{flag}: {help}");
            let mut given: std::collections::BTreeMap<String, String> = defaults.iter().cloned().collect();
            given.insert(p.spec.name.into(), value.clone());
            let want = BuiltinFamily::from_params(entry.name, &given).expect("the table's values build");
            let want = hasseflow_core::derive::derive(&want.build().expect("family")).expect("derivation");
            let mut by_flag = vec!["derive".to_string(), entry.name.to_string()];
            let mut by_param = by_flag.clone();
            for (k, v) in &given {
                by_flag.push(format!("--{}={v}", k.replace('_', "-")));
                by_param.extend(["--param".to_string(), format!("{k}={v}")]);
            }
            for args in [by_flag, by_param] {
                let args: Vec<&str> = args.iter().map(String::as_str).chain(["--json"]).collect();
                let v = json(&args, "");
                assert_eq!(v["mask"], want.to_json()["mask"], "{args:?}");
            }
        }
    }
}

/// Runs the binary with binary standard input.
fn hasseflow_bytes(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hasseflow"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    // A command refused before it reads its input may exit first: the broken pipe is then its
    // answer (checked by the caller from its status and stderr), not a failure of the test.
    match child.stdin.take().expect("stdin").write_all(stdin) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.expect("write stdin"),
    }
    child.wait_with_output().expect("binary finishes")
}

#[test]
fn export_flex_uses_the_closed_form_of_a_preset_and_a_table_otherwise() {
    let mask = ok(&["preset", "sliding-window", "--n", "8", "w=3"], "");
    let code = ok(&["export", "-", "--to", "flex"], &mask);
    assert!(code.contains("return ((kv_idx <= q_idx) & ((q_idx - kv_idx) < 3))"), "{code}");
    assert!(code.contains("create_block_mask(mask_mod, B=None, H=None, Q_LEN=N, KV_LEN=N"), "{code}");
    assert!(code.contains("BLOCK_SIZE = 128"));
    let grid = ok(&["convert", "-", "--to", "text"], &mask);
    let painted = ok(&["export", "-", "--to", "flex", "--block-size", "16"], &grid);
    assert!(painted.contains("no provenance") && painted.contains("return MASK[q_idx, kv_idx]"), "{painted}");
    assert!(painted.contains("BLOCK_SIZE = 16") && painted.contains("\"11......\","));
    // An edited mask keeps its provenance but loses the closed form.
    let edited = mask.replacen("\"1.......\"", "\"1......1\"", 1);
    assert_ne!(edited, mask);
    assert!(ok(&["export", "-", "--to", "flex"], &edited).contains("differs from preset 'sliding-window'"));
}

#[test]
fn derive_mask_out_records_the_preset_it_rebuilds() {
    let dir = std::env::temp_dir().join(format!("hasseflow-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("block.json");
    let out_s = out.to_str().expect("utf-8 path");
    ok(&["derive", "block", "--n", "6", "--block", "2", "--mask-out", out_s], "");
    let file = std::fs::read_to_string(&out).expect("mask written");
    assert!(file.contains("\"preset\": \"block-two-stream\""), "{file}");
    assert!(ok(&["export", out_s, "--to", "flex"], "").contains("# Closed form of preset 'block-two-stream'"));
    ok(&["derive", "block", "--n", "6", "--block", "2", "--mask-out", out_s, "--sparse"], "");
    assert!(!std::fs::read_to_string(&out).expect("mask written").contains("provenance"));
    ok(&["derive", "mae", "--n", "6", "--span", "2", "--mask-out", out_s], "");
    assert!(!std::fs::read_to_string(&out).expect("mask written").contains("provenance"));
    // The provenance and labels written, field for field: the app's designer opens a derived mask
    // with the same ones (`opening_a_derived_mask_keeps_the_provenance_the_cli_writes`).
    let written = |args: &[&str]| -> serde_json::Value {
        ok(&[&["derive"], args, &["--mask-out", out_s]].concat(), "");
        serde_json::from_str(&std::fs::read_to_string(&out).expect("mask written")).expect("mask file JSON")
    };
    let block = written(&["block", "--n", "8", "--block", "2"]);
    let want = serde_json::json!({"preset": "block-two-stream", "n": 8, "params": {
        "s": 2, "clean": "full", "query": "full", "prompt": 0, "drop_last": false, "order": "grouped"}});
    assert_eq!(block["provenance"], want);
    assert_eq!((block["labels"][0].as_str(), block["labels"][15].as_str()), (Some("w_0"), Some("m@7")));
    let butterfly = written(&["butterfly", "--n", "4"]);
    assert_eq!(
        butterfly["provenance"],
        serde_json::json!({"preset": "butterfly", "n": 4, "params": {"minimal": false}})
    );
    assert_eq!(butterfly["labels"][8], "w'_0[w_1]");
    assert!(ok(&["export", out_s, "--to", "flex"], "").contains("# Closed form of preset 'butterfly'"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn npy_round_trips_through_export_analyze_and_convert() {
    let grid = "1...\n11..\n.11.\n..11\n";
    let npy = hasseflow_bytes(&["export", "-", "--to", "npy"], grid.as_bytes());
    assert!(npy.status.success());
    assert!(npy.stdout.starts_with(b"\x93NUMPY\x01\x00"));
    let back = hasseflow_bytes(&["convert", "-", "--to", "text"], &npy.stdout);
    assert_eq!(String::from_utf8_lossy(&back.stdout), grid);
    let a = hasseflow_bytes(&["analyze", "-", "--json"], &npy.stdout);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).expect("one JSON object");
    assert_eq!(v["depth"], 3);
    let mut bad = npy.stdout.clone();
    let last = bad.len() - 1;
    bad[last] = 7;
    let out = hasseflow_bytes(&["analyze", "-"], &bad);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("<stdin>: invalid .npy mask: .npy cell (3, 3) holds 7"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
}

#[test]
fn export_dot_blocks_and_kernels() {
    let dot = ok(&["export", "-", "--to", "dot"], "11...\n11...\n111..\n1111.\n11111\n");
    assert!(dot.contains("c0 [label=\"0-1\"];") && dot.contains("c0 -> c1;") && dot.contains("rankdir=BT"), "{dot}");
    let causal = ok(&["preset", "causal", "--n", "8"], "");
    let blocks = ok(&["export", "-", "--to", "blocks", "--block-size", "4"], &causal);
    assert!(blocks.contains("tiles: 1 full, 2 partial, 1 empty (sparsity 25.00%)"), "{blocks}");
    let v = json(&["export", "-", "--to", "blocks-json", "--block-size", "4"], &causal);
    assert_eq!(v["grid"], serde_json::json!(["+.", "#+"]));
    let flash = json(&["export", "-", "--to", "flash"], &causal);
    assert_eq!((flash["representable"].as_bool(), flash["causal"].as_bool()), (Some(true), Some(true)));
    assert_eq!(flash["window_size"], serde_json::json!([-1, 0]));
    let fm = json(&["export", "-", "--to", "flashmask"], &causal);
    assert_eq!(fm["columns_needed"], 1);
    assert_eq!(fm["lts"], serde_json::json!([8, 8, 8, 8, 8, 8, 8, 8]));
    let strided = ok(&["preset", "dilated-window", "--n", "8", "w=3", "d=2"], "");
    let no = json(&["export", "-", "--to", "flash"], &strided);
    assert_eq!(no["representable"], false);
    assert!(no["reason"].as_str().is_some_and(|r| r.contains("not contiguous")), "{no}");
    let out = hasseflow(&["export", "-", "--to", "blocks", "--block-size", "0"], &causal);
    assert!(String::from_utf8_lossy(&out.stderr).contains("block size 0 is out of range"));
    assert!(ok(&["export", "--help"], "").contains("Usage"));
}

#[test]
fn kernel_parameters_import_back_into_the_same_mask() {
    // FlashMask columns of a document mask, and a FlashAttention window: export, import, compare.
    let doc = ok(&["preset", "document", "--n", "9", "segments=4,5", "causal=true"], "");
    let rows = |file: &str| ok(&["convert", "-", "--to", "text"], file);
    let columns = ok(&["export", "-", "--to", "flashmask"], &doc);
    assert_eq!(rows(&columns), rows(&doc), "flashmask export -> import is the identity");
    let window = ok(&["preset", "sliding-window", "--n", "7", "w=3"], "");
    let flash = ok(&["export", "-", "--to", "flash"], &window);
    assert_eq!(ok(&["convert", "-", "--n", "7", "--to", "text"], &flash), rows(&window));
    // Other commands read kernel files too (FlashMask records its size).
    let v = json(&["analyze", "-", "--json"], &columns);
    assert_eq!(v["n"], 9);
    // A FlashAttention window without a size, and a refused verdict, fail with one clear line.
    let out = hasseflow(&["convert", "-"], &flash);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--n N"), "{}", String::from_utf8_lossy(&out.stderr));
    let strided = ok(&["preset", "dilated-window", "--n", "8", "w=3", "d=2"], "");
    let refused = ok(&["export", "-", "--to", "flash"], &strided);
    let out = hasseflow(&["convert", "-", "--n", "8"], &refused);
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot represent"));
}

#[test]
fn flow_json_on_the_cpu_agrees_with_reach() {
    let mask = ok(&["preset", "sliding-window", "--n", "12", "w=3"], "");
    let v =
        json(&["flow", "-", "--layers", "5", "--d-model", "16", "--heads", "2", "--backend", "cpu", "--json"], &mask);
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["n"], 12);
    assert_eq!(v["exact"], true);
    let layers = v["layers"].as_array().expect("layers array");
    assert_eq!(layers.len(), 5);
    for (i, l) in layers.iter().enumerate() {
        assert_eq!(l["layer"], i + 1);
        assert_eq!(l["agreement"], 1.0);
        assert_eq!(l["rollout_agreement"], 1.0);
    }
    // R(1) of a window of 3 over 12 positions: 12 + 11 + 10 cells.
    assert_eq!(layers[0]["reach"], 33);
    assert!(v["timings_ms"]["compute"].as_f64().is_some());
}

#[test]
fn flow_on_the_gpu_names_its_adapter() {
    // Fails (does not skip) without an adapter: CI installs lavapipe.
    let mask = ok(&["preset", "butterfly", "--n", "4"], "");
    let out = hasseflow(&["flow", "-", "--layers", "3", "--backend", "gpu", "--json"], &mask);
    assert!(
        out.status.success(),
        "flow --backend gpu failed (no GPU adapter? install mesa-vulkan-drivers): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["backend"], "gpu");
    assert!(!v["adapter"].as_str().expect("adapter name").is_empty());
    assert_eq!(v["exact"], true);
    let text = ok(&["flow", "-", "--layers", "2", "--backend", "gpu"], &mask);
    assert!(text.contains("backend: gpu ("), "{text}");
    assert!(text.contains("timings:"), "{text}");
}

#[test]
fn flow_runs_a_layer_stack_and_rejects_bad_models() {
    let stack = r#"{"format":"hasseflow-mask","version":1,"n":3,"rows":["1..","11.","111"],
        "stack":{"mode":"once","layers":[{"heads":[{"rows":["1..","11.","111"]}]},{"heads":[{"rows":["111",".11","..1"]}]}]}}"#;
    let v = json(&["flow", "-", "--backend", "cpu", "--json", "--d-model", "16", "--heads", "1"], stack);
    let layers = v["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 2, "a stack's layer count is the default");
    assert_eq!(layers[1]["reach"], 9);
    assert_eq!(v["exact"], true);
    let out = hasseflow(&["flow", "-", "--heads", "3"], "1.\n11\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a multiple of heads"));
    let out = hasseflow(&["flow", "-", "--layers", "17", "--backend", "cpu"], "1.\n11\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("layers must be between 1 and 16"));
}

#[test]
fn export_svg_and_png_draw_the_diagram_and_the_grid() {
    let file = r#"{"format":"hasseflow-mask","version":1,"n":3,"rows":["1..","11.","111"],
      "labels":["<img src=x onerror=alert(1)>","b","c"]}"#;
    let svg = ok(&["export", "-", "--to", "svg"], file);
    assert!(svg.starts_with("<?xml") || svg.starts_with("<svg"), "{svg}");
    assert!(svg.contains("&lt;img"), "labels are escaped: {svg}");
    assert!(!svg.contains("<img"), "no markup from labels");
    let png = hasseflow_bytes(&["export", "-", "--to", "png"], file.as_bytes());
    assert!(png.status.success());
    assert!(png.stdout.starts_with(b"\x89PNG\r\n\x1a\n"));
    // IHDR: 3 cells of 16 pixels.
    assert_eq!(&png.stdout[16..24], &[0, 0, 0, 48, 0, 0, 0, 48]);
}

#[test]
fn mask_mod_python_is_read_by_every_command() {
    let text = "import torch\nW = 2\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    return (kv_idx <= q_idx) & (q_idx - kv_idx < W)\n";
    assert_eq!(ok(&["convert", "-", "--n", "4", "--to", "text"], text), "1...\n11..\n.11.\n..11\n");
    // analyze, export and op read it too; N in the text gives the size.
    let with_n = format!("N = 5\n{text}");
    assert_eq!(json(&["analyze", "-", "--json"], &with_n)["n"], 5);
    assert_eq!(json(&["analyze", "-", "--json", "--n", "3"], &with_n)["n"], 3);
    assert!(ok(&["export", "-", "--to", "blocks", "--block-size", "2"], &with_n).contains("tiles"));
    assert_eq!(ok(&["op", "transpose", "-", "--format", "text", "--n", "3"], text), "11.\n.11\n..1\n");
    // Export -> import is the identity for a closed form.
    let preset = ok(&["preset", "butterfly", "--n", "4"], "");
    let code = ok(&["export", "-", "--to", "flex"], &preset);
    assert_eq!(ok(&["convert", "-", "--to", "text"], &code), ok(&["convert", "-", "--to", "text"], &preset));
    // Refusals: one line naming the construct and where; no size; exit non-zero.
    let out = hasseflow(&["convert", "-", "--n", "4"], "def f(b, h, q, k):\n    return torch.where(q > k, 1, 0)\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("line 2, column 12: name `torch` is not defined (NameError)"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let out = hasseflow(&["analyze", "-"], "m = lambda b, h, q, k: q >= k\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no size: give n"));
}

/// A packed-document mask from a 131072-token lookup tensor (40 documents of random lengths),
/// analysed on the structured engine, equals its closed form: causal within each document.
#[test]
fn a_document_mask_mod_from_a_lookup_tensor_is_analysed_exactly_at_131072() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let n: u64 = 131_072;
    let mut cuts: Vec<u64> = (0..39).map(|_| 1 + next() % (n - 1)).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut lengths = Vec::new();
    let mut prev = 0;
    for c in cuts.iter().copied().chain([n]) {
        lengths.push(c - prev);
        prev = c;
    }
    let text = format!(
        "import torch\nlengths = {lengths:?}\n\
         document_id = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))\n\n\
         def document_causal(b, h, q_idx, kv_idx):\n    \
         return (document_id[q_idx] == document_id[kv_idx]) & (q_idx >= kv_idx)\n"
    );
    let dir = std::env::temp_dir().join(format!("hasseflow-doc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("doc.py");
    std::fs::write(&path, &text).unwrap();
    let v = json(&["analyze", path.to_str().unwrap(), "--n", "131072", "--json"], "");
    std::fs::remove_dir_all(&dir).ok();
    let closed: u64 = lengths.iter().map(|l| l * (l + 1) / 2).sum();
    assert_eq!(v["engine"], "structured");
    assert_eq!(v["depth"], 1, "a causal mask is its own closure");
    assert_eq!(v["reach"]["n"], n);
    assert_eq!(v["reach"]["limit_cells"], closed);
    assert_eq!(v["reach"]["growth"][1], closed);
    assert_eq!(v["reach"]["limit"]["classes"], n, "a causal order: every position its own class");
    assert_eq!(v["reach"]["limit"]["hasse"]["node_count"], lengths.len(), "one chain per document");
}

//! End-to-end tests of `hasseflow model`: gallery names, config files, packed documents, and
//! one-line refusals.

use std::process::{Command, Output};

fn hasseflow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hasseflow")).args(args).output().expect("the binary runs")
}

fn ok(args: &[&str]) -> String {
    let out = hasseflow(args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).expect("exactly one JSON object")
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hasseflow-model-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    path
}

#[test]
fn gallery_model_json_lists_one_type_per_layer() {
    let v = json(&["model", "gemma-3-27b-it", "--context", "8192", "--docs", "4096,4096", "--row", "5", "--json"]);
    assert_eq!(v["n"], 8192);
    assert_eq!(v["layers"], 62);
    assert_eq!(v["causal"], true);
    assert_eq!(v["types"][0], "sliding_attention(1024)");
    assert_eq!(v["types"][5], "full_attention");
    assert_eq!(v["types"].as_array().map(Vec::len), Some(62));
    assert_eq!(v["docs"], serde_json::json!([4096, 4096]));
    // Row 5 at layer 1: the window of 1024 keys ending at 5, all inside the first document.
    assert_eq!(v["rows"]["5"].as_array().map(Vec::len), Some(62));
    assert_eq!(v["rows"]["5"][0], serde_json::json!([[0, 5]]));
    assert_eq!(v["growth"].as_array().map(Vec::len), Some(63));
    assert_eq!(v["growth"][0], 8192);
    // Each sliding layer reaches 1023 further back: ceil(4095 / 1023) = 5 layers fill a 4096 document.
    assert_eq!(v["full_at"], 5);
    assert_eq!(v["shortfall"], serde_json::Value::Null);
    assert_eq!(v["leaks"], false);
    // Two causal documents: the limit is two chains.
    assert_eq!(v["limit"]["hasse"]["node_count"], 2);
    assert_eq!(v["max_position_embeddings"], 131072);
    assert!(v["source"].as_str().is_some_and(|s| s.contains("google/gemma-3-27b-it")));
}

/// `--images`: an image token reads its whole image ahead from layer 1 (Gemma 3's sliding layer:
/// `w - 1` keys back, the image ahead), a text token only what is behind it; the text report
/// lists the spans, and packed documents cut an image at their boundary.
#[test]
fn image_spans_read_each_other_both_ways() {
    let v = json(&[
        "model",
        "gemma-3-27b-it",
        "--context",
        "4096",
        "--images",
        "2000:300, 10:6",
        "--row",
        "12",
        "--row",
        "9",
        "--json",
    ]);
    assert_eq!(v["images"], serde_json::json!([[10, 6], [2000, 300]]));
    assert_eq!(v["rows"]["12"][0], serde_json::json!([[0, 15]]));
    assert_eq!(v["rows"]["9"][0], serde_json::json!([[0, 9]]));
    let plain = json(&["model", "gemma-3-27b-it", "--context", "4096", "--row", "12", "--json"]);
    assert_eq!(plain["rows"]["12"][0], serde_json::json!([[0, 12]]));
    assert_ne!(v["growth"], plain["growth"]);
    let cut = json(&[
        "model",
        "gemma-3-27b-it",
        "--context",
        "4096",
        "--docs",
        "14,4082",
        "--images",
        "10:6",
        "--row",
        "12",
        "--json",
    ]);
    assert_eq!(cut["rows"]["12"][0], serde_json::json!([[0, 13]]));
    assert_eq!(cut["leaks"], false);
    let text = ok(&["model", "gemma-3-27b-it", "--context", "4096", "--images", "10:6,2000:300"]);
    assert!(text.contains("images   2 spans (START:LEN, read both ways): 10:6,2000:300"), "{text}");
    // One image of 256 tokens is one class of the limit: a chain, the image, a chain.
    let one = json(&["model", "gemma-3-27b-it", "--context", "4096", "--images", "100:256", "--json"]);
    assert_eq!(one["limit"]["classes"], 4096 - 255);
    assert_eq!(one["limit"]["hasse"]["node_count"], 3);
    assert!(
        ok(&["model", "gemma-3-27b-it", "--context", "4096", "--images", "100:256"]).contains("images   1 span (START")
    );
    let out = hasseflow(&["model", "mistral-7b-v0.1", "--context", "64", "--images", "2:4"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("note: image spans are read by Gemma 3's rule"));
}

#[test]
fn list_shows_every_gallery_model() {
    let text = ok(&["model", "--list"]);
    for name in ["mistral-7b-v0.1", "gemma-2-9b", "llama-4-scout-17b-16e", "modernbert-base", "longformer-base-4096"] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    let v = json(&["model", "--list", "--json"]);
    let entries = v.as_array().expect("array");
    assert!(entries.len() >= 10);
    assert!(entries.iter().all(|e| e["source"].as_str().is_some_and(|s| s.starts_with("https://huggingface.co/"))));
}

#[test]
fn config_file_and_segments_file() {
    let config = temp_file(
        "config.json",
        r#"{"model_type": "qwen2", "num_hidden_layers": 4, "use_sliding_window": true,
            "sliding_window": 16, "max_window_layers": 2}"#,
    );
    let segments = temp_file("segments.txt", "0 0 0 1 1 2 2 2\n");
    let config = config.to_str().expect("utf-8 path");
    let v = json(&["model", config, "--context", "8", "--segments", segments.to_str().expect("path"), "--json"]);
    assert_eq!(
        v["types"],
        serde_json::json!(["full_attention", "full_attention", "sliding_attention(16)", "sliding_attention(16)"])
    );
    assert_eq!(v["docs"], serde_json::json!([3, 2, 3]));
    assert_eq!(v["name"], "config.json");
    let text = ok(&["model", config, "--context", "8"]);
    assert!(text.contains("layers   4: 2 x full_attention, 2 x sliding_attention(16)"), "{text}");
}

#[test]
fn bad_input_fails_with_one_line() {
    let bad = temp_file("bad.json", r#"{"model_type": "gemma2", "sliding_window": 0}"#);
    let unknown = temp_file("unknown.json", r#"{"model_type": "bloomish", "num_hidden_layers": 2}"#);
    let malformed = temp_file("malformed.json", "{oops");
    let reused = temp_file("reused.json", "[0, 0, 1, 0]");
    let (bad, unknown, malformed, reused) = (
        bad.to_str().expect("path"),
        unknown.to_str().expect("path"),
        malformed.to_str().expect("path"),
        reused.to_str().expect("path"),
    );
    for (args, needle) in [
        (vec!["model", bad, "--context", "4"], "sliding_window: must be a positive integer"),
        (vec!["model", unknown, "--context", "4"], "model_type: unknown model type \"bloomish\""),
        (vec!["model", malformed, "--context", "4"], "malformed JSON"),
        (vec!["model", "no-such-model", "--context", "4"], "no such file or gallery model"),
        (vec!["model", "gpt-oss-20b"], "--context"),
        (vec!["model", "gpt-oss-20b", "--context", "4", "--docs", "1,2"], "docs: lengths sum to 3"),
        (vec!["model", "gpt-oss-20b", "--context", "4", "--segments", reused], "segments: id 0 at position 3"),
        (vec!["model", "gpt-oss-20b", "--context", "4", "--row", "4"], "--row"),
        (
            vec!["model", "gemma-3-27b-it", "--context", "64", "--images", "3:x"],
            "--images: entry 0 (\"3:x\") is not START:LEN",
        ),
        (vec!["model", "gemma-3-27b-it", "--context", "64", "--images", ""], "--images: give at least one span"),
        (
            vec!["model", "gemma-3-27b-it", "--context", "64", "--images", "60:8"],
            "--images: span 60:8 ends at 68, past the context 64",
        ),
        (
            vec!["model", "gemma-3-27b-it", "--context", "64", "--images", "2:8,6:4"],
            "--images: spans 2:8 and 6:4 overlap",
        ),
        (
            vec!["model", "gemma-3-27b-it", "--context", "64", "--images", "2:4,6:4"],
            "--images: spans 2:4 and 6:4 touch",
        ),
        (vec!["model", "gemma-3-27b-it", "--context", "64", "--images", "2:0"], "--images: span 2:0 has no tokens"),
        (
            vec!["model", "t5-base", "--context", "64", "--images", "2:4"],
            "--images: image spans are not modelled for an encoder-decoder",
        ),
    ] {
        let out = hasseflow(&args);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
}

/// The one line of a failed run.
fn refusal(args: &[&str]) -> String {
    let out = hasseflow(args);
    assert!(!out.status.success(), "{args:?} should fail");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

/// Issue 19: `hasseflow model` aborted on allocation for contexts from about 1.3·10⁸ to 2³² − 2
/// (Llama 4 Scout at 150,000,000). Now a run over the memory limit is refused before it
/// allocates, at once, with the context, the estimate, the limit and what to do instead.
#[test]
fn a_context_over_the_memory_limit_is_refused_at_once() {
    let start = std::time::Instant::now();
    let err = refusal(&["model", "llama-4-scout-17b-16e", "--context", "4294967294"]);
    assert!(start.elapsed() < std::time::Duration::from_secs(10), "refused before running: {:?}", start.elapsed());
    // The default limit is 8 GiB, or three quarters of the available memory when that is less.
    assert!(
        err.starts_with(
            "hasseflow: context 4294967294: the reach run would need about 86.0 GiB (estimate), more than the "
        ) && err.contains(" GiB limit; a context of at most "),
        "{err}"
    );
    assert!(
        err.contains("fits, or raise the limit with --max-memory GIB (now ") && err.trim_end().ends_with(" GiB)"),
        "{err}"
    );
    let err = refusal(&["model", "llama-4-scout-17b-16e", "--context", "4294967294", "--max-memory", "8"]);
    assert!(err.contains("more than the 8.0 GiB limit; a context of at most 399335557 fits"), "{err}");
    let err = refusal(&["model", "llama-4-scout-17b-16e", "--context", "150000000", "--max-memory", "1", "--json"]);
    assert!(err.contains("context 150000000:") && err.contains("more than the 1.0 GiB limit"), "{err}");
    for bad in ["0", "-1", "nan", "inf"] {
        let err = refusal(&["model", "gpt-oss-20b", "--context", "4", &format!("--max-memory={bad}")]);
        assert!(err.contains("--max-memory: must be a positive number of GiB"), "{err}");
    }
    // Past u32, the engine's own refusal.
    let err = refusal(&["model", "gpt-oss-20b", "--context", "4294967295"]);
    assert!(err.contains("positions are 32-bit"), "{err}");
}

/// The largest context a limit accepts runs, and one more is refused (a small limit keeps the
/// run cheap).
#[test]
fn the_largest_context_within_the_limit_runs() {
    let err = refusal(&["model", "mistral-7b-v0.1", "--context", "100000000", "--max-memory", "0.01"]);
    let fits: u64 = err
        .split("a context of at most ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no largest context in: {err}"));
    assert!((100_000..1_000_000).contains(&fits), "{fits}");
    let fits_text = fits.to_string();
    let v = json(&["model", "mistral-7b-v0.1", "--context", &fits_text, "--max-memory", "0.01", "--json"]);
    assert_eq!(v["n"], fits);
    let more = (fits + 1).to_string();
    let err = refusal(&["model", "mistral-7b-v0.1", "--context", &more, "--max-memory", "0.01"]);
    assert!(err.contains(&format!("a context of at most {fits} fits")), "{err}");
}

/// Coverage is rounded down: Mistral's last layer at 131072 misses 496 of about 8.6e9 cells, so it
/// reads 99.99%, never 100.00% (it did, rounded to nearest), while a full layer reads 100.00%.
#[test]
fn coverage_never_rounds_a_short_layer_up_to_100() {
    let text = ok(&["model", "mistral-7b-v0.1", "--context", "131072"]);
    let row = |l: &str| {
        text.lines()
            .find(|line| line.split_whitespace().next() == Some(l))
            .unwrap_or_else(|| panic!("no row for layer {l} in:\n{text}"))
            .to_string()
    };
    assert!(row("32").contains(" 99.99%"), "{}", row("32"));
    assert!(!text.contains("100.00%"), "a short layer printed as full:\n{text}");
    let full = ok(&["model", "mistral-7b-v0.1", "--context", "8192"]);
    let last = full.lines().rev().find(|line| line.split_whitespace().next() == Some("32")).expect("row 32");
    assert!(last.contains("100.00%"), "{last}");
}

//! Unit tests of the catalog.

use super::*;

fn build(name: &str, n: usize, params: &[(&str, &str)]) -> BitMatrix {
    let params = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    build_preset(name, n, &params, 1 << 13).unwrap()
}

#[test]
fn every_preset_builds_with_defaults() {
    for spec in CATALOG {
        for n in [1, 2, 7, 16] {
            let m = build(spec.name, n, &[]);
            assert!(m.n() >= n, "{} n={n}", spec.name);
        }
    }
}

#[test]
fn two_stream_sizes() {
    assert_eq!(build("block-two-stream", 6, &[("s", "2"), ("drop_last", "true")]).n(), 10);
    assert_eq!(build("block-two-stream", 7, &[("s", "3"), ("drop_last", "true")]).n(), 13);
    assert_eq!(build("block-two-stream", 6, &[("s", "2"), ("prompt", "3")]).n(), 15);
    assert_eq!(build("butterfly", 4, &[("minimal", "true")]).n(), 10);
    assert_eq!(build("xlnet", 5, &[("perm", "4,3,2,1,0")]).n(), 10);
}

#[test]
fn xlnet_identity_is_block_two_stream_s1() {
    assert_eq!(build("xlnet", 6, &[]), build("block-two-stream", 6, &[("s", "1")]));
}

#[test]
fn errors_name_the_problem() {
    let bad = |name: &str, params: &[(&str, &str)]| {
        let params = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        build_preset(name, 8, &params, 1 << 13).unwrap_err().to_string()
    };
    assert!(bad("nope", &[]).contains("unknown preset 'nope'"));
    assert!(bad("causal", &[("w", "3")]).contains("no parameter 'w'"));
    assert!(bad("sliding-window", &[("w", "0")]).contains("at least 1"));
    assert!(bad("sliding-window", &[("w", "x")]).contains("not a non-negative integer"));
    assert!(bad("document", &[("segments", "3,3")]).contains("sum to n = 8"));
    assert!(bad("xlnet", &[("perm", "0,0,1,2,3,4,5,6")]).contains("permutation"));
    assert!(bad("random", &[("p", "2")]).contains("between 0 and 1"));
    assert!(bad("block-two-stream", &[("order", "zigzag")]).contains("grouped, interleaved"));
    assert!(build_preset("causal", 9000, &BTreeMap::new(), 8192).is_err());
}

#[test]
fn decimals_parse_as_std_does_within_the_fast_path() {
    use super::args::parse_decimal;
    for text in [
        "0",
        "1",
        "0.25",
        ".5",
        "5.",
        "0.3",
        "0.1",
        "1e-3",
        "2.5E-3",
        "0.000001",
        "123456789012345",
        "0.999999999999999",
    ] {
        assert_eq!(parse_decimal(text), text.parse::<f64>().ok(), "{text}");
    }
    // Every decimal with up to 15 digits and a point anywhere, against std (pseudo-random digits).
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let digits = (x % 1_000_000_000_000_000).to_string();
        let point = usize::try_from(x >> 59).unwrap_or(0) % (digits.len() + 1);
        let text = format!("{}.{}", &digits[..point], &digits[point..]);
        let exp = format!("{text}e-{}", (x >> 40) % 8);
        for t in [text, exp] {
            assert_eq!(parse_decimal(&t).map(f64::to_bits), t.parse::<f64>().ok().map(f64::to_bits), "{t}");
        }
    }
    for bad in ["", ".", "e3", "1e", "-0.5", "+1", "0x1", "1.2.3", "nan", "inf", "1 ", "0.1234567890123456", "1e-30"] {
        assert_eq!(parse_decimal(bad), None, "{bad:?}");
    }
}

#[test]
fn provenance_types_parameters_by_their_kind() {
    use super::preset_provenance;
    let given = BTreeMap::from([
        ("p".to_string(), "0.25".to_string()),
        ("causal".to_string(), "false".to_string()),
        ("seed".to_string(), "7".to_string()),
    ]);
    let p = preset_provenance("random", 16, &given);
    assert_eq!((p.preset.as_str(), p.n), ("random", 16));
    assert_eq!(p.params["p"], serde_json::json!(0.25));
    assert_eq!(p.params["causal"], serde_json::json!(false));
    assert_eq!(p.params["seed"], serde_json::json!(7));
    // Text that is not of its kind stays text (build_preset refuses it with a reason).
    let odd = BTreeMap::from([("p".to_string(), "half".to_string())]);
    assert_eq!(preset_provenance("random", 4, &odd).params["p"], serde_json::json!("half"));
    let lists = BTreeMap::from([("segments".to_string(), "3,2".to_string())]);
    assert_eq!(preset_provenance("document", 5, &lists).params["segments"], serde_json::json!("3,2"));
}

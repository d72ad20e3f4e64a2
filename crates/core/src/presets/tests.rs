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

//! Unit tests of the FlexAttention writer.

use super::*;
use crate::presets::CATALOG;

use crate::interop::mask_mod::MaskMod;

/// Reads `expr` back as a `mask_mod` (the importer researchers use) and compares every cell
/// with `mask`.
pub(crate) fn check(expr: &str, mask: &BitMatrix, what: &str) {
    let code = format!("def mask_mod(b, h, q_idx, kv_idx):\n    return {}\n", wrap(expr));
    let m = MaskMod::parse(&code).unwrap_or_else(|e| panic!("{what}: {expr}: {e}"));
    let got = m.to_mask(mask.n()).unwrap_or_else(|e| panic!("{what}: {expr}: {e}"));
    assert_eq!(&got, mask, "{what}: {expr}");
}

fn params(list: &[(&str, &str)]) -> BTreeMap<String, String> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Parameter sets per preset, including the option combinations of the slot layouts.
pub(crate) fn cases() -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    let mut out: Vec<(&'static str, Vec<(&'static str, &'static str)>)> =
        CATALOG.iter().map(|s| (s.name, vec![])).collect();
    out.extend([
        ("sliding-window", vec![("w", "1")]),
        ("sliding-window", vec![("w", "7")]),
        ("bidirectional-window", vec![("r", "0")]),
        ("dilated-window", vec![("w", "3"), ("d", "3")]),
        ("chunked-causal", vec![("c", "3")]),
        ("block-causal", vec![("s", "3")]),
        ("prefix-lm", vec![("p", "0")]),
        ("prefix-lm", vec![("p", "5")]),
        ("document", vec![("length", "3"), ("causal", "true")]),
        ("sink-window", vec![("sinks", "0"), ("w", "2")]),
        ("longformer", vec![("g", "0"), ("r", "1")]),
        ("bigbird", vec![("b", "2"), ("random", "2"), ("seed", "5")]),
        ("bigbird", vec![("b", "3"), ("random", "0"), ("g", "0")]),
        ("strided", vec![("l", "3")]),
        ("fixed", vec![("l", "3"), ("c", "2")]),
        ("fixed", vec![("l", "2"), ("c", "5")]),
    ]);
    for clean in ["full", "causal"] {
        for query in ["full", "causal"] {
            for prompt in ["0", "2"] {
                for drop in ["false", "true"] {
                    for order in ["grouped", "interleaved"] {
                        for s in ["1", "2", "3"] {
                            out.push((
                                "block-two-stream",
                                vec![
                                    ("s", s),
                                    ("clean", clean),
                                    ("query", query),
                                    ("prompt", prompt),
                                    ("drop_last", drop),
                                    ("order", order),
                                ],
                            ));
                        }
                    }
                }
            }
        }
    }
    out.push(("butterfly", vec![("minimal", "true")]));
    out
}

#[test]
fn closed_forms_equal_their_presets() {
    let mut closed = 0;
    for (name, list) in cases() {
        for n in [1, 2, 3, 6, 9, 13] {
            let p = params(&list);
            let n = if name == "butterfly" { n.max(2) } else { n };
            let (p, n) = if name == "document" && n == 6 && list.is_empty() {
                (params(&[("segments", "1,3,2"), ("causal", "true")]), n)
            } else {
                (p, n)
            };
            let Ok(mask) = build_preset(name, n, &p, MAX_N) else { continue };
            match preset_expression(name, n, &p, &mask) {
                Ok(expr) => {
                    closed += 1;
                    check(&expr, &mask, &format!("{name} n={n} {p:?}"));
                }
                Err(reason) => {
                    let ok = name == "random"
                        || (name == "block-two-stream"
                            && p.get("order").is_some_and(|o| o == "interleaved")
                            && (p.get("drop_last").is_some_and(|d| d == "true")
                                || !n.is_multiple_of(p.get("s").and_then(|s| s.parse().ok()).unwrap_or(2))));
                    assert!(ok, "{name} n={n} {p:?} has no closed form: {reason}");
                }
            }
        }
    }
    assert!(closed > 500, "{closed} closed forms checked");
}

#[test]
fn derived_masks_get_the_closed_form_of_the_preset_they_reproduce() {
    use crate::derive::{self, BlockOptions, BuiltinFamily, ButterflyOptions};
    let mut checked = 0;
    for n in [2, 5, 8] {
        let mut specs: Vec<BuiltinFamily> = Vec::new();
        for block in [1, 2, 3] {
            for (clean, query, prompt, minimal, order) in [
                (Inner::Full, Inner::Full, 0, false, TwoStreamOrder::Grouped),
                (Inner::Causal, Inner::Causal, 2, true, TwoStreamOrder::Grouped),
                (Inner::Full, Inner::Causal, 1, false, TwoStreamOrder::Interleaved),
            ] {
                specs.push(BuiltinFamily::Block(BlockOptions { n, block, clean, query, prompt, minimal, order }));
            }
        }
        for minimal in [false, true] {
            specs.push(BuiltinFamily::Butterfly(ButterflyOptions { minimal, ..ButterflyOptions::new(n) }));
        }
        for spec in specs {
            let d = derive::derive(&spec.build().unwrap()).unwrap();
            let file = spec.mask_file(&d, false);
            assert!(file.provenance.is_some(), "{} reproduces its preset", spec.describe());
            // Some block layouts take the lookup form; butterfly always has a closed form.
            match closed_form(&file) {
                Ok(expr) => {
                    check(&expr, d.dense(), &format!("derived {}", spec.describe()));
                    checked += 1;
                }
                Err(e) => assert!(matches!(spec, BuiltinFamily::Block(_)), "{}: {e}", spec.describe()),
            }
        }
    }
    assert!(checked >= 20, "{checked}");
}

#[test]
fn lookup_when_provenance_is_missing_or_stale() {
    let mask = BitMatrix::from_fn(5, |q, k| k <= q);
    let plain = flex_python(&MaskFile::new(mask.clone()), 128).unwrap();
    assert!(matches!(plain.form, FlexForm::Lookup(ref r) if r.contains("no provenance")));
    assert!(plain.code.contains("\"11...\","));
    let prov = Provenance { preset: "identity".into(), n: 5, params: BTreeMap::new() };
    let stale = MaskFile { provenance: Some(prov.clone()), ..MaskFile::new(mask.clone()) };
    assert!(matches!(flex_python(&stale, 128).unwrap().form, FlexForm::Lookup(ref r) if r.contains("differs")));
    assert_eq!(provenance_if_matches(&mask, prov), None);
    let causal = Provenance { preset: "causal".into(), n: 5, params: BTreeMap::new() };
    assert_eq!(provenance_if_matches(&mask, causal.clone()), Some(causal));
    let big = BitMatrix::from_fn(70, |q, k| (q * 3 + k) % 5 == 0);
    let code = flex_python(&MaskFile::new(big), 16).unwrap().code;
    assert!(code.contains("_PACKED = (") && code.contains("unpackbits"));
    assert_eq!(flex_python(&MaskFile::new(mask), 0).unwrap_err(), FlexError::BlockSize { block_size: 0 });
}

#[test]
fn exports_read_back_as_the_same_mask() {
    // Export -> import is the identity for every closed form of every catalog case: the
    // whole generated file (constants, helper, __main__ block) goes through the importer.
    let mut round_trips = 0;
    for (name, list) in cases() {
        for n in [1, 2, 5, 12] {
            let p = params(&list);
            let n = if name == "butterfly" { n.max(2) } else { n };
            let Ok(mask) = build_preset(name, n, &p, MAX_N) else { continue };
            let prov = Provenance {
                preset: name.to_string(),
                n,
                params: p.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect(),
            };
            let file = MaskFile { provenance: Some(prov), ..MaskFile::new(mask.clone()) };
            let out = flex_python(&file, 16).unwrap();
            match out.form {
                FlexForm::ClosedForm(_) => {
                    let back = MaskMod::parse(&out.code).unwrap_or_else(|e| panic!("{name} n={n}: {e}"));
                    assert_eq!(back.declared_n(), Some(mask.n()));
                    assert_eq!(back.to_mask_sized(None).unwrap(), mask, "{name} n={n} {p:?}");
                    round_trips += 1;
                }
                FlexForm::Lookup(_) => {
                    let e = MaskMod::parse(&out.code).unwrap_err().to_string();
                    assert!(e.starts_with("line ") && e.contains("is not supported"), "{name}: {e}");
                }
            }
        }
    }
    assert!(round_trips > 300, "{round_trips} round trips");
}

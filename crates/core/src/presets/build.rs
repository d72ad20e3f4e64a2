//! Building a preset from its catalog entry and parameters: the masks and their labels.

use super::args::{BadValue, param_names, parse_decimal, unknown_param};
use super::*;

/// A preset's parameters, read by their catalog entries.
pub(super) use super::args::Args;

impl From<BadValue> for PresetError {
    fn from(b: BadValue) -> Self {
        PresetError::BadValue { preset: b.owner.into(), param: b.param, value: b.value, reason: b.reason }
    }
}

/// The arguments of `spec` from `given`.
fn args<'a>(spec: &'static PresetSpec, given: &'a BTreeMap<String, String>) -> Args<'a> {
    Args { owner: spec.name, params: &spec.params, given }
}

pub(super) fn two_stream_from(a: &Args<'_>, n: usize) -> Result<BlockTwoStream, PresetError> {
    Ok(BlockTwoStream {
        n,
        block: a.int("s")?,
        clean: Inner::from_word(a.choice("clean")?),
        query: Inner::from_word(a.choice("query")?),
        prompt: a.int("prompt")?,
        drop_last: a.flag("drop_last")?,
        order: if a.choice("order")? == "interleaved" { TwoStreamOrder::Interleaved } else { TwoStreamOrder::Grouped },
    })
}

/// Builds a preset by name for `n` tokens with text parameters (missing ones take their defaults).
///
/// # Errors
/// Unknown preset or parameter, a value that does not parse or is out of range, or a size outside
/// `1..=max_positions`.
///
/// # Examples
/// ```
/// use std::collections::BTreeMap;
/// use hasseflow_core::presets::build_preset;
/// let params = BTreeMap::from([("w".to_string(), "2".to_string())]);
/// let m = build_preset("sliding-window", 4, &params, 8192).unwrap();
/// assert_eq!(m.to_row_strings(), vec!["1...", "11..", ".11.", "..11"]);
/// ```
pub fn build_preset(
    name: &str,
    n: usize,
    params: &BTreeMap<String, String>,
    max_positions: usize,
) -> Result<BitMatrix, PresetError> {
    let spec = preset_spec(name).ok_or_else(|| PresetError::Unknown { name: name.into() })?;
    if let Some(bad) = unknown_param(&spec.params, params) {
        return Err(PresetError::UnknownParam {
            preset: name.into(),
            param: bad.clone(),
            accepted: param_names(&spec.params),
        });
    }
    let a = args(spec, params);
    let positions = match name {
        "xlnet" => 2 * n,
        "block-two-stream" => two_stream_from(&a, n)?.slots().len(),
        "butterfly" => Butterfly { n, minimal: a.flag("minimal")? }.slots().len(),
        _ => n,
    };
    if positions == 0 || positions > max_positions || n == 0 {
        return Err(PresetError::Size { preset: name.into(), n, positions, max: max_positions });
    }
    pub(super) fn f(n: usize, p: impl FnMut(usize, usize) -> bool) -> BitMatrix {
        BitMatrix::from_fn(n, p)
    }
    let m = match name {
        "full" => BitMatrix::ones(n),
        "causal" => f(n, |q, k| k <= q),
        "strictly-causal" => f(n, |q, k| k < q),
        "anti-causal" => f(n, |q, k| k >= q),
        "identity" => BitMatrix::identity(n),
        "cycle" => f(n, |q, k| k == (q + n - 1) % n),
        "sliding-window" => {
            let w = a.int("w")?;
            f(n, |q, k| k <= q && q - k < w)
        }
        "bidirectional-window" => {
            let r = a.int("r")?;
            f(n, |q, k| q.abs_diff(k) <= r)
        }
        "dilated-window" => {
            let (w, d) = (a.int("w")?, a.int("d")?);
            f(n, |q, k| k <= q && (q - k) % d == 0 && (q - k) / d < w)
        }
        "chunked-causal" => {
            let c = a.int("c")?;
            f(n, |q, k| k <= q && k / c == q / c)
        }
        "block-causal" => {
            let s = a.int("s")?;
            f(n, |q, k| k / s <= q / s)
        }
        "prefix-lm" => {
            let p = a.int("p")?;
            f(n, |q, k| k <= q || k < p)
        }
        "document" => {
            let mut segments = a.list("segments")?;
            if segments.is_empty() {
                let len = a.int("length")?;
                segments = (0..n).step_by(len).map(|s| len.min(n - s)).collect();
            }
            if segments.iter().sum::<usize>() != n || segments.contains(&0) {
                let v = segments.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
                return Err(a.bad("segments", &v, format!("positive lengths must sum to n = {n}")).into());
            }
            let seg: Vec<usize> =
                segments.iter().enumerate().flat_map(|(i, &len)| std::iter::repeat_n(i, len)).collect();
            let causal = a.flag("causal")?;
            f(n, |q, k| seg[q] == seg[k] && (!causal || k <= q))
        }
        "sink-window" => {
            let (sinks, w) = (a.int("sinks")?, a.int("w")?);
            f(n, |q, k| k <= q && (k < sinks || q - k < w))
        }
        "longformer" => {
            let (g, r) = (a.int("g")?, a.int("r")?);
            f(n, |q, k| q.abs_diff(k) <= r || q < g || k < g)
        }
        "bigbird" => {
            let (b, r, g, rand) = (a.int("b")?, a.int("r")?, a.int("g")?, a.int("random")?);
            let blocks = n.div_ceil(b);
            let mut rng = SplitMix64::new(a.int("seed")? as u64);
            let mut random = vec![vec![false; blocks]; blocks];
            for (bq, row) in random.iter_mut().enumerate() {
                if bq < g {
                    continue;
                }
                for _ in 0..rand.min(blocks) {
                    row[rng.below(blocks)] = true;
                }
            }
            f(n, |q, k| {
                let (bq, bk) = (q / b, k / b);
                bq.abs_diff(bk) <= r || bq < g || bk < g || random[bq][bk]
            })
        }
        "strided" => {
            let l = a.int("l")?;
            f(n, |q, k| k <= q && (q - k < l || (q - k) % l == 0))
        }
        "fixed" => {
            let (l, c) = (a.int("l")?, a.int("c")?);
            f(n, |q, k| k <= q && (k / l == q / l || k % l + c >= l))
        }
        "xlnet" => {
            let mut perm = a.list("perm")?;
            if perm.is_empty() {
                perm = (0..n).collect();
            }
            let mut seen = vec![false; n];
            let ok = perm.len() == n && perm.iter().all(|&t| t < n && !std::mem::replace(&mut seen[t], true));
            if !ok {
                let v = perm.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
                return Err(a.bad("perm", &v, format!("must be a permutation of 0..{n}")).into());
            }
            xlnet(n, &perm)
        }
        "block-two-stream" => two_stream_from(&a, n)?.mask(),
        "butterfly" => Butterfly { n, minimal: a.flag("minimal")? }.mask(),
        "random" => {
            let p = a.fraction("p")?;
            let causal = a.flag("causal")?;
            let mut rng = SplitMix64::new(a.int("seed")? as u64);
            f(n, |q, k| (!causal || k <= q) && rng.next_f64() < p)
        }
        _ => unreachable!("every CATALOG entry is built above"),
    };
    debug_assert_eq!(m.n(), positions, "preset {name} size formula");
    Ok(m)
}

/// Position labels of the presets whose positions are not one per token: Block Two-Stream
/// (`p_0.., w_0.., m@0..`), Butterfly (`F_0.., B_0.., P_0..`) and XLNet (`h_0.., g_0..`: content
/// and query stream). `None` for the others (position `i` is token `i`). Same arguments and errors as
/// [`build_preset`]; the labels follow its layout.
///
/// # Examples
/// ```
/// use std::collections::BTreeMap;
/// use hasseflow_core::presets::preset_labels;
/// let labels = preset_labels("butterfly", 2, &BTreeMap::new(), 64).unwrap().unwrap();
/// assert_eq!(labels, ["F_0", "F_1", "B_0", "B_1", "P_0", "P_1"]);
/// assert_eq!(preset_labels("causal", 4, &BTreeMap::new(), 64).unwrap(), None);
/// ```
pub fn preset_labels(
    name: &str,
    n: usize,
    params: &BTreeMap<String, String>,
    max_positions: usize,
) -> Result<Option<Vec<String>>, PresetError> {
    // Validates the name, the parameters and the size exactly as the mask does.
    build_preset(name, n, params, max_positions)?;
    let spec = preset_spec(name).ok_or_else(|| PresetError::Unknown { name: name.into() })?;
    let a = args(spec, params);
    let strings = |v: Vec<String>| Ok(Some(v));
    match name {
        "xlnet" => strings((0..n).map(|i| format!("h_{i}")).chain((0..n).map(|i| format!("g_{i}"))).collect()),
        "block-two-stream" => strings(two_stream_from(&a, n)?.slots().iter().map(ToString::to_string).collect()),
        "butterfly" => {
            strings(Butterfly { n, minimal: a.flag("minimal")? }.slots().iter().map(ToString::to_string).collect())
        }
        _ => Ok(None),
    }
}

/// The provenance of a mask built by [`build_preset`]`(name, n, given, _)`: the preset, `n`, and
/// the given parameters as JSON numbers and booleans where the parameter's kind says so (an
/// integer, a fraction, a flag), as text otherwise. What `hasseflow preset` writes and what the
/// app records when it loads a preset.
///
/// # Examples
/// ```
/// use std::collections::BTreeMap;
/// use hasseflow_core::presets::preset_provenance;
/// let given = BTreeMap::from([("w".to_string(), "3".to_string())]);
/// let p = preset_provenance("sliding-window", 8, &given);
/// assert_eq!((p.preset.as_str(), p.n, p.params["w"].as_u64()), ("sliding-window", 8, Some(3)));
/// ```
pub fn preset_provenance(name: &str, n: usize, given: &BTreeMap<String, String>) -> crate::format::Provenance {
    use serde_json::Value;
    let spec = preset_spec(name);
    let kind = |k: &str| spec.and_then(|s| s.params.iter().find(|p| p.name == k)).map(|p| p.kind);
    let mut params = BTreeMap::new();
    params.extend(given.iter().map(|(k, v)| {
        let typed = match kind(k) {
            Some(ParamKind::Int { .. }) => v.trim().parse::<u64>().ok().map(Value::from),
            Some(ParamKind::Fraction) => parse_decimal(v.trim()).map(Value::from),
            Some(ParamKind::Bool) => v.trim().parse::<bool>().ok().map(Value::from),
            _ => None,
        };
        (k.clone(), typed.unwrap_or_else(|| Value::String(v.clone())))
    }));
    crate::format::Provenance { preset: name.into(), n, params }
}

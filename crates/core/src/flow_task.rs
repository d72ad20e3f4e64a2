//! The flow run split across threads: what the web app asks its Web Workers (the third wasm
//! module, `crates/flow_worker`), as one JSON string, and how their answers become one
//! [`FlowRaw`].
//!
//! A flow run is the unperturbed pass plus `n` perturbed copies, and each copy depends only on
//! the unperturbed pass ([`CpuFlowJob::columns`]). So the app sends every worker the same
//! [`encode`]d request; one worker answers the unperturbed pass ([`base_answer`]: attention and
//! output), the others ranges of copies ([`CpuFlowJob::columns`]); [`raw_from_base`] and
//! [`FlowRaw::put_columns`] put them together into exactly [`run_flow`]'s measurements.
//!
//! The GPU path runs in a worker too (the device and its kernels are in that module, not in the
//! page's): it measures the whole run at once, answered by [`whole_answer`] and read back by
//! [`raw_from_whole`] with the [`BackendInfo`] the worker reported for its adapter.

use serde::{Deserialize, Serialize};

#[cfg(doc)]
use crate::flow::cpu::{CpuFlowJob, run_flow};
use crate::flow::{BackendInfo, FlowConfig, FlowError, FlowMasks, FlowModel, FlowRaw, MAX_LAYERS, MAX_N};
use crate::hex::{mask_hex, mask_unhex};

/// The request on the wire.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    config: FlowConfig,
    /// Positions.
    n: usize,
    /// The distinct masks, each [`crate::bits::pack_bits`] in hex (two digits a byte, low nibble second).
    masks: Vec<String>,
    /// For each layer, each head's index into `masks`.
    heads: Vec<Vec<usize>>,
}

/// Why a request or an answer cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlowTaskError {
    /// Not a request: malformed JSON, a field missing or unknown, an oversized text.
    #[error("not a flow request: {0}")]
    Request(String),
    /// A request whose model or masks are invalid.
    #[error("the flow request's model: {0}")]
    Model(#[from] FlowError),
    /// An answer of the wrong length.
    #[error("a flow worker's answer has {got} values, expected {expected}")]
    Answer {
        /// Values given.
        got: usize,
        /// Values the run needs.
        expected: usize,
    },
}

/// The longest request text read: 128 masks (16 layers of 8 heads) of 512 x 512, in hex.
const MAX_REQUEST_BYTES: usize = MAX_LAYERS * 8 * (MAX_N * MAX_N / 4 + 8) + 4096;

/// The request for a run of the model of `config` on `masks` (built from that config). The model's
/// weights are not sent: the worker makes them from the config (its seed), as the page would.
pub fn encode(config: &FlowConfig, masks: &FlowMasks) -> String {
    let wire = Wire {
        config: *config,
        n: masks.n(),
        masks: masks.distinct().iter().map(mask_hex).collect(),
        heads: (0..config.layers).map(|l| (0..config.heads).map(|h| masks.mask_index(l, h)).collect()).collect(),
    };
    serde_json::to_string(&wire).unwrap_or_default()
}

/// The model and masks of a request made by [`encode`].
///
/// # Errors
/// [`FlowTaskError::Request`] for a text that is not one (bounded before it is parsed), or
/// [`FlowTaskError::Model`] for a model or masks the engine refuses.
pub fn decode(request: &str) -> Result<(FlowModel, FlowMasks), FlowTaskError> {
    if request.len() > MAX_REQUEST_BYTES {
        return Err(FlowTaskError::Request(format!("{} bytes, at most {MAX_REQUEST_BYTES}", request.len())));
    }
    let wire: Wire = serde_json::from_str(request).map_err(|e| FlowTaskError::Request(e.to_string()))?;
    wire.config.validate()?;
    if !(1..=MAX_N).contains(&wire.n) {
        return Err(FlowError::Positions(wire.n).into());
    }
    if wire.masks.len() > wire.config.layers * wire.config.heads {
        return Err(FlowTaskError::Request(format!(
            "{} masks for {} heads",
            wire.masks.len(),
            wire.config.layers * wire.config.heads
        )));
    }
    let mut distinct = Vec::with_capacity(wire.masks.len());
    for (i, text) in wire.masks.iter().enumerate() {
        distinct.push(mask_unhex(text, wire.n).map_err(|e| FlowTaskError::Request(format!("mask {i} {e}")))?);
    }
    let masks = FlowMasks::from_parts(distinct, wire.heads, &wire.config)?;
    let model = FlowModel::new(wire.config, masks.n())?;
    Ok((model, masks))
}

/// The unperturbed pass of a request's run as one answer ([`CpuFlowJob::unperturbed`]'s parts):
/// each layer's attention (`n x n`), then the output (`n x d_model`).
pub fn base_answer(attention: &[Vec<f32>], output: &[f32]) -> Vec<f32> {
    let mut out: Vec<f32> = attention.iter().flatten().copied().collect();
    out.extend_from_slice(output);
    out
}

/// The run with [`base_answer`]'s attention and output and every influence 0, ready for
/// [`FlowRaw::put_columns`].
///
/// # Errors
/// [`FlowTaskError::Answer`] when `answer` is not the length of `model`'s pass on `masks`.
pub fn raw_from_base(config: &FlowConfig, masks: &FlowMasks, answer: &[f32]) -> Result<FlowRaw, FlowTaskError> {
    let (n, layers, d) = (masks.n(), masks.layers(), config.d_model);
    let expected = layers * n * n + n * d;
    if answer.len() != expected {
        return Err(FlowTaskError::Answer { got: answer.len(), expected });
    }
    let (attention, output) = answer.split_at(layers * n * n);
    Ok(FlowRaw {
        n,
        backend: BackendInfo::cpu(),
        influence: vec![vec![0.0; n * n]; layers],
        attention: attention.chunks_exact(n * n).map(<[f32]>::to_vec).collect(),
        output: output.to_vec(),
    })
}

/// The GPU worker's answer to "which adapter?": the backend its runs will report, or why it has
/// no device (no WebGPU, no adapter, a device refused), which is the browser's and stays so. A
/// worker that did not answer at all (its module did not load) is neither: the page asks again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum GpuAdapter {
    /// A device is open on this adapter.
    Ready(BackendInfo),
    /// No device, and why, in one line.
    Unavailable(String),
}

/// A whole run as one answer: [`base_answer`]'s attention and output, then every layer's
/// influence (`n x n`, row by row: [`FlowRaw::put_columns`]'s layout for copies `0..n`).
pub fn whole_answer(raw: &FlowRaw) -> Vec<f32> {
    let mut out = base_answer(&raw.attention, &raw.output);
    for influence in &raw.influence {
        out.extend_from_slice(influence);
    }
    out
}

/// The run of a [`whole_answer`] of the model of `config` on `masks`, measured by `backend`.
///
/// # Errors
/// [`FlowTaskError::Answer`] when `answer` is not the length of a whole run of that model on
/// `masks`.
pub fn raw_from_whole(
    config: &FlowConfig,
    masks: &FlowMasks,
    answer: &[f32],
    backend: BackendInfo,
) -> Result<FlowRaw, FlowTaskError> {
    let (n, layers, d) = (masks.n(), masks.layers(), config.d_model);
    let (base, influence) = (layers * n * n + n * d, layers * n * n);
    if answer.len() != base + influence {
        return Err(FlowTaskError::Answer { got: answer.len(), expected: base + influence });
    }
    let mut raw = raw_from_base(config, masks, &answer[..base])?;
    raw.put_columns(0, n, &answer[base..])?;
    raw.backend = backend;
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BitMatrix;
    use crate::flow::FlowRaw;
    use crate::flow::cpu::{self, CpuFlowJob};
    use crate::rng::SplitMix64;
    use crate::stack::{Layer, LayerStack};

    fn case(seed: u64) -> (FlowModel, FlowMasks) {
        let mut rng = SplitMix64::new(seed);
        let n = 1 + rng.below(20);
        let heads = [1, 2, 4][rng.below(3)];
        let config = FlowConfig { d_model: 16, heads, layers: 1 + rng.below(4), seed };
        let random = |rng: &mut SplitMix64| BitMatrix::from_fn(n, |q, k| k <= q && rng.below(3) > 0);
        let masks = if seed.is_multiple_of(2) {
            FlowMasks::uniform(&random(&mut rng), &config)
        } else {
            let layers = (0..1 + rng.below(3))
                .map(|_| Layer { heads: (0..1 + rng.below(heads)).map(|_| random(&mut rng)).collect() })
                .collect();
            FlowMasks::from_stack(&LayerStack::new(layers).expect("a stack"), &config).expect("fits")
        };
        (FlowModel::new(config, n).expect("valid"), masks)
    }

    /// A request read back is the same model and masks; the base pass and any split of the copies
    /// into ranges, put together, are `run_flow`'s measurements bit for bit.
    #[test]
    fn split_runs_put_together_are_run_flow_bit_for_bit() {
        for seed in 0..16 {
            let (model, masks) = case(seed);
            let (m2, k2) = decode(&encode(model.config(), &masks)).expect("reads back");
            assert_eq!((m2.config(), m2.n(), m2.weights(), &k2), (model.config(), model.n(), model.weights(), &masks));
            let want = cpu::run_flow(&model, &masks);
            let mut job = CpuFlowJob::new(&m2, &k2);
            job.step(&m2, &k2, 0);
            let (attention, output) = job.unperturbed().expect("the unperturbed pass ran");
            let mut raw = raw_from_base(m2.config(), &k2, &base_answer(attention, output)).expect("fits");
            let n = masks.n();
            let mut rng = SplitMix64::new(seed + 100);
            let mut start = 0;
            // Ranges of random lengths, computed in reverse order.
            let mut ranges = Vec::new();
            while start < n {
                let len = 1 + rng.below(n - start);
                ranges.push(start..start + len);
                start += len;
            }
            for r in ranges.into_iter().rev() {
                let cols = job.columns(&m2, &k2, r.clone());
                assert_eq!(cols.len(), masks.layers() * n * r.len());
                raw.put_columns(r.start, r.len(), &cols).expect("fits");
            }
            let bits = |r: &FlowRaw| {
                (
                    r.influence.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    r.attention.clone(),
                    r.output.clone(),
                )
            };
            assert_eq!(bits(&raw), bits(&want), "seed {seed}");
            assert_eq!(raw, want, "seed {seed}");
        }
    }

    /// Mutated requests (bytes flipped, cut, repeated, fields swapped) are read or refused in one
    /// line, never a panic; what is read is a model the engine accepts, at the request's size.
    /// A whole run (the GPU path's answer from its worker) reads back as the same run, with the
    /// backend the worker reported (through its JSON); answers one value short or long are refused.
    #[test]
    fn whole_runs_read_back_with_their_backend() {
        use crate::flow::BackendKind;
        for seed in 0..8 {
            let (model, masks) = case(seed);
            let mut raw = cpu::run_flow(&model, &masks);
            raw.backend = BackendInfo {
                kind: BackendKind::Gpu,
                adapter: Some(format!("adapter {seed}")),
                api: Some("webgpu".into()),
                software_adapter: seed % 2 == 0,
            };
            let json = serde_json::to_string(&GpuAdapter::Ready(raw.backend.clone())).expect("serialises");
            let GpuAdapter::Ready(backend) = serde_json::from_str(&json).expect("reads back") else {
                panic!("{json} reads back as another answer")
            };
            let answer = whole_answer(&raw);
            assert_eq!(
                raw_from_whole(model.config(), &masks, &answer, backend.clone()).expect("fits"),
                raw,
                "seed {seed}"
            );
            for wrong in [answer.len() - 1, answer.len() + 1] {
                let mut cut = answer.clone();
                cut.resize(wrong, 0.5);
                let e = raw_from_whole(model.config(), &masks, &cut, backend.clone()).expect_err("refused");
                assert!(e.to_string().contains(&format!("has {wrong} values")), "{e}");
            }
        }
        assert!(serde_json::from_str::<BackendInfo>(r#"{"kind":"gpu"}"#).is_err(), "fields are required");
        let none = GpuAdapter::Unavailable("the browser offers no WebGPU adapter".into());
        let json = serde_json::to_string(&none).expect("serialises");
        assert_eq!(json, r#"{"unavailable":"the browser offers no WebGPU adapter"}"#);
        assert_eq!(serde_json::from_str::<GpuAdapter>(&json).expect("reads back"), none);
        assert!(serde_json::from_str::<GpuAdapter>(r#"{"ready":{"kind":"gpu"}}"#).is_err());
    }

    #[test]
    fn mutated_requests_never_panic() {
        let mut rng = SplitMix64::new(31);
        let seeds: Vec<String> = (0..6)
            .map(|s| {
                let (model, masks) = case(s);
                encode(model.config(), &masks)
            })
            .collect();
        let pieces = ["0", "-1", "1e9", "null", "[]", "{}", "\"\"", "18446744073709551615", "513", "true"];
        let (mut read, mut refused) = (0, 0);
        for _ in 0..3000 {
            let mut text = seeds[rng.below(seeds.len())].clone().into_bytes();
            for _ in 0..1 + rng.below(4) {
                if text.is_empty() {
                    break;
                }
                let at = rng.below(text.len());
                match rng.below(4) {
                    0 => text[at] = rng.below(128) as u8,
                    1 => text.truncate(at),
                    2 => {
                        let piece = pieces[rng.below(pieces.len())].as_bytes();
                        text.splice(at..(at + 1).min(text.len()), piece.iter().copied());
                    }
                    _ => {
                        let copy = text[at..].to_vec();
                        text.extend_from_slice(&copy[..copy.len().min(64)]);
                    }
                }
            }
            let Ok(text) = String::from_utf8(text) else { continue };
            match decode(&text) {
                Ok((model, masks)) => {
                    assert_eq!(model.n(), masks.n());
                    assert!(model.config().validate().is_ok());
                    read += 1;
                }
                Err(e) => {
                    assert!(!e.to_string().contains('\n'), "{e}");
                    refused += 1;
                }
            }
        }
        // Both sides are exercised: some mutations keep a valid request (a changed seed or mask
        // bit), most are refused.
        assert!(read > 10 && refused > 1000, "read {read}, refused {refused}");
    }

    /// Malformed requests and answers are refused with what is wrong, in one line.
    #[test]
    fn malformed_requests_and_answers_are_refused() {
        let (model, masks) = case(3);
        let good = encode(model.config(), &masks);
        let bad = [
            String::new(),
            "{".into(),
            "null".into(),
            good[..good.len() / 2].to_string(),
            good.replace("\"heads\"", "\"head\""),
            good.replace("\"masks\":[\"", "\"masks\":[\"!!"),
            good.replace("\"masks\":[\"", "\"masks\":[\"0"),
            good.replace("\"d_model\":16", "\"d_model\":7"),
            good.replace("\"heads\":[[", "\"heads\":[[99,"),
            r#"{"config":{"d_model":16,"heads":1,"layers":1,"seed":0},"n":4,"masks":["000000"],"heads":[[0]]}"#.into(),
            r#"{"config":{"d_model":16,"heads":1,"layers":1,"seed":0},"n":3,"masks":["00ff"],"heads":[[0]]}"#.into(),
            r#"{"config":{"d_model":16,"heads":1,"layers":1,"seed":0},"n":4,"masks":[],"heads":[[0]]}"#.into(),
            r#"{"config":{"d_model":16,"heads":1,"layers":1,"seed":0},"n":513,"masks":["0000"],"heads":[[0]]}"#.into(),
            "x".repeat(MAX_REQUEST_BYTES + 1),
        ];
        for text in bad {
            let e = decode(&text).err().unwrap_or_else(|| panic!("refused: {}", &text[..text.len().min(80)]));
            assert!(!e.to_string().contains('\n'), "{e}");
        }
        let e = raw_from_base(model.config(), &masks, &[1.0, 2.0]).expect_err("short");
        assert!(matches!(e, FlowTaskError::Answer { got: 2, .. }), "{e}");
        let mut raw = cpu::run_flow(&model, &masks);
        let n = masks.n();
        assert!(raw.put_columns(n, 1, &vec![0.0; masks.layers() * n]).is_err());
        assert!(raw.put_columns(0, 1, &[0.0]).is_err());
        assert!(raw.put_columns(usize::MAX, 2, &[]).is_err());
    }
}

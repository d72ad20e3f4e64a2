//! PyTorch FlexAttention export: Python source defining `mask_mod(b, h, q_idx, kv_idx)` and the
//! `create_block_mask` call.
//!
//! Two forms:
//! - **closed form**, when the file's provenance names a catalog preset whose mask, rebuilt from
//!   the recorded parameters, equals the file's mask: one expression in `q_idx`, `kv_idx`, integer
//!   constants and the operators `& | ~ == != < <= > >= + - * // %`, every comparison in
//!   parentheses. Such an expression means the same for 0-d torch tensors (what FlexAttention
//!   passes) and for broadcast NumPy arrays (what `tests/python/test_flex.py` passes); Python's
//!   `and`/`or`/`not` and chained comparisons are never used. Slot layouts (block two-stream,
//!   butterfly, XLNet in the identity order) are written from their slot structure.
//! - **lookup**, otherwise (painted masks, random presets, edited masks): a boolean table embedded in
//!   the source (row strings up to 64 positions, base64 bits above), padded with `False` to a
//!   multiple of `BLOCK_SIZE` so the kernel's last partial block never indexes out of range.
//!
//! Every file works imported (`from file import mask_mod, block_mask_for`; the lookup table is
//! also a CPU tensor that `mask_mod` moves to the device of the indices FlexAttention passes) and
//! run as a script (the `__main__` block builds and prints the `BlockMask`). `mask_mod` also
//! evaluates on NumPy index arrays when torch is absent. `tests/python/test_torch.py` checks both
//! ways under real PyTorch; [`super::mask_mod`] reads closed forms back.
//!
//! Complexity: building a preset to check provenance costs what [`build_preset`] costs
//! (`O(n²)`); the lookup form is `O(n²)` characters of source (`n²/6` above 64 positions).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::bits::BitMatrix;
use crate::format::{MAX_N, MaskFile, Provenance};
use crate::presets::{BlockTwoStream, Butterfly, Inner, TwoStreamOrder, build_preset, preset_spec};

/// Above this many positions the lookup table is written as base64 bits instead of row strings.
pub const ROW_STRINGS_UP_TO: usize = 64;
/// The most terms a closed form may OR/AND together (document boundaries, BigBird random blocks)
/// before the lookup form is used instead.
pub const MAX_TERMS: usize = 64;
/// The default FlexAttention block size.
pub const DEFAULT_BLOCK_SIZE: usize = 128;

/// Why no code was generated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlexError {
    /// A block size of 0 or larger than the largest mask.
    #[error("block size {block_size} is out of range 1..={MAX_N}")]
    BlockSize {
        /// The block size asked for.
        block_size: usize,
    },
}

/// Which form the `mask_mod` took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlexForm {
    /// A closed-form expression (the text of the returned expression).
    ClosedForm(String),
    /// A lookup table, with the reason no closed form was used.
    Lookup(String),
}

/// Generated Python and how it was made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlexExport {
    /// The Python source.
    pub code: String,
    /// Closed form or lookup.
    pub form: FlexForm,
}

/// Provenance parameters as the text [`build_preset`] takes (`4`, `true`, `3,2,4`, `full`).
pub fn provenance_params(p: &Provenance) -> BTreeMap<String, String> {
    p.params
        .iter()
        .map(|(k, v)| {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), text)
        })
        .collect()
}

/// `Some(provenance)` when rebuilding its preset gives exactly `mask`, else `None`: how a caller
/// (the CLI's `derive --mask-out`) attaches provenance only where it is true.
pub fn provenance_if_matches(mask: &BitMatrix, provenance: Provenance) -> Option<Provenance> {
    let built = build_preset(&provenance.preset, provenance.n, &provenance_params(&provenance), MAX_N).ok()?;
    (built == *mask).then_some(provenance)
}

const Q: &str = "q_idx";
const K: &str = "kv_idx";

/// `(a op b)`: comparisons are always parenthesised (Python's `&` binds tighter than `<=`).
fn cmp(a: impl std::fmt::Display, op: &str, b: impl std::fmt::Display) -> String {
    format!("({a} {op} {b})")
}

fn join(terms: Vec<String>, op: &str, empty: &str) -> String {
    match terms.len() {
        0 => empty.to_string(),
        1 => terms.into_iter().next().unwrap_or_default(),
        _ => format!("({})", terms.join(&format!(" {op} "))),
    }
}

/// Conjunction (`True` when empty, written so that it broadcasts).
fn all(terms: Vec<String>) -> String {
    join(terms, "&", "((q_idx >= 0) & (kv_idx >= 0))")
}

/// Disjunction (`False` when empty, written so that it broadcasts).
fn any(terms: Vec<String>) -> String {
    join(terms, "|", "((q_idx < 0) & (kv_idx < 0))")
}

/// `var + c` with the sign folded in.
fn shift(var: &str, c: i64) -> String {
    match c {
        0 => var.to_string(),
        c if c > 0 => format!("({var} + {c})"),
        c => format!("({var} - {})", c.unsigned_abs()),
    }
}

/// A closed-form `mask_mod` body for the file, or why there is none.
///
/// # Errors
/// The reason the lookup form is needed (no provenance, mask edited since, a random preset, ...).
pub fn closed_form(file: &MaskFile) -> Result<String, String> {
    let p = file.provenance.as_ref().ok_or("no provenance: the mask was not made from a preset")?;
    let params = provenance_params(p);
    let built = build_preset(&p.preset, p.n, &params, MAX_N)
        .map_err(|e| format!("provenance does not rebuild a preset ({e})"))?;
    if built != file.mask {
        return Err(format!("the mask differs from preset '{}' recorded in its provenance (edited?)", p.preset));
    }
    preset_expression(&p.preset, p.n, &params, &file.mask)
}

/// The closed-form expression of a preset built with `params` (already validated: `mask` is the
/// preset's mask, used only to read BigBird's random blocks off it).
///
/// # Errors
/// Why this preset (or these parameters) has no closed form.
pub fn preset_expression(
    name: &str,
    n: usize,
    params: &BTreeMap<String, String>,
    mask: &BitMatrix,
) -> Result<String, String> {
    let spec = preset_spec(name).ok_or_else(|| format!("unknown preset '{name}'"))?;
    let text = |key: &str| -> String {
        params
            .get(key)
            .cloned()
            .or_else(|| spec.params.iter().find(|p| p.name == key).map(|p| p.default.to_string()))
            .unwrap_or_default()
    };
    let int = |key: &str| -> Result<i64, String> {
        text(key).trim().parse::<i64>().map_err(|_| format!("parameter '{key}' is not an integer"))
    };
    let flag = |key: &str| matches!(text(key).trim(), "true" | "1" | "yes");
    let list = |key: &str| -> Vec<i64> {
        text(key).split(',').map(str::trim).filter(|s| !s.is_empty()).filter_map(|s| s.parse().ok()).collect()
    };
    let causal = || cmp(K, "<=", Q);
    let diff = format!("({Q} - {K})");
    let expr = match name {
        "full" => all(vec![]),
        "causal" => causal(),
        "strictly-causal" => cmp(K, "<", Q),
        "anti-causal" => cmp(K, ">=", Q),
        "identity" => cmp(K, "==", Q),
        "cycle" => cmp(K, "==", format!("({} % {n})", shift(Q, n as i64 - 1))),
        "sliding-window" => all(vec![causal(), cmp(&diff, "<", int("w")?)]),
        "bidirectional-window" => {
            let r = int("r")?;
            all(vec![cmp(&diff, "<=", r), cmp(format!("({K} - {Q})"), "<=", r)])
        }
        "dilated-window" => {
            let (w, d) = (int("w")?, int("d")?);
            all(vec![causal(), cmp(format!("({diff} % {d})"), "==", 0), cmp(&diff, "<=", (w - 1) * d)])
        }
        "chunked-causal" => {
            let c = int("c")?;
            all(vec![causal(), cmp(format!("({K} // {c})"), "==", format!("({Q} // {c})"))])
        }
        "block-causal" => {
            let s = int("s")?;
            cmp(format!("({K} // {s})"), "<=", format!("({Q} // {s})"))
        }
        "prefix-lm" => any(vec![causal(), cmp(K, "<", int("p")?)]),
        "document" => {
            let segments = list("segments");
            let mut terms = if segments.is_empty() {
                let len = int("length")?;
                vec![cmp(format!("({Q} // {len})"), "==", format!("({K} // {len})"))]
            } else {
                if segments.len() > MAX_TERMS {
                    return Err(format!("{} segments (a closed form is written up to {MAX_TERMS})", segments.len()));
                }
                // Same segment iff q and k lie on the same side of every inner boundary.
                let mut start = 0;
                let mut terms = Vec::new();
                for len in &segments[..segments.len() - 1] {
                    start += len;
                    terms.push(cmp(cmp(Q, ">=", start), "==", cmp(K, ">=", start)));
                }
                terms
            };
            if flag("causal") {
                terms.push(causal());
            }
            all(terms)
        }
        "sink-window" => all(vec![causal(), any(vec![cmp(K, "<", int("sinks")?), cmp(&diff, "<", int("w")?)])]),
        "longformer" => {
            let (g, r) = (int("g")?, int("r")?);
            any(vec![
                all(vec![cmp(&diff, "<=", r), cmp(format!("({K} - {Q})"), "<=", r)]),
                cmp(Q, "<", g),
                cmp(K, "<", g),
            ])
        }
        "bigbird" => bigbird(n, int("b")?, int("r")?, int("g")?, mask)?,
        "strided" => {
            let l = int("l")?;
            all(vec![causal(), any(vec![cmp(&diff, "<", l), cmp(format!("({diff} % {l})"), "==", 0)])])
        }
        "fixed" => {
            let (l, c) = (int("l")?, int("c")?);
            all(vec![
                causal(),
                any(vec![
                    cmp(format!("({K} // {l})"), "==", format!("({Q} // {l})")),
                    cmp(format!("({K} % {l})"), ">=", l - c),
                ]),
            ])
        }
        "xlnet" => {
            let perm = list("perm");
            if !perm.is_empty() && perm.iter().enumerate().any(|(i, &t)| t != i as i64) {
                return Err("a non-identity factorization order needs a rank table".into());
            }
            two_stream(&BlockTwoStream::new(n, 1))?
        }
        "block-two-stream" => {
            let inner = |v: String| if v.trim() == "causal" { Inner::Causal } else { Inner::Full };
            two_stream(&BlockTwoStream {
                n,
                block: usize::try_from(int("s")?).map_err(|_| "negative block size")?,
                clean: inner(text("clean")),
                query: inner(text("query")),
                prompt: usize::try_from(int("prompt")?).map_err(|_| "negative prompt")?,
                drop_last: flag("drop_last"),
                order: if text("order").trim() == "interleaved" {
                    TwoStreamOrder::Interleaved
                } else {
                    TwoStreamOrder::Grouped
                },
            })?
        }
        "butterfly" => butterfly(&Butterfly { n, minimal: flag("minimal") }),
        "random" => return Err("random entries have no closed form".into()),
        other => return Err(format!("preset '{other}' has no closed form yet")),
    };
    Ok(expr)
}

/// BigBird: the window and global blocks in closed form, the random blocks read off the mask and
/// OR-ed in, grouped by query block.
fn bigbird(n: usize, b: i64, r: i64, g: i64, mask: &BitMatrix) -> Result<String, String> {
    let (qb, kb) = (format!("({Q} // {b})"), format!("({K} // {b})"));
    let mut terms = vec![
        all(vec![cmp(format!("({qb} - {kb})"), "<=", r), cmp(format!("({kb} - {qb})"), "<=", r)]),
        cmp(&qb, "<", g),
        cmp(&kb, "<", g),
    ];
    let bs = usize::try_from(b).map_err(|_| "negative block size")?.max(1);
    let blocks = n.div_ceil(bs) as i64;
    let mut random = 0;
    for bq in 0..blocks {
        let mut keys = Vec::new();
        for bk in 0..blocks {
            let deterministic = (bq - bk).abs() <= r || bq < g || bk < g;
            if !deterministic && mask.get((bq * b) as usize, (bk * b) as usize) {
                keys.push(cmp(&kb, "==", bk));
            }
        }
        if !keys.is_empty() {
            random += keys.len();
            terms.push(all(vec![cmp(&qb, "==", bq), any(keys)]));
        }
    }
    if random > MAX_TERMS {
        return Err(format!("{random} random blocks (a closed form is written up to {MAX_TERMS})"));
    }
    Ok(any(terms))
}

/// Block two-stream (and XLNet in the identity order) from its slot structure.
fn two_stream(t: &BlockTwoStream) -> Result<String, String> {
    let (s, p) = (t.block as i64, t.prompt as i64);
    let causal = || cmp(K, "<=", Q);
    // Everything non-prompt reads the prompt; inside the prompt, attention is `clean`. A prompt
    // key k < p satisfies k <= q for every non-prompt q, so causal reduces to `k <= q`.
    let mut terms = Vec::new();
    if p > 0 {
        terms.push(match t.clean {
            Inner::Full => cmp(K, "<", p),
            Inner::Causal => all(vec![cmp(K, "<", p), causal()]),
        });
    }
    let after_prompt = |v: &str| if p > 0 { vec![cmp(v, ">=", p)] } else { vec![] };
    match t.order {
        TwoStreamOrder::Grouped => {
            let content = t.slots().iter().filter(|x| matches!(x, crate::presets::TwoStreamSlot::Content(_))).count();
            let qstart = p + content as i64;
            let is_content = |v: &str| {
                let mut c = after_prompt(v);
                c.push(cmp(v, "<", qstart));
                c
            };
            let is_query = |v: &str| vec![cmp(v, ">=", qstart)];
            let content_block = |v: &str| format!("({} // {s})", shift(v, -p));
            let query_block = |v: &str| format!("({} // {s})", shift(v, -qstart));
            // Content reads content: block-causal, or plain causal when clean blocks are causal
            // (content positions increase with the token, blocks are contiguous).
            let mut cc = [is_content(Q), is_content(K)].concat();
            cc.push(match t.clean {
                Inner::Full => cmp(content_block(K), "<=", content_block(Q)),
                Inner::Causal => causal(),
            });
            terms.push(all(cc));
            let mut qc = [is_query(Q), is_content(K)].concat();
            qc.push(cmp(content_block(K), "<", query_block(Q)));
            terms.push(all(qc));
            let mut qq = [is_query(Q), is_query(K)].concat();
            qq.push(cmp(query_block(K), "==", query_block(Q)));
            if t.query == Inner::Causal {
                qq.push(causal());
            }
            terms.push(all(qq));
        }
        TwoStreamOrder::Interleaved => {
            if !t.n.is_multiple_of(t.block) || t.drop_last {
                return Err("interleaved order with a partial or dropped last block needs a lookup".into());
            }
            // After the prompt, block b is [K_b (s positions) | Q_b (s positions)].
            let period = 2 * s;
            let local = |v: &str| format!("({} % {period})", shift(v, -p));
            let block = |v: &str| format!("({} // {period})", shift(v, -p));
            let is_content = |v: &str| {
                let mut c = after_prompt(v);
                c.push(cmp(local(v), "<", s));
                c
            };
            let is_query = |v: &str| {
                let mut c = after_prompt(v);
                c.push(cmp(local(v), ">=", s));
                c
            };
            let mut cc = [is_content(Q), is_content(K)].concat();
            cc.push(match t.clean {
                Inner::Full => cmp(block(K), "<=", block(Q)),
                Inner::Causal => causal(),
            });
            terms.push(all(cc));
            let mut qc = [is_query(Q), is_content(K)].concat();
            qc.push(cmp(block(K), "<", block(Q)));
            terms.push(all(qc));
            let mut qq = [is_query(Q), is_query(K)].concat();
            qq.push(cmp(block(K), "==", block(Q)));
            if t.query == Inner::Causal {
                qq.push(causal());
            }
            terms.push(all(qq));
        }
    }
    Ok(any(terms))
}

/// Butterfly from its slot structure `[F | B | P]`.
fn butterfly(b: &Butterfly) -> String {
    let n = b.n as i64;
    let m = i64::from(b.minimal);
    let (nf, nb) = (n - m, n - m);
    let pstart = nf + nb;
    let in_b = |v: &str| vec![cmp(v, ">=", nf), cmp(v, "<", pstart)];
    // F reads F: causal. B reads B: anti-causal. P_t reads F_u (u < t), B_u (u > t), itself.
    let ff = all(vec![cmp(Q, "<", nf), cmp(K, "<=", Q)]);
    let bb = all([in_b(Q), vec![cmp(K, ">=", Q), cmp(K, "<", pstart)]].concat());
    let pf = all(vec![cmp(Q, ">=", pstart), cmp(K, "<", nf), cmp(K, "<", shift(Q, -pstart))]);
    // B position i holds token i - nf + m; P position i holds token i - pstart.
    let pb = all([vec![cmp(Q, ">=", pstart)], in_b(K), vec![cmp(shift(K, m - nf), ">", shift(Q, -pstart))]].concat());
    let pp = all(vec![cmp(Q, ">=", pstart), cmp(K, "==", Q)]);
    any(vec![ff, bb, pf, pb, pp])
}

/// The Python for `file`'s mask with FlexAttention block size `block_size`.
///
/// # Errors
/// [`FlexError::BlockSize`] for a block size outside `1..=MAX_N`.
///
/// # Examples
/// ```
/// use std::collections::BTreeMap;
/// use hasseflow_core::format::{MaskFile, Provenance};
/// use hasseflow_core::interop::flex::{flex_python, FlexForm};
/// use hasseflow_core::presets::build_preset;
/// let params = BTreeMap::from([("w".to_string(), "3".to_string())]);
/// let mask = build_preset("sliding-window", 8, &params, 8192).unwrap();
/// let prov = Provenance { preset: "sliding-window".into(), n: 8, params: [("w".to_string(), 3.into())].into() };
/// let file = MaskFile { provenance: Some(prov), ..MaskFile::new(mask) };
/// let out = flex_python(&file, 128).unwrap();
/// assert_eq!(out.form, FlexForm::ClosedForm("((kv_idx <= q_idx) & ((q_idx - kv_idx) < 3))".into()));
/// assert!(out.code.contains("create_block_mask(mask_mod"));
/// ```
pub fn flex_python(file: &MaskFile, block_size: usize) -> Result<FlexExport, FlexError> {
    if block_size == 0 || block_size > MAX_N {
        return Err(FlexError::BlockSize { block_size });
    }
    let n = file.mask.n();
    let form = match closed_form(file) {
        Ok(expr) => FlexForm::ClosedForm(expr),
        Err(reason) => FlexForm::Lookup(reason),
    };
    let mut code = String::new();
    let w = &mut code;
    let _ = writeln!(w, "# Generated by hasseflow {}: a PyTorch FlexAttention mask_mod.", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(w, "# mask_mod(b, h, q_idx, kv_idx) is True iff query q_idx may attend to key kv_idx.");
    match (&form, &file.provenance) {
        (FlexForm::ClosedForm(_), Some(p)) => {
            let spec = preset_spec(&p.preset).map(|s| s.formula).unwrap_or_default();
            let params: Vec<String> = provenance_params(p).iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writeln!(
                w,
                "# Closed form of preset '{}' (n = {}{}{}): {spec}",
                p.preset,
                p.n,
                if params.is_empty() { "" } else { ", " },
                params.join(", ")
            );
        }
        (FlexForm::Lookup(reason), _) => {
            let _ = writeln!(w, "# Lookup table ({reason}).");
        }
        _ => {}
    }
    if file.stack.is_some() {
        let _ = writeln!(w, "# Note: the file also holds a layer stack; this is its main mask only.");
    }
    let _ = writeln!(w, "#");
    let _ = writeln!(w, "# Import it from a training script (torch >= 2.5):");
    let _ = writeln!(w, "#     from this_module import mask_mod, block_mask_for, N");
    let _ = writeln!(
        w,
        "#     block_mask = block_mask_for(\"cuda\")  # or create_block_mask(mask_mod, None, None, N, N, ...)"
    );
    let _ = writeln!(
        w,
        "#     out = flex_attention(q, k, v, block_mask=block_mask)  # q, k, v: (batch, heads, N, head_dim)"
    );
    let _ = writeln!(w, "# or run it (python this_file.py) to build and print the BlockMask. mask_mod also evaluates");
    let _ = writeln!(w, "# on NumPy index arrays, without torch.");
    if !(block_size.is_power_of_two() && block_size >= 16) {
        let _ = writeln!(w, "# Note: FlexAttention's GPU kernels may require BLOCK_SIZE to be a power of two >= 16.");
    }
    let _ = writeln!(w);
    if matches!(form, FlexForm::Lookup(_)) {
        let imports =
            if n <= ROW_STRINGS_UP_TO { "import numpy as np\n" } else { "import base64\n\nimport numpy as np\n" };
        let _ = writeln!(w, "{imports}");
        let _ = writeln!(w, "try:");
        let _ = writeln!(w, "    import torch");
        let _ = writeln!(w, "except ImportError:  # NumPy alone: mask_mod still evaluates on index arrays");
        let _ = writeln!(w, "    torch = None\n");
    }
    let _ = writeln!(w, "N = {n}  # positions (Q_LEN = KV_LEN)");
    let _ = writeln!(w, "BLOCK_SIZE = {block_size}");
    match &form {
        FlexForm::ClosedForm(expr) => {
            let _ = writeln!(w, "\n\ndef mask_mod(b, h, q_idx, kv_idx):");
            let _ = writeln!(w, "    return {}", wrap(expr));
        }
        FlexForm::Lookup(_) => {
            let _ =
                writeln!(w, "# Padded with False to a multiple of BLOCK_SIZE: the last partial block stays in range.");
            let _ = writeln!(w, "_PADDED = -(-N // BLOCK_SIZE) * BLOCK_SIZE");
            let _ = writeln!(w, "MASK = np.zeros((_PADDED, _PADDED), dtype=bool)");
            if n <= ROW_STRINGS_UP_TO {
                let _ = writeln!(w, "_ROWS = [  # row q: '1' where q reads k");
                for row in file.mask.to_row_strings() {
                    let _ = writeln!(w, "    \"{row}\",");
                }
                let _ = writeln!(w, "]");
                let _ =
                    writeln!(w, "MASK[:N, :N] = np.array([[c == \"1\" for c in row] for row in _ROWS], dtype=bool)");
            } else {
                let _ = writeln!(
                    w,
                    "# Row-major bits, cell (q, k) = bit (q*N + k) % 8 (least significant first) of byte (q*N + k) // 8."
                );
                let _ = writeln!(w, "_PACKED = (");
                let packed = pack_bits(&file.mask);
                for chunk in packed.as_bytes().chunks(96) {
                    let _ = writeln!(w, "    \"{}\"", String::from_utf8_lossy(chunk));
                }
                let _ = writeln!(w, ")");
                let _ = writeln!(
                    w,
                    "_BITS = np.unpackbits(np.frombuffer(base64.b64decode(_PACKED), dtype=np.uint8), bitorder=\"little\")"
                );
                let _ = writeln!(w, "MASK[:N, :N] = _BITS[: N * N].reshape(N, N).astype(bool)");
            }
            let _ = writeln!(
                w,
                "# The same table as a torch tensor (on the CPU; mask_mod moves it to the indices' device)."
            );
            let _ = writeln!(w, "MASK_TENSOR = torch.from_numpy(MASK) if torch is not None else None");
            let _ = writeln!(w, "\n\ndef mask_mod(b, h, q_idx, kv_idx):");
            let _ = writeln!(w, "    if MASK_TENSOR is not None and isinstance(q_idx, torch.Tensor):");
            let _ = writeln!(w, "        return MASK_TENSOR.to(q_idx.device)[q_idx, kv_idx]");
            let _ = writeln!(w, "    return MASK[q_idx, kv_idx]");
        }
    }
    let _ = writeln!(w, "\n\ndef block_mask_for(device=\"cpu\"):");
    let _ = writeln!(w, "    \"\"\"FlexAttention's BlockMask of mask_mod, N x N, on `device`.\"\"\"");
    let _ = writeln!(w, "    from torch.nn.attention.flex_attention import create_block_mask\n");
    let _ = writeln!(
        w,
        "    return create_block_mask(mask_mod, B=None, H=None, Q_LEN=N, KV_LEN=N, device=device, BLOCK_SIZE=BLOCK_SIZE)"
    );
    let _ = writeln!(w, "\n\nif __name__ == \"__main__\":");
    let _ = writeln!(w, "    import torch");
    let _ = writeln!(w, "    from torch.nn.attention.flex_attention import flex_attention\n");
    let _ = writeln!(w, "    DEVICE = \"cuda\" if torch.cuda.is_available() else \"cpu\"");
    let _ = writeln!(w, "    block_mask = block_mask_for(DEVICE)");
    let _ = writeln!(w, "    print(block_mask)");
    let _ = writeln!(w, "    # q, k, v: (batch, heads, N, head_dim) on DEVICE; rows that read nothing give 0.");
    let _ = writeln!(w, "    # out = flex_attention(q, k, v, block_mask=block_mask)");
    Ok(FlexExport { code, form })
}

/// A long expression `(a | b | c)` written one top-level term per line (Python continues lines
/// inside parentheses); short ones and others unchanged.
fn wrap(expr: &str) -> String {
    if expr.len() <= 88 || !expr.starts_with('(') || !expr.ends_with(')') {
        return expr.to_string();
    }
    let inner = &expr[1..expr.len() - 1];
    let mut depth = 0i32;
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '|' if depth == 0 => {
                parts.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return expr.to_string();
        }
    }
    parts.push(inner[start..].trim());
    if parts.len() < 2 || depth != 0 {
        return expr.to_string();
    }
    let mut out = String::from("(\n        ");
    out.push_str(&parts.join("\n        | "));
    out.push_str("\n    )");
    out
}

/// Standard base64 of the row-major packed bits ([`crate::bits::pack_bits`]).
fn pack_bits(m: &BitMatrix) -> String {
    BASE64.encode(crate::bits::pack_bits(m))
}

#[cfg(test)]
pub(crate) mod tests {
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
}

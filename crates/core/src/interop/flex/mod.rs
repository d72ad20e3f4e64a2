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

use crate::base64::STANDARD as BASE64;

use crate::bits::BitMatrix;
use crate::format::{MAX_N, MaskFile, Provenance};
use crate::presets::{BlockTwoStream, Butterfly, Inner, TwoStreamOrder, build_preset, preset_spec};

mod closed;
#[cfg(test)]
pub(crate) mod tests;

pub use closed::{closed_form, preset_expression};

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
    // `extend`, not `collect`: BTreeMap's FromIterator sorts (a sort per call site in the wasm).
    let mut params = BTreeMap::new();
    params.extend(p.params.iter().map(|(k, v)| {
        let text = match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        (k.clone(), text)
    }));
    params
}

/// `Some(provenance)` when rebuilding its preset gives exactly `mask`, else `None`: how a caller
/// (the CLI's `derive --mask-out`) attaches provenance only where it is true.
pub fn provenance_if_matches(mask: &BitMatrix, provenance: Provenance) -> Option<Provenance> {
    let built = build_preset(&provenance.preset, provenance.n, &provenance_params(&provenance), MAX_N).ok()?;
    (built == *mask).then_some(provenance)
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

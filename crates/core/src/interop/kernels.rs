//! Other attention kernels: whether a mask is exactly what FlashAttention's `(causal,
//! window_size)` or FlashMask's column intervals express, the parameters when it is, the reason
//! when it is not, and the mask those parameters mean (so export → import is checkable).
//!
//! **FlashAttention** (`flash_attn_func(q, k, v, causal=..., window_size=(left, right))`, square
//! `N x N`): query `q` reads key `k` iff `q - left <= k <= q + right`, `-1` meaning unbounded;
//! `causal=True` is `right = 0`. Representable iff every row is exactly that band (so the diagonal
//! is always set).
//!
//! **FlashMask** (Wang et al., 2024), our exact convention: for each key column `k`, the rows that
//! may **not** attend, `{q : M[q][k] = 0}`, must form at most one interval in the lower triangle
//! including the diagonal (`q >= k`), `[LTS_k, LTE_k)`, and at most one in the strict upper
//! triangle (`q < k`), `[UTS_k, UTE_k)`. Intervals are half-open; an empty lower interval is
//! written `LTS = LTE = n`, an empty upper one `UTS = UTE = 0`. `M[q][k] = 0` iff
//! `LTS_k <= q < LTE_k` or `UTS_k <= q < UTE_k`.
//!
//! Complexity: FlashAttention `O(n²/64)`; FlashMask `O(n²)` bit reads (one transposition, then
//! one scan per column).

use serde::Serialize;

use crate::bits::BitMatrix;

/// Why a mask is not representable by a kernel.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not representable as {kernel}: {reason}")]
pub struct NotRepresentable {
    /// `FlashAttention (causal, window_size)` or `FlashMask column intervals`.
    pub kernel: &'static str,
    /// The first obstacle found, naming the row or column.
    pub reason: String,
}

/// FlashAttention parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FlashWindow {
    /// `causal=True` (the band has no keys after the query).
    pub causal: bool,
    /// Keys before the query (`None` = unbounded, `-1`).
    pub left: Option<usize>,
    /// Keys after the query (`None` = unbounded, `-1`).
    pub right: Option<usize>,
}

impl FlashWindow {
    /// `window_size` as FlashAttention takes it (`-1` = unbounded).
    pub fn window_size(&self) -> (i64, i64) {
        let w = |x: Option<usize>| x.map_or(-1, |v| v as i64);
        (w(self.left), w(self.right))
    }

    /// The mask these parameters mean for `n` positions.
    pub fn mask(&self, n: usize) -> BitMatrix {
        BitMatrix::from_fn(n, |q, k| {
            if k <= q { self.left.is_none_or(|l| q - k <= l) } else { self.right.is_none_or(|r| k - q <= r) }
        })
    }

    /// The Python call.
    pub fn call(&self) -> String {
        let (l, r) = self.window_size();
        format!(
            "flash_attn_func(q, k, v, causal={}, window_size=({l}, {r}))",
            if self.causal { "True" } else { "False" }
        )
    }
}

/// The FlashAttention parameters of `mask`, if it is a band around the diagonal.
///
/// # Errors
/// [`NotRepresentable`] naming the first row that is not the band.
///
/// # Examples
/// ```
/// use hasseflow_core::{BitMatrix, interop::kernels::flash_window};
/// let w = flash_window(&BitMatrix::from_fn(8, |q, k| k <= q && q - k < 3)).unwrap();
/// assert_eq!(w.call(), "flash_attn_func(q, k, v, causal=True, window_size=(2, 0))");
/// assert!(flash_window(&BitMatrix::zeros(3)).is_err());
/// ```
pub fn flash_window(mask: &BitMatrix) -> Result<FlashWindow, NotRepresentable> {
    let n = mask.n();
    let fail = |reason: String| NotRepresentable { kernel: "FlashAttention (causal, window_size)", reason };
    let (mut left, mut right) = (0, 0);
    let mut spans = Vec::with_capacity(n);
    for q in 0..n {
        if !mask.get(q, q) {
            return Err(fail(format!("query {q} does not read itself (a FlashAttention window always does)")));
        }
        let mut ones = mask.row_ones(q);
        let first = ones.next().unwrap_or(q);
        let last = ones.last().unwrap_or(first);
        if last - first + 1 != mask.row_count(q) {
            return Err(fail(format!("the keys query {q} reads are not contiguous")));
        }
        left = left.max(q - first);
        right = right.max(last - q);
        spans.push((first, last));
    }
    for (q, &(first, last)) in spans.iter().enumerate() {
        let (want_first, want_last) = (q.saturating_sub(left), (q + right).min(n.saturating_sub(1)));
        if (first, last) != (want_first, want_last) {
            return Err(fail(format!(
                "query {q} reads keys {first}..={last}, but the widest window (left {left}, right {right}) gives {want_first}..={want_last}"
            )));
        }
    }
    let bound = |x: usize| if x + 1 >= n { None } else { Some(x) };
    let (left, right) = (bound(left), bound(right));
    Ok(FlashWindow { causal: right == Some(0) || (n == 1), left, right: if n == 1 { Some(0) } else { right } })
}

/// FlashMask column intervals (see the module documentation for the convention).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FlashMaskColumns {
    /// Positions.
    pub n: usize,
    /// Lower-triangle start per key column.
    pub lts: Vec<usize>,
    /// Lower-triangle end (exclusive) per key column.
    pub lte: Vec<usize>,
    /// Upper-triangle start per key column.
    pub uts: Vec<usize>,
    /// Upper-triangle end (exclusive) per key column.
    pub ute: Vec<usize>,
}

impl FlashMaskColumns {
    /// The whole strict upper triangle is masked (FlashMask's causal mode: `UTS`/`UTE` unused).
    pub fn causal(&self) -> bool {
        self.uts.iter().zip(&self.ute).enumerate().all(|(k, (&s, &e))| k == 0 || (s == 0 && e == k))
    }

    /// How many of `[LTS, LTE, UTS, UTE]` are needed: 1 (`LTS`; causal, every `LTE = n`),
    /// 2 (causal `[LTS, LTE]`, or `[LTS, UTE]` when every `LTE = n` and every `UTS = 0`) or 4.
    pub fn columns_needed(&self) -> usize {
        let lte_n = self.lte.iter().all(|&e| e == self.n);
        let causal = self.causal();
        if causal && lte_n {
            1
        } else if causal || (lte_n && self.uts.iter().all(|&s| s == 0)) {
            2
        } else {
            4
        }
    }

    /// The mask these intervals mean.
    pub fn mask(&self) -> BitMatrix {
        BitMatrix::from_fn(self.n, |q, k| {
            !((self.lts[k] <= q && q < self.lte[k]) || (self.uts[k] <= q && q < self.ute[k]))
        })
    }
}

/// One interval `[start, end)` covering the unset bits of `column` in `range`, if they form one.
fn zero_interval(column: &BitMatrix, k: usize, range: std::ops::Range<usize>) -> Result<Option<(usize, usize)>, usize> {
    let mut found: Option<(usize, usize)> = None;
    for q in range {
        if column.get(k, q) {
            continue;
        }
        match &mut found {
            None => found = Some((q, q + 1)),
            Some((_, end)) if *end == q => *end = q + 1,
            Some(_) => return Err(q),
        }
    }
    Ok(found)
}

/// The FlashMask column intervals of `mask`, if every column's masked rows form at most one
/// interval in each triangle.
///
/// # Errors
/// [`NotRepresentable`] naming the first column with a second masked interval.
///
/// # Examples
/// ```
/// use hasseflow_core::{BitMatrix, interop::kernels::flashmask_columns};
/// let prefix = BitMatrix::from_fn(4, |q, k| k <= q || k < 2);
/// let c = flashmask_columns(&prefix).unwrap();
/// assert_eq!((&c.uts[..], &c.ute[..]), (&[0, 0, 0, 0][..], &[0, 0, 2, 3][..]));
/// assert_eq!(c.mask(), prefix);
/// ```
pub fn flashmask_columns(mask: &BitMatrix) -> Result<FlashMaskColumns, NotRepresentable> {
    let n = mask.n();
    let columns = mask.transpose();
    let mut out = FlashMaskColumns { n, lts: vec![n; n], lte: vec![n; n], uts: vec![0; n], ute: vec![0; n] };
    for k in 0..n {
        let fail = |q: usize, part: &str| NotRepresentable {
            kernel: "FlashMask column intervals",
            reason: format!(
                "key column {k}: the rows that may not attend form more than one interval in the {part} triangle (again at row {q})"
            ),
        };
        if let Some((s, e)) = zero_interval(&columns, k, k..n).map_err(|q| fail(q, "lower"))? {
            (out.lts[k], out.lte[k]) = (s, e);
        }
        if let Some((s, e)) = zero_interval(&columns, k, 0..k).map_err(|q| fail(q, "upper"))? {
            (out.uts[k], out.ute[k]) = (s, e);
        }
    }
    Ok(out)
}

#[derive(Serialize)]
struct KernelReport<'a, T: Serialize> {
    kernel: &'static str,
    representable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    params: Option<&'a T>,
}

/// The FlashAttention verdict as one JSON object: `representable`, then `causal`, `window_size`
/// and the `call`, or the `reason`.
pub fn flash_json(mask: &BitMatrix) -> String {
    #[derive(Serialize)]
    struct P {
        causal: bool,
        window_size: (i64, i64),
        call: String,
    }
    let r = flash_window(mask);
    let p = r.as_ref().ok().map(|w| P { causal: w.causal, window_size: w.window_size(), call: w.call() });
    report("flash-attention", r.as_ref().err(), p.as_ref())
}

/// The FlashMask verdict as one JSON object: `representable`, then `causal`, `columns_needed` and
/// the `lts`, `lte`, `uts`, `ute` arrays, or the `reason`.
pub fn flashmask_json(mask: &BitMatrix) -> String {
    #[derive(Serialize)]
    struct P<'a> {
        convention: &'static str,
        causal: bool,
        columns_needed: usize,
        #[serde(flatten)]
        columns: &'a FlashMaskColumns,
    }
    let r = flashmask_columns(mask);
    let p = r.as_ref().ok().map(|c| P {
        convention: "key column k: query q may not attend iff LTS[k] <= q < LTE[k] (q >= k) or UTS[k] <= q < UTE[k] (q < k); empty: LTS = LTE = n, UTS = UTE = 0",
        causal: c.causal(),
        columns_needed: c.columns_needed(),
        columns: c,
    });
    report("flashmask", r.as_ref().err(), p.as_ref())
}

fn report<T: Serialize>(kernel: &'static str, err: Option<&NotRepresentable>, params: Option<&T>) -> String {
    let r = KernelReport { kernel, representable: err.is_none(), reason: err.map(|e| e.reason.clone()), params };
    let mut s = serde_json::to_string(&r).unwrap_or_default();
    s.push('\n');
    s
}

/// Why a kernel parameter file (what `export --to flash` / `--to flashmask` writes, or the same
/// fields written by hand) does not give a mask.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KernelImportError {
    /// Not JSON, or not an object with a known `kernel`.
    #[error("not a kernel parameter file: {0}")]
    NotKernel(String),
    /// The file itself says the mask was not representable.
    #[error("the file records a mask {kernel} cannot represent ({reason}); there are no parameters to import")]
    NotRepresentable {
        /// Kernel named in the file.
        kernel: String,
        /// The recorded reason.
        reason: String,
    },
    /// A FlashAttention window carries no size: give one.
    #[error("a FlashAttention window does not say how many positions it covers: give the size (n)")]
    NeedsSize,
    /// A field is missing, of the wrong type or out of range.
    #[error("{field}: {reason}")]
    Field {
        /// The field.
        field: String,
        /// What is wrong.
        reason: String,
    },
}

/// Whether `bytes` look like a kernel parameter file: a JSON object with a `"kernel"` field
/// (cheap check on the text; [`parse_kernel_json`] does the real parsing).
pub fn is_kernel_json(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') && head.windows(8).any(|w| w == b"\"kernel\"")
}

/// The mask a kernel parameter file means: FlashAttention `{"kernel": "flash-attention",
/// "causal": .., "window_size": [left, right]}` (`-1` unbounded; `n` from the file's `"n"` or
/// `n`), or FlashMask `{"kernel": "flashmask", "n": .., "lts": [..], "lte": [..], "uts": [..],
/// "ute": [..]}` in this module's convention (`lte` defaults to `n` per column; `uts`/`ute`, when
/// absent, to the causal upper triangle if `"causal": true`, else to empty intervals). Exactly
/// the inverse of [`flash_json`] and [`flashmask_json`] for representable masks.
///
/// # Errors
/// [`KernelImportError`] naming the offending field.
///
/// # Examples
/// ```
/// use hasseflow_core::BitMatrix;
/// use hasseflow_core::interop::kernels::{flashmask_json, parse_kernel_json};
/// let prefix = BitMatrix::from_fn(5, |q, k| k <= q || k < 2);
/// assert_eq!(parse_kernel_json(flashmask_json(&prefix).as_bytes(), None).unwrap(), prefix);
/// let w = br#"{"kernel": "flash-attention", "causal": true, "window_size": [1, 0]}"#;
/// assert_eq!(parse_kernel_json(w, Some(3)).unwrap().to_row_strings(), ["1..", "11.", ".11"]);
/// ```
pub fn parse_kernel_json(bytes: &[u8], n: Option<usize>) -> Result<BitMatrix, KernelImportError> {
    use serde_json::Value;
    let field = |field: &str, reason: String| KernelImportError::Field { field: field.into(), reason };
    if bytes.len() > crate::format::MAX_INPUT_BYTES {
        return Err(KernelImportError::NotKernel(format!(
            "{} bytes is over the {} byte limit",
            bytes.len(),
            crate::format::MAX_INPUT_BYTES
        )));
    }
    // Text first, then JSON: every JSON in the crate is read from a `&str` (one reader in the wasm).
    let text = std::str::from_utf8(bytes).map_err(|e| KernelImportError::NotKernel(format!("not UTF-8 text ({e})")))?;
    let v: Value = serde_json::from_str(text).map_err(|e| KernelImportError::NotKernel(e.to_string()))?;
    let kernel = v.get("kernel").and_then(Value::as_str).ok_or_else(|| {
        KernelImportError::NotKernel("no \"kernel\" field (\"flash-attention\" or \"flashmask\")".into())
    })?;
    if v.get("representable") == Some(&Value::Bool(false)) {
        let reason = v.get("reason").and_then(Value::as_str).unwrap_or("no reason given");
        return Err(KernelImportError::NotRepresentable { kernel: kernel.into(), reason: reason.into() });
    }
    let size = |v: &Value| -> Result<Option<usize>, KernelImportError> {
        match v.get("n") {
            None => Ok(None),
            Some(x) => match x.as_u64() {
                Some(s) if (1..=crate::format::MAX_N as u64).contains(&s) => Ok(Some(s as usize)),
                _ => Err(field("n", format!("must be a whole number from 1 to {}, got {x}", crate::format::MAX_N))),
            },
        }
    };
    let causal = match v.get("causal") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(x) => return Err(field("causal", format!("must be true or false, got {x}"))),
    };
    match kernel {
        "flash-attention" => {
            let n = match (size(&v)?, n) {
                (Some(a), Some(b)) if a != b => {
                    return Err(field("n", format!("the file says {a}, the size given is {b}")));
                }
                (Some(a), _) | (None, Some(a)) => a,
                (None, None) => return Err(KernelImportError::NeedsSize),
            };
            let bad = || field("window_size", "must be [left, right], whole numbers >= -1 (-1: unbounded)".into());
            let w = v.get("window_size").and_then(Value::as_array).ok_or_else(bad)?;
            let side = |x: &Value| match x.as_i64() {
                Some(-1) => Ok(None),
                Some(s) if s >= 0 => Ok(Some(s as usize)),
                _ => Err(bad()),
            };
            let (left, right) = match &w[..] {
                [l, r] => (side(l)?, side(r)?),
                _ => return Err(bad()),
            };
            let right = if causal { Some(0) } else { right };
            if n == 0 || n > crate::format::MAX_N {
                return Err(field("n", format!("must be from 1 to {}, got {n}", crate::format::MAX_N)));
            }
            Ok(FlashWindow { causal, left, right }.mask(n))
        }
        "flashmask" => {
            let n = size(&v)?.or(n).ok_or_else(|| field("n", "missing: FlashMask files give the size".into()))?;
            let column = |name: &str, default: &dyn Fn(usize) -> usize| -> Result<Vec<usize>, KernelImportError> {
                match v.get(name) {
                    None => Ok((0..n).map(default).collect()),
                    Some(Value::Array(a)) if a.len() == n => a
                        .iter()
                        .map(|x| match x.as_u64() {
                            Some(s) if s as usize <= n => Ok(s as usize),
                            _ => Err(field(name, format!("entries must be whole numbers from 0 to n = {n}, got {x}"))),
                        })
                        .collect(),
                    Some(Value::Array(a)) => Err(field(name, format!("has {} entries, expected n = {n}", a.len()))),
                    Some(x) => Err(field(name, format!("must be a list, got {x}"))),
                }
            };
            let lts = v.get("lts").map(|_| column("lts", &|_| n)).ok_or_else(|| field("lts", "missing".into()))??;
            let lte = column("lte", &|_| n)?;
            let uts = column("uts", &|_| 0)?;
            let ute = column("ute", &|k| if causal { k } else { 0 })?;
            for k in 0..n {
                if !(k <= lts[k] && lts[k] <= lte[k]) && lts[k] != lte[k] {
                    return Err(field(
                        "lts",
                        format!("column {k}: the lower interval [{}, {}) must lie in rows {k}..{n}", lts[k], lte[k]),
                    ));
                }
                if !(uts[k] <= ute[k] && ute[k] <= k) && uts[k] != ute[k] {
                    return Err(field(
                        "uts",
                        format!("column {k}: the upper interval [{}, {}) must lie in rows 0..{k}", uts[k], ute[k]),
                    ));
                }
            }
            Ok(FlashMaskColumns { n, lts, lte, uts, ute }.mask())
        }
        other => Err(KernelImportError::NotKernel(format!(
            "unknown kernel {other:?} (expected \"flash-attention\" or \"flashmask\")"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn flash_windows_round_trip() {
        for n in [1, 2, 5, 9] {
            for left in [None, Some(0), Some(1), Some(3)] {
                for right in [None, Some(0), Some(2)] {
                    let w = FlashWindow { causal: right == Some(0), left, right };
                    let m = w.mask(n);
                    let back = flash_window(&m).unwrap();
                    assert_eq!(back.mask(n), m, "n={n} {w:?}");
                }
            }
        }
        let full = flash_window(&BitMatrix::ones(6)).unwrap();
        assert_eq!(full.call(), "flash_attn_func(q, k, v, causal=False, window_size=(-1, -1))");
        let causal = flash_window(&BitMatrix::from_fn(6, |q, k| k <= q)).unwrap();
        assert_eq!(causal.window_size(), (-1, 0));
        assert!(causal.causal);
    }

    #[test]
    fn flash_refusals_name_the_row() {
        let strict = BitMatrix::from_fn(4, |q, k| k < q);
        assert!(flash_window(&strict).unwrap_err().to_string().contains("query 0 does not read itself"));
        let dilated = BitMatrix::from_fn(5, |q, k| k <= q && (q - k) % 2 == 0);
        assert!(flash_window(&dilated).unwrap_err().to_string().contains("not contiguous"));
        let prefix = BitMatrix::from_fn(5, |q, k| k <= q || k < 2);
        assert!(flash_window(&prefix).unwrap_err().to_string().contains("query 1 reads keys 0..=1"));
        assert!(flash_json(&prefix).contains("\"representable\":false"));
        assert!(flash_json(&BitMatrix::ones(2)).contains("\"window_size\":[-1,-1]"));
    }

    #[test]
    fn flashmask_round_trips_and_refuses() {
        let mut rng = SplitMix64::new(9);
        let mut representable = 0;
        for _ in 0..300 {
            let n = 1 + rng.below(12);
            // Random intervals per column give representable masks; random cells mostly do not.
            let m = if rng.below(2) == 0 {
                let mut c = FlashMaskColumns { n, lts: vec![n; n], lte: vec![n; n], uts: vec![0; n], ute: vec![0; n] };
                for k in 0..n {
                    let (a, b) = (k + rng.below(n - k + 1), k + rng.below(n - k + 1));
                    (c.lts[k], c.lte[k]) = if a < b { (a, b) } else { (n, n) };
                    let (a, b) = (rng.below(k + 1), rng.below(k + 1));
                    (c.uts[k], c.ute[k]) = if a < b { (a, b) } else { (0, 0) };
                }
                c.mask()
            } else {
                BitMatrix::from_fn(n, |_, _| rng.below(3) > 0)
            };
            match flashmask_columns(&m) {
                Ok(c) => {
                    representable += 1;
                    assert_eq!(c.mask(), m);
                }
                Err(e) => assert!(e.reason.contains("more than one interval"), "{e}"),
            }
        }
        assert!(representable > 150);
        let causal = flashmask_columns(&BitMatrix::from_fn(5, |q, k| k <= q)).unwrap();
        assert_eq!((causal.causal(), causal.columns_needed()), (true, 1));
        let doc = flashmask_columns(&BitMatrix::from_fn(6, |q, k| k <= q && q / 3 == k / 3)).unwrap();
        assert_eq!((doc.lts[0], doc.lte[0], doc.columns_needed()), (3, 6, 1));
        let window = flashmask_columns(&BitMatrix::from_fn(6, |q, k| k <= q && q - k < 2)).unwrap();
        assert_eq!((window.lts[0], window.lte[0]), (2, 6));
        let strided = BitMatrix::from_fn(6, |q, k| k <= q && (q - k) % 2 == 0);
        let err = flashmask_columns(&strided).unwrap_err().to_string();
        assert!(err.contains("key column 0") && err.contains("lower"), "{err}");
        assert!(flashmask_json(&strided).contains("\"representable\":false"));
        assert!(flashmask_json(&BitMatrix::ones(3)).contains("\"columns_needed\":2"));
    }

    #[test]
    fn kernel_files_import_back_to_the_mask_they_were_exported_from() {
        let mut rng = SplitMix64::new(21);
        let (mut windows, mut columns) = (0, 0);
        for _ in 0..400 {
            let n = 1 + rng.below(14);
            let m = match rng.below(3) {
                0 => FlashWindow {
                    causal: false,
                    left: [None, Some(rng.below(4))][rng.below(2)],
                    right: [None, Some(rng.below(4))][rng.below(2)],
                }
                .mask(n),
                1 => BitMatrix::from_fn(n, |q, k| k <= q && q - k < 1 + rng.below(n)),
                _ => BitMatrix::from_fn(n, |_, _| rng.below(4) > 0),
            };
            if flash_window(&m).is_ok() {
                windows += 1;
                assert_eq!(parse_kernel_json(flash_json(&m).as_bytes(), Some(n)), Ok(m.clone()));
            }
            if flashmask_columns(&m).is_ok() {
                columns += 1;
                assert_eq!(parse_kernel_json(flashmask_json(&m).as_bytes(), None), Ok(m.clone()));
            }
        }
        assert!(windows > 100 && columns > 150, "{windows} windows, {columns} column sets");
        // Hand-written minimal files: causal FlashMask with only LTS (a window of 2).
        let lts_only = br#"{"kernel":"flashmask","n":4,"causal":true,"lts":[2,3,4,4]}"#;
        assert_eq!(
            parse_kernel_json(lts_only, None).map(|m| m.to_row_strings()),
            Ok(vec!["1...".to_string(), "11..".into(), ".11.".into(), "..11".into()])
        );
        assert!(is_kernel_json(lts_only) && is_kernel_json(flash_json(&BitMatrix::ones(3)).as_bytes()));
        let mask_file =
            crate::format::write_json(&crate::format::MaskFile::new(BitMatrix::ones(2)), Default::default());
        assert!(!is_kernel_json(mask_file.as_bytes()) && !is_kernel_json(b"1.\n11\n"));
    }

    #[test]
    fn bad_kernel_files_name_what_is_wrong() {
        let err = |bytes: &[u8], n: Option<usize>| parse_kernel_json(bytes, n).unwrap_err().to_string();
        assert!(err(b"not json", None).contains("not a kernel parameter file"));
        assert!(err(br#"{"kernel":"xformers"}"#, None).contains("unknown kernel"));
        let refused = flash_json(&BitMatrix::from_fn(4, |q, k| k < q));
        assert!(err(refused.as_bytes(), Some(4)).contains("cannot represent (query 0"));
        let w = br#"{"kernel":"flash-attention","window_size":[1,0]}"#;
        assert!(err(w, None).contains("give the size"));
        assert!(err(br#"{"kernel":"flash-attention","window_size":[1]}"#, Some(3)).contains("window_size"));
        assert!(err(br#"{"kernel":"flash-attention","window_size":[-2,0]}"#, Some(3)).contains("window_size"));
        assert!(err(br#"{"kernel":"flash-attention","n":3,"window_size":[1,0]}"#, Some(4)).contains("the file says 3"));
        assert!(err(br#"{"kernel":"flash-attention","n":0,"window_size":[1,0]}"#, None).contains("n: must be"));
        assert!(err(br#"{"kernel":"flashmask","lts":[1]}"#, None).contains("n: missing"));
        assert!(err(br#"{"kernel":"flashmask","n":2}"#, None).contains("lts: missing"));
        assert!(err(br#"{"kernel":"flashmask","n":2,"lts":[1]}"#, None).contains("has 1 entries"));
        assert!(err(br#"{"kernel":"flashmask","n":2,"lts":[1,9]}"#, None).contains("from 0 to n = 2"));
        assert!(err(br#"{"kernel":"flashmask","n":3,"lts":[3,0,3],"lte":[3,2,3]}"#, None).contains("column 1"));
        assert!(
            err(br#"{"kernel":"flashmask","n":3,"lts":[3,3,3],"uts":[0,0,1],"ute":[0,2,2]}"#, None)
                .contains("column 1: the upper interval")
        );
        assert!(err(br#"{"kernel":"flashmask","n":2,"causal":"yes","lts":[2,2]}"#, None).contains("causal"));
    }
}

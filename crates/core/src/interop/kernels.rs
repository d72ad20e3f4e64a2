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
}

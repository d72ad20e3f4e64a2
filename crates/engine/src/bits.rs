//! A bit-packed square boolean matrix: the representation of masks, closures and layer reachability.
//!
//! Row `q` is a bitset over columns `k`, stored in `u64` words with bit `k % 64` of word `k / 64`
//! set when `M[q][k] = 1`. Bits past `n` in the last word of a row are always zero; every method
//! keeps that invariant, so word-level equality and popcount are exact.

use std::fmt;

/// Number of bits in one storage word.
pub const WORD_BITS: usize = 64;

/// Words needed for a row of `n` bits.
#[inline]
pub const fn words_for(n: usize) -> usize {
    n.div_ceil(WORD_BITS)
}

/// An `n x n` boolean matrix, bit-packed by rows.
///
/// # Examples
/// ```
/// use hasseflow_engine::BitMatrix;
/// let m = BitMatrix::from_fn(3, |q, k| k <= q);
/// assert!(m.get(2, 0));
/// assert!(!m.get(0, 2));
/// assert_eq!(m.count_ones(), 6);
/// assert_eq!(m.to_row_strings(), vec!["1..", "11.", "111"]);
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BitMatrix {
    n: usize,
    words: usize,
    bits: Vec<u64>,
}

impl BitMatrix {
    /// The all-zero `n x n` matrix.
    pub fn zeros(n: usize) -> Self {
        let words = words_for(n);
        BitMatrix { n, words, bits: vec![0; words * n] }
    }

    /// The identity matrix (the residual connection: every position keeps its own state).
    pub fn identity(n: usize) -> Self {
        let mut m = Self::zeros(n);
        for i in 0..n {
            m.set(i, i, true);
        }
        m
    }

    /// The all-ones matrix.
    pub fn ones(n: usize) -> Self {
        let mut m = Self::zeros(n);
        for q in 0..n {
            m.row_mut(q).fill(!0);
        }
        m.clear_tails();
        m
    }

    /// Builds a matrix from a predicate `f(q, k)`.
    ///
    /// Complexity: `n²` calls of `f`.
    pub fn from_fn(n: usize, mut f: impl FnMut(usize, usize) -> bool) -> Self {
        let mut m = Self::zeros(n);
        for q in 0..n {
            let row = m.row_mut(q);
            for k in 0..n {
                if f(q, k) {
                    row[k / WORD_BITS] |= 1 << (k % WORD_BITS);
                }
            }
        }
        m
    }

    /// Builds a matrix from its rows given as bit words (little-endian bit order inside a word).
    /// Bits beyond `n` are cleared.
    pub fn from_words(n: usize, bits: Vec<u64>) -> Self {
        debug_assert_eq!(bits.len(), words_for(n) * n);
        let mut m = BitMatrix { n, words: words_for(n), bits };
        m.clear_tails();
        m
    }

    fn clear_tails(&mut self) {
        let rem = self.n % WORD_BITS;
        if rem == 0 {
            return;
        }
        let keep = (1u64 << rem) - 1;
        for q in 0..self.n {
            let w = self.words;
            self.bits[q * w + w - 1] &= keep;
        }
    }

    /// Side length `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }

    /// Words per row.
    #[inline]
    pub fn words_per_row(&self) -> usize {
        self.words
    }

    /// Entry `M[q][k]`: whether query `q` reads key `k`.
    ///
    /// # Panics
    /// If `q` or `k` is out of range.
    #[inline]
    pub fn get(&self, q: usize, k: usize) -> bool {
        assert!(q < self.n && k < self.n, "index ({q}, {k}) out of range for n = {}", self.n);
        self.bits[q * self.words + k / WORD_BITS] >> (k % WORD_BITS) & 1 == 1
    }

    /// Sets entry `M[q][k]`.
    ///
    /// # Panics
    /// If `q` or `k` is out of range.
    #[inline]
    pub fn set(&mut self, q: usize, k: usize, value: bool) {
        assert!(q < self.n && k < self.n, "index ({q}, {k}) out of range for n = {}", self.n);
        let w = &mut self.bits[q * self.words + k / WORD_BITS];
        let b = 1u64 << (k % WORD_BITS);
        if value {
            *w |= b;
        } else {
            *w &= !b;
        }
    }

    /// Row `q` as words.
    #[inline]
    pub fn row(&self, q: usize) -> &[u64] {
        &self.bits[q * self.words..(q + 1) * self.words]
    }

    /// Row `q` as mutable words. Callers must keep bits past `n` zero.
    #[inline]
    pub fn row_mut(&mut self, q: usize) -> &mut [u64] {
        &mut self.bits[q * self.words..(q + 1) * self.words]
    }

    /// All words, row-major.
    #[inline]
    pub fn as_words(&self) -> &[u64] {
        &self.bits
    }

    /// Columns `k` with `M[q][k] = 1`, ascending.
    pub fn row_ones(&self, q: usize) -> Ones<'_> {
        Ones::new(self.row(q))
    }

    /// Number of ones in row `q`.
    pub fn row_count(&self, q: usize) -> usize {
        self.row(q).iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Number of ones (mask entries).
    pub fn count_ones(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Fraction of ones, in `[0, 1]` (0 for `n = 0`).
    pub fn density(&self) -> f64 {
        if self.n == 0 { 0.0 } else { self.count_ones() as f64 / (self.n as f64 * self.n as f64) }
    }

    /// Whether every one of `self` is a one of `other`.
    pub fn is_subset(&self, other: &BitMatrix) -> bool {
        assert_eq!(self.n, other.n, "matrices of different sizes");
        self.bits.iter().zip(&other.bits).all(|(a, b)| a & !b == 0)
    }

    /// `self ∨ I`: the one-layer adjacency with the residual connection.
    pub fn with_diagonal(&self) -> BitMatrix {
        let mut m = self.clone();
        for i in 0..self.n {
            m.set(i, i, true);
        }
        m
    }

    /// Whether every one lies on the diagonal (`M ⊆ I`).
    pub fn is_within_diagonal(&self) -> bool {
        (0..self.n).all(|q| self.row_ones(q).all(|k| k == q))
    }

    /// The transpose `Mᵀ` (information flow reversed).
    ///
    /// Complexity: `O(n² / 64 + ones)`.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn transpose(&self) -> BitMatrix {
        let mut t = BitMatrix::zeros(self.n);
        for q in 0..self.n {
            for k in self.row_ones(q) {
                t.bits[k * t.words + q / WORD_BITS] |= 1 << (q % WORD_BITS);
            }
        }
        t
    }

    fn zip_with(&self, other: &BitMatrix, f: impl Fn(u64, u64) -> u64) -> BitMatrix {
        assert_eq!(self.n, other.n, "matrices of different sizes");
        let bits = self.bits.iter().zip(&other.bits).map(|(&a, &b)| f(a, b)).collect();
        BitMatrix { n: self.n, words: self.words, bits }
    }

    /// Entry-wise AND.
    pub fn and(&self, other: &BitMatrix) -> BitMatrix {
        self.zip_with(other, |a, b| a & b)
    }

    /// Entry-wise OR (several heads in one layer act as their OR).
    pub fn or(&self, other: &BitMatrix) -> BitMatrix {
        self.zip_with(other, |a, b| a | b)
    }

    /// Entry-wise XOR (the cells where two masks differ).
    pub fn xor(&self, other: &BitMatrix) -> BitMatrix {
        self.zip_with(other, |a, b| a ^ b)
    }

    /// Entry-wise NOT.
    pub fn not(&self) -> BitMatrix {
        let mut m = BitMatrix { n: self.n, words: self.words, bits: self.bits.iter().map(|w| !w).collect() };
        m.clear_tails();
        m
    }

    /// Boolean product `self · other`: `(AB)[q][k] = ∃ j. A[q][j] ∧ B[j][k]`.
    /// With `A = Ā_2`, `B = Ā_1` this is the reachability after the two layers.
    ///
    /// Complexity: `O(ones(self) · n / 64)` word operations (rows of `other` are OR-ed).
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn bool_product(&self, other: &BitMatrix) -> BitMatrix {
        assert_eq!(self.n, other.n, "matrices of different sizes");
        let mut out = BitMatrix::zeros(self.n);
        let w = self.words;
        for q in 0..self.n {
            let dst = &mut out.bits[q * w..(q + 1) * w];
            for j in Ones::new(&self.bits[q * w..(q + 1) * w]) {
                for (d, s) in dst.iter_mut().zip(other.row(j)) {
                    *d |= s;
                }
            }
        }
        out
    }

    /// Rows as strings of `1` and `.` (row `q`, column `k`).
    pub fn to_row_strings(&self) -> Vec<String> {
        (0..self.n).map(|q| (0..self.n).map(|k| if self.get(q, k) { '1' } else { '.' }).collect()).collect()
    }

    /// A copy resized to `m x m`: the top-left corner is kept, new cells are zero.
    pub fn resized(&self, m: usize) -> BitMatrix {
        let keep = self.n.min(m);
        let mut out = BitMatrix::zeros(m);
        for q in 0..keep {
            for k in self.row_ones(q).take_while(|&k| k < keep) {
                out.set(q, k, true);
            }
        }
        out
    }
}

impl fmt::Debug for BitMatrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "BitMatrix({}x{})", self.n, self.n)?;
        for row in self.to_row_strings() {
            writeln!(f, "  {row}")?;
        }
        Ok(())
    }
}

/// Iterator over the indices of set bits in a slice of words, ascending.
pub struct Ones<'a> {
    words: &'a [u64],
    index: usize,
    current: u64,
}

impl<'a> Ones<'a> {
    /// Iterates the set bits of `words`.
    pub fn new(words: &'a [u64]) -> Self {
        Ones { words, index: 0, current: words.first().copied().unwrap_or(0) }
    }
}

impl Iterator for Ones<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.current != 0 {
                let bit = self.current.trailing_zeros() as usize;
                self.current &= self.current - 1;
                return Some(self.index * WORD_BITS + bit);
            }
            self.index += 1;
            if self.index >= self.words.len() {
                return None;
            }
            self.current = self.words[self.index];
        }
    }
}

/// The row-major packed-bit encoding of a matrix: cell `(q, k)` is bit `i % 8` (least
/// significant first) of byte `i / 8`, with `i = q·n + k`; `ceil(n² / 8)` bytes, the bits past
/// the last cell zero. The JSON `packed` field, the FlexAttention lookup table and the app's share
/// links all write it, each in its own base64 flavour.
///
/// # Examples
/// ```
/// use hasseflow_engine::BitMatrix;
/// use hasseflow_engine::bits::{pack_bits, unpack_bits};
/// let m = BitMatrix::from_fn(3, |q, k| k <= q);
/// assert_eq!(pack_bits(&m), [0b1101_1001, 0b1]); // cells 0, 3, 4, 6, 7 and 8
/// assert_eq!(unpack_bits(&pack_bits(&m), 3), Ok(m));
/// ```
pub fn pack_bits(m: &BitMatrix) -> Vec<u8> {
    let n = m.n();
    let mut bytes = vec![0u8; (n * n).div_ceil(8)];
    for q in 0..n {
        for k in m.row_ones(q) {
            let i = q * n + k;
            bytes[i / 8] |= 1 << (i % 8);
        }
    }
    bytes
}

/// Why bytes are not a [`pack_bits`] encoding of an `n x n` matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PackedBitsError {
    /// Not `ceil(n² / 8)` bytes.
    #[error("has {got} bytes, expected {expected} for n = {n}")]
    Length {
        /// Bytes given.
        got: usize,
        /// Bytes an `n x n` matrix takes.
        expected: usize,
        /// The side.
        n: usize,
    },
    /// A bit set past cell `n² - 1` in the last byte.
    #[error("has bits set past the last cell")]
    TailBits,
}

/// The `n x n` matrix [`pack_bits`] wrote as `bytes`.
///
/// # Errors
/// [`PackedBitsError::Length`] unless there are exactly `ceil(n² / 8)` bytes,
/// [`PackedBitsError::TailBits`] when a bit past the last cell is set.
pub fn unpack_bits(bytes: &[u8], n: usize) -> Result<BitMatrix, PackedBitsError> {
    let expected = (n * n).div_ceil(8);
    if bytes.len() != expected {
        return Err(PackedBitsError::Length { got: bytes.len(), expected, n });
    }
    if !(n * n).is_multiple_of(8) && bytes[expected - 1] >> ((n * n) % 8) != 0 {
        return Err(PackedBitsError::TailBits);
    }
    Ok(BitMatrix::from_fn(n, |q, k| {
        let i = q * n + k;
        bytes[i / 8] >> (i % 8) & 1 == 1
    }))
}

/// `dst |= src`, word by word.
#[inline]
pub(crate) fn or_into(dst: &mut [u64], src: &[u64]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d |= s;
    }
}

/// Sets bit `i` in a word slice.
#[inline]
pub fn set_bit(words: &mut [u64], i: usize) {
    words[i / WORD_BITS] |= 1 << (i % WORD_BITS);
}

/// Whether bit `i` of a word slice is set.
#[inline]
pub fn get_bit(words: &[u64], i: usize) -> bool {
    words[i / WORD_BITS] >> (i % WORD_BITS) & 1 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_stay_clear() {
        for n in [1, 63, 64, 65, 130] {
            let m = BitMatrix::ones(n);
            assert_eq!(m.count_ones(), n * n);
            assert_eq!(m.not().count_ones(), 0);
            assert_eq!(BitMatrix::zeros(n).not().count_ones(), n * n);
        }
    }

    #[test]
    fn transpose_and_product() {
        let causal = BitMatrix::from_fn(70, |q, k| k <= q);
        let anti = BitMatrix::from_fn(70, |q, k| k >= q);
        assert_eq!(causal.transpose(), anti);
        let window = BitMatrix::from_fn(10, |q, k| q >= k && q - k < 2);
        let two = window.bool_product(&window);
        assert_eq!(two, BitMatrix::from_fn(10, |q, k| q >= k && q - k < 3));
    }

    #[test]
    fn ones_iterates_ascending() {
        let m = BitMatrix::from_fn(130, |q, k| q == 0 && (k == 3 || k == 64 || k == 129));
        assert_eq!(m.row_ones(0).collect::<Vec<_>>(), vec![3, 64, 129]);
        assert_eq!(m.row_ones(1).count(), 0);
    }

    #[test]
    fn resize_keeps_corner() {
        let m = BitMatrix::from_fn(4, |q, k| k <= q);
        let big = m.resized(6);
        assert_eq!(big.count_ones(), 10);
        assert_eq!(big.resized(4), m);
        assert_eq!(m.resized(2), BitMatrix::from_fn(2, |q, k| k <= q));
    }
}

//! FlexAttention-style block statistics: the mask cut into `B x B` tiles (the last row and column
//! of tiles may be cut short by `n`), each tile **full** (a whole `B x B` tile with every cell set:
//! FlexAttention skips `mask_mod`), **partial** (some set: computed and masked) or **empty**
//! (skipped), per query-block row and in total, with the sparsity and the attention FLOPs relative
//! to dense. A tile cut short by `n` is never full, as in `create_block_mask`, which pads the mask
//! with `False` to a multiple of `B` before counting (checked against torch's `BlockMask` by
//! `tests/python/test_torch.py`).
//!
//! Definitions (`T` tiles, `n²` cells):
//! - `sparsity = empty tiles / T` (what `BlockMask.sparsity()` reports, as a fraction).
//! - `computed_fraction` = cells inside full and partial tiles / `n²`: the attention FLOPs a
//!   block-sparse kernel spends (`QKᵀ` and `PV` are both proportional to it), relative to dense.
//! - `mask_fraction` = set cells / `n²`: the FLOPs an ideal element-sparse kernel would spend.
//!
//! Complexity: `O(n · (n/64 + n/B))` word operations.

use serde::Serialize;

use crate::bits::BitMatrix;
use crate::format::MAX_N;

/// Why statistics could not be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BlockError {
    /// A block size outside `1..=MAX_N`.
    #[error("block size {block_size} is out of range 1..={MAX_N}")]
    BlockSize {
        /// The block size asked for.
        block_size: usize,
    },
}

/// Tile counts of one query-block row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BlockRow {
    /// Tiles with every cell set.
    pub full: usize,
    /// Tiles with some but not all cells set.
    pub partial: usize,
    /// Tiles with no cell set.
    pub empty: usize,
}

/// One `B x B` tile's class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tile {
    /// A whole tile with every cell set.
    Full,
    /// Some but not all cells set (or a tile cut short by `n` with any cell set).
    Partial,
    /// No cell set.
    Empty,
}

impl Tile {
    /// The tile's character in the text report and the JSON `grid`: `#`, `+` or `.`.
    pub fn symbol(self) -> char {
        match self {
            Tile::Full => '#',
            Tile::Partial => '+',
            Tile::Empty => '.',
        }
    }
}

/// The rows of tiles as the JSON writes them: one string per row, one [`Tile::symbol`] per tile.
fn serialize_grid<S: serde::Serializer>(grid: &[Vec<Tile>], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(grid.iter().map(|row| row_symbols(row)))
}

fn row_symbols(row: &[Tile]) -> String {
    row.iter().map(|t| t.symbol()).collect()
}

/// Block statistics of a mask (see the module documentation for the definitions).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockStats {
    /// Positions.
    pub n: usize,
    /// Tile side.
    pub block_size: usize,
    /// Tiles per side, `ceil(n / block_size)`.
    pub blocks: usize,
    /// Per query-block row.
    pub rows: Vec<BlockRow>,
    /// Totals.
    pub total: BlockRow,
    /// Empty tiles / all tiles.
    pub sparsity: f64,
    /// Cells in full and partial tiles / `n²`.
    pub computed_fraction: f64,
    /// Set cells / `n²`.
    pub mask_fraction: f64,
    /// Per query-block row, per key block: the tile's class. In JSON, one string per row: `#`
    /// full, `+` partial, `.` empty ([`Tile::symbol`]).
    #[serde(serialize_with = "serialize_grid")]
    pub grid: Vec<Vec<Tile>>,
}

/// Set bits of `row` in columns `start..end`.
fn count_range(row: &[u64], start: usize, end: usize) -> usize {
    let mut count = 0;
    let mut c = start;
    while c < end {
        let (w, b) = (c / 64, c % 64);
        let take = (64 - b).min(end - c);
        let mask = if take == 64 { u64::MAX } else { ((1u64 << take) - 1) << b };
        count += (row[w] & mask).count_ones() as usize;
        c += take;
    }
    count
}

/// Block statistics of `mask` with tiles of side `block_size`.
///
/// # Errors
/// [`BlockError::BlockSize`] for a block size outside `1..=MAX_N`.
///
/// # Examples
/// ```
/// use hasseflow_core::{BitMatrix, interop::blocks::block_stats};
/// let causal = BitMatrix::from_fn(8, |q, k| k <= q);
/// let s = block_stats(&causal, 4).unwrap();
/// assert_eq!((s.total.full, s.total.partial, s.total.empty), (1, 2, 1));
/// use hasseflow_core::interop::blocks::Tile;
/// assert_eq!(s.grid, [[Tile::Partial, Tile::Empty], [Tile::Full, Tile::Partial]]);
/// assert!(s.to_json().contains(r##""grid":["+.","#+"]"##));
/// assert_eq!(s.sparsity, 0.25);
/// ```
pub fn block_stats(mask: &BitMatrix, block_size: usize) -> Result<BlockStats, BlockError> {
    if block_size == 0 || block_size > MAX_N {
        return Err(BlockError::BlockSize { block_size });
    }
    let n = mask.n();
    let blocks = n.div_ceil(block_size);
    let span = |b: usize| (b * block_size, ((b + 1) * block_size).min(n));
    let mut rows = Vec::with_capacity(blocks);
    let mut grid = Vec::with_capacity(blocks);
    let mut total = BlockRow::default();
    let mut computed_cells = 0usize;
    let mut counts = vec![0usize; blocks];
    for bq in 0..blocks {
        let (q0, q1) = span(bq);
        counts.iter_mut().for_each(|c| *c = 0);
        for q in q0..q1 {
            let row = mask.row(q);
            for (bk, c) in counts.iter_mut().enumerate() {
                let (k0, k1) = span(bk);
                *c += count_range(row, k0, k1);
            }
        }
        let mut r = BlockRow::default();
        let mut line = Vec::with_capacity(blocks);
        for (bk, &c) in counts.iter().enumerate() {
            let (k0, k1) = span(bk);
            let cells = (q1 - q0) * (k1 - k0);
            if c == 0 {
                r.empty += 1;
                line.push(Tile::Empty);
            } else {
                computed_cells += cells;
                if c == block_size * block_size {
                    r.full += 1;
                    line.push(Tile::Full);
                } else {
                    r.partial += 1;
                    line.push(Tile::Partial);
                }
            }
        }
        total.full += r.full;
        total.partial += r.partial;
        total.empty += r.empty;
        rows.push(r);
        grid.push(line);
    }
    let cells = (n * n) as f64;
    Ok(BlockStats {
        n,
        block_size,
        blocks,
        rows,
        total,
        sparsity: total.empty as f64 / (blocks * blocks) as f64,
        computed_fraction: computed_cells as f64 / cells,
        mask_fraction: mask.count_ones() as f64 / cells,
        grid,
    })
}

impl BlockStats {
    /// A text report: totals, ratios and the tile grid with per-row counts.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "n = {}, block size {}: {} x {} tiles\n\
             tiles: {} full, {} partial, {} empty (sparsity {:.2}%)\n\
             attention FLOPs vs dense: {:.2}% with block sparsity (full + partial tiles), {:.2}% for the mask itself\n\
             tiles per query-block row (# full, + partial, . empty):\n",
            self.n,
            self.block_size,
            self.blocks,
            self.blocks,
            self.total.full,
            self.total.partial,
            self.total.empty,
            100.0 * self.sparsity,
            100.0 * self.computed_fraction,
            100.0 * self.mask_fraction,
        );
        let width = self.blocks.to_string().len();
        for (i, (row, line)) in self.rows.iter().zip(&self.grid).enumerate() {
            // Very wide grids are cut; the counts stay exact.
            let shown = row_symbols(&line[..line.len().min(128)]);
            let cut = if line.len() > 128 { "…" } else { "" };
            out.push_str(&format!(
                "{i:>width$} {shown}{cut}  full {} partial {} empty {}\n",
                row.full, row.partial, row.empty
            ));
        }
        out
    }

    /// The statistics as one JSON object (trailing newline).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn counts_agree_with_a_cell_by_cell_oracle() {
        let mut rng = SplitMix64::new(3);
        for n in [1, 5, 63, 64, 65, 130] {
            let density = [0.0, 0.05, 0.5, 1.0][rng.below(4)];
            let m = BitMatrix::from_fn(n, |q, k| k <= q || rng.next_f64() < density);
            for b in [1, 2, 3, 16, 64, 128, 200] {
                let s = block_stats(&m, b).unwrap();
                let blocks = n.div_ceil(b);
                let mut want = BlockRow::default();
                let mut computed = 0;
                for bq in 0..blocks {
                    for bk in 0..blocks {
                        let cells: Vec<bool> = (bq * b..((bq + 1) * b).min(n))
                            .flat_map(|q| (bk * b..((bk + 1) * b).min(n)).map(move |k| (q, k)))
                            .map(|(q, k)| m.get(q, k))
                            .collect();
                        if cells.len() == b * b && cells.iter().all(|&c| c) {
                            want.full += 1;
                        } else if cells.iter().any(|&c| c) {
                            want.partial += 1;
                        } else {
                            want.empty += 1;
                            continue;
                        }
                        computed += cells.len();
                    }
                }
                assert_eq!(s.total, want, "n={n} b={b}");
                assert_eq!(s.computed_fraction, computed as f64 / (n * n) as f64);
                assert_eq!(s.rows.iter().map(|r| r.full + r.partial + r.empty).sum::<usize>(), blocks * blocks);
            }
        }
    }

    #[test]
    fn reports_and_errors() {
        let s = block_stats(&BitMatrix::ones(4), 4).unwrap();
        assert_eq!((s.blocks, s.total.full, s.sparsity, s.computed_fraction), (1, 1, 0.0, 1.0));
        assert!(s.to_text().contains("1 full, 0 partial, 0 empty"));
        // A tile cut short by n is never full: torch pads with False before counting.
        let s = block_stats(&BitMatrix::ones(4), 128).unwrap();
        assert_eq!((s.blocks, s.total.full, s.total.partial), (1, 0, 1));
        assert!(s.to_json().contains("\"sparsity\":0.0"));
        assert_eq!(
            block_stats(&BitMatrix::ones(4), 0).unwrap_err().to_string(),
            "block size 0 is out of range 1..=8192"
        );
    }
}

//! Interoperability: taking masks to and from the tools researchers train with.
//!
//! Every export is a pure function returning a `String` or bytes, so the CLI and the web app call
//! the same code; every import returns a typed error naming where and what.
//!
//! - [`flex`]: Python for PyTorch FlexAttention (`mask_mod` + `create_block_mask`), a closed-form
//!   expression when the mask's provenance names a preset it still equals, a lookup table otherwise.
//! - [`blocks`]: FlexAttention-style block statistics (full / partial / empty tiles, sparsity, FLOPs).
//! - [`npy`]: NumPy `.npy` boolean arrays, read and written.
//! - [`dot`]: the Hasse diagram as Graphviz DOT.
//! - [`kernels`]: FlashAttention `(causal, window_size)` and FlashMask column intervals, when the
//!   mask is representable, with the reason when it is not.
//!
//! Conventions shared by all of them: `M[q][k] = 1` means query `q` reads key `k` (FlexAttention's
//! `mask_mod(b, h, q_idx, kv_idx)`), 0-based. See `docs/INTEROP.md`.

pub mod blocks;
pub mod dot;
pub mod flex;
pub mod kernels;
pub mod npy;

pub use blocks::{BlockError, BlockRow, BlockStats, block_stats};
pub use dot::hasse_dot;
pub use flex::{DEFAULT_BLOCK_SIZE, FlexError, FlexExport, FlexForm, flex_python, provenance_if_matches};
pub use kernels::{
    FlashMaskColumns, FlashWindow, NotRepresentable, flash_json, flash_window, flashmask_columns, flashmask_json,
};
pub use npy::{NPY_MAGIC, NpyError, is_npy, read_npy, write_npy};

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
//! - [`mask_mod`]: FlexAttention `mask_mod` Python read back into a mask (a strict subset).
//! - [`wire`]: the `mask_mod` reader's request and answer as JSON, for the web app's lazily
//!   loaded reader.
//! - [`kernels`]: FlashAttention `(causal, window_size)` and FlashMask column intervals, when the
//!   mask is representable, with the reason when it is not.
//!
//! Conventions shared by all of them: `M[q][k] = 1` means query `q` reads key `k` (FlexAttention's
//! `mask_mod(b, h, q_idx, kv_idx)`), 0-based. See `docs/INTEROP.md`.

pub mod blocks;
pub mod dot;
pub mod flex;
pub mod kernels;
/// The `mask_mod` interpreter, a crate of its own (`crates/mask_mod`, ARCHITECTURE.md).
pub use hasseflow_mask_mod as mask_mod;
pub mod npy;
pub mod wire;

#[cfg(feature = "codecs")]
use crate::analysis::Analysis;
use crate::format::MaskFile;

pub use blocks::{BlockError, BlockRow, BlockStats, Tile, block_stats};
pub use dot::hasse_dot;
pub use flex::{DEFAULT_BLOCK_SIZE, FlexError, FlexExport, FlexForm, flex_python, provenance_if_matches};
pub use kernels::{
    FlashMaskColumns, FlashWindow, KernelImportError, NotRepresentable, flash_json, flash_window, flashmask_columns,
    flashmask_json, is_kernel_json, parse_kernel_json,
};
#[cfg(feature = "interpreter")]
pub use mask_mod::MaskMod;
pub use mask_mod::{MaskModError, MaskModReport, is_mask_mod};
pub use npy::{NPY_MAGIC, NpyError, is_npy, read_npy, write_npy};

/// Whether this build links the `mask_mod` interpreter and the `.npy` and kernel codecs (the
/// `interpreter` and `codecs` features). Without them a `mask_mod`, a `.npy` array or kernel
/// parameters ([`wire::needs_lazy_reader`]) go through [`wire`] to the module the web app loads
/// on first use.
pub const READER_LINKED: bool = cfg!(all(feature = "interpreter", feature = "codecs"));

// The interpreter evaluates densely up to the engine's limit, which is the mask files' limit.
const _: () = assert!(crate::format::MAX_N == crate::reach::DENSE_MAX);

/// One export format, for callers that offer a menu (the web app) or a flag (the CLI).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExportKind {
    /// Python for PyTorch FlexAttention ([`flex_python`]).
    Flex,
    /// NumPy `.npy`, bool `(n, n)` ([`write_npy`]).
    Npy,
    /// The Hasse diagram as Graphviz DOT ([`hasse_dot`]).
    Dot,
    /// Block statistics as text ([`BlockStats::to_text`]).
    Blocks,
    /// Block statistics as JSON ([`BlockStats::to_json`]).
    BlocksJson,
    /// FlashAttention `(causal, window_size)` verdict as JSON ([`flash_json`]).
    Flash,
    /// FlashMask column intervals verdict as JSON ([`flashmask_json`]).
    FlashMask,
}

impl ExportKind {
    /// Every kind, in menu order.
    pub const ALL: [ExportKind; 7] = [
        ExportKind::Flex,
        ExportKind::Npy,
        ExportKind::Dot,
        ExportKind::Blocks,
        ExportKind::BlocksJson,
        ExportKind::Flash,
        ExportKind::FlashMask,
    ];

    /// The CLI name (`--to NAME`).
    pub fn name(self) -> &'static str {
        match self {
            ExportKind::Flex => "flex",
            ExportKind::Npy => "npy",
            ExportKind::Dot => "dot",
            ExportKind::Blocks => "blocks",
            ExportKind::BlocksJson => "blocks-json",
            ExportKind::Flash => "flash",
            ExportKind::FlashMask => "flashmask",
        }
    }

    /// One line saying what the export is (CLI help, the app's menu).
    pub fn summary(self) -> &'static str {
        match self {
            ExportKind::Flex => "Python for PyTorch FlexAttention: mask_mod and create_block_mask",
            ExportKind::Npy => "a NumPy .npy boolean array of shape (n, n)",
            ExportKind::Dot => "the Hasse diagram as Graphviz DOT",
            ExportKind::Blocks => "block statistics as text: full / partial / empty tiles, sparsity, FLOPs vs dense",
            ExportKind::BlocksJson => "block statistics as one JSON object",
            ExportKind::Flash => "FlashAttention (causal, window_size) as JSON, or why the mask is not one",
            ExportKind::FlashMask => "FlashMask column intervals as JSON, or why the mask has none",
        }
    }

    /// The kind with this [`ExportKind::name`].
    pub fn from_name(name: &str) -> Option<ExportKind> {
        ExportKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// A file name extension for downloads.
    pub fn extension(self) -> &'static str {
        match self {
            ExportKind::Flex => "py",
            ExportKind::Npy => "npy",
            ExportKind::Dot => "dot",
            ExportKind::Blocks => "txt",
            ExportKind::BlocksJson | ExportKind::Flash | ExportKind::FlashMask => "json",
        }
    }

    /// Whether the output is binary (only `.npy`); every other kind is UTF-8 text.
    pub fn is_binary(self) -> bool {
        self == ExportKind::Npy
    }
}

/// Why an export failed (only the block size can be wrong; every mask is exportable, kernels
/// that cannot represent it say so inside their JSON).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// From the FlexAttention export.
    #[error(transparent)]
    Flex(#[from] FlexError),
    /// From the block statistics.
    #[error(transparent)]
    Blocks(#[from] BlockError),
}

/// The bytes of one export of `file` (`block_size` is used by `Flex` and the block statistics).
///
/// # Errors
/// A block size outside `1..=MAX_N` for `Flex`, `Blocks`, `BlocksJson`.
///
/// Complexity: that of the chosen export; `Dot` runs the [`Analysis`] (`O(n³/64)` worst case).
///
/// # Examples
/// ```
/// use hasseflow_core::{BitMatrix, format::MaskFile, interop::{export, ExportKind}};
/// let file = MaskFile::new(BitMatrix::from_fn(4, |q, k| k <= q));
/// for kind in ExportKind::ALL {
///     assert!(!export(&file, kind, 128).unwrap().is_empty(), "{}", kind.name());
/// }
/// ```
#[cfg(feature = "codecs")]
pub fn export(file: &MaskFile, kind: ExportKind, block_size: usize) -> Result<Vec<u8>, ExportError> {
    Ok(match kind {
        ExportKind::Flex => flex_python(file, block_size)?.code.into_bytes(),
        ExportKind::Npy => write_npy(&file.mask),
        ExportKind::Dot => hasse_dot(&Analysis::new(&file.mask), file.labels.as_deref()).into_bytes(),
        ExportKind::Blocks => block_stats(&file.mask, block_size)?.to_text().into_bytes(),
        ExportKind::BlocksJson => block_stats(&file.mask, block_size)?.to_json().into_bytes(),
        ExportKind::Flash => flash_json(&file.mask).into_bytes(),
        ExportKind::FlashMask => flashmask_json(&file.mask).into_bytes(),
    })
}

/// What size an import may use when the input does not carry its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeHint {
    /// No size known: inputs that need one are refused.
    None,
    /// A size the user asked for (`--n`): a `mask_mod` is evaluated at it, a FlashAttention window
    /// built at it, and a kernel file that records another size is refused.
    Given(usize),
    /// A size to fall back on (the editor's): used only when the input has none of its own.
    Fallback(usize),
}

/// What a byte string was read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A NumPy `.npy` array.
    Npy,
    /// Kernel parameters; `sized` when the size came from the [`SizeHint`].
    Kernel {
        /// The size came from the hint (a FlashAttention window records none).
        sized: bool,
    },
    /// A FlexAttention `mask_mod` (the name of the function taken) evaluated at `n`.
    MaskMod {
        /// The function taken.
        name: String,
        /// The size it was evaluated at.
        n: usize,
        /// What the import skipped, and whether the mask reads `b` or `h`.
        report: MaskModReport,
    },
    /// A hasseflow mask file (JSON) or a text grid.
    MaskFile,
}

impl Source {
    /// A `mask_mod` evaluated at `n`, with what its import did (the function taken is the
    /// report's): the one place the linked importer and the lazy reader's answer
    /// ([`wire::read_answer`]) both make it.
    pub fn mask_mod(n: usize, report: MaskModReport) -> Self {
        Source::MaskMod { name: report.name.clone(), n, report }
    }
}

/// Why bytes could not be imported as a mask.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// A malformed `.npy`.
    #[error("invalid .npy mask: {0}")]
    Npy(#[from] NpyError),
    /// Malformed or unusable kernel parameters.
    #[error("invalid kernel parameters: {0}")]
    Kernel(#[from] KernelImportError),
    /// A `mask_mod` outside the supported subset.
    #[error("mask_mod not imported: {0}")]
    MaskMod(#[from] MaskModError),
    /// A malformed mask file or grid.
    #[error("{0}")]
    Format(#[from] crate::format::FormatError),
    /// A refusal of the lazily loaded reader (`.npy`, kernel parameters), in its own words
    /// ([`wire::read_answer`]), or of a build that leaves that reader out.
    #[error("{0}")]
    Refused(String),
}

/// Reads any mask input the project knows, telling them apart by content: `.npy` (its magic),
/// kernel parameters (JSON with a `"kernel"` field), a FlexAttention `mask_mod` (Python), else a
/// hasseflow mask file or text grid. The one import path of the CLI and the app.
///
/// # Errors
/// [`ImportError`] naming the format the bytes were taken for and what is wrong.
///
/// # Examples
/// ```
/// use hasseflow_core::interop::{import_mask, SizeHint, Source};
/// let (file, source) = import_mask(b"def m(b, h, q, k):\n    return k <= q\n", SizeHint::Given(3)).unwrap();
/// assert_eq!(file.mask.to_row_strings(), ["1..", "11.", "111"]);
/// assert!(matches!(source, Source::MaskMod { name, n: 3, .. } if name == "m"));
/// ```
pub fn import_mask(bytes: &[u8], size: SizeHint) -> Result<(MaskFile, Source), ImportError> {
    import_mask_at(bytes, size, 0, 0)
}

/// [`import_mask`], with a `mask_mod` evaluated at batch `batch` and head `head` (what
/// `create_mask(mask_mod, B, H, n, n)[batch, head]` gives); other inputs ignore them.
///
/// # Errors
/// As [`import_mask`].
pub fn import_mask_at(bytes: &[u8], size: SizeHint, batch: u64, head: u64) -> Result<(MaskFile, Source), ImportError> {
    #[cfg(not(feature = "codecs"))]
    if is_npy(bytes) || is_kernel_json(bytes) {
        // The web app's first download: these go to the lazily loaded reader (`wire`), never here.
        let _ = size;
        return Err(ImportError::Refused(
            "this build reads no .npy or kernel parameters (their reader loads on first use)".into(),
        ));
    }
    #[cfg(feature = "codecs")]
    if let Some(read) = import_codec(bytes, size) {
        return read;
    }
    #[cfg(not(feature = "interpreter"))]
    if is_mask_mod(bytes) {
        // The web app's first download: its mask_mod texts go to the lazily loaded reader
        // (`wire`), never here.
        let _ = (batch, head);
        return Err(MaskModError::Text("this build reads no mask_mod (its reader loads on first use)".into()).into());
    }
    #[cfg(feature = "interpreter")]
    if is_mask_mod(bytes) {
        let (file, report) = import_mask_mod(bytes, size, batch, head)?;
        let n = file.mask.n();
        return Ok((file, Source::mask_mod(n, report)));
    }
    Ok((crate::format::parse_mask_file(bytes)?, Source::MaskFile))
}

/// The `.npy` and kernel-parameter branches of [`import_mask_at`]; `None` for any other input.
#[cfg(feature = "codecs")]
pub(crate) fn import_codec(bytes: &[u8], size: SizeHint) -> Option<Result<(MaskFile, Source), ImportError>> {
    if is_npy(bytes) {
        return Some(read_npy(bytes).map(|m| (MaskFile::new(m), Source::Npy)).map_err(Into::into));
    }
    if !is_kernel_json(bytes) {
        return None;
    }
    let read = match size {
        SizeHint::Given(n) => parse_kernel_json(bytes, Some(n)).map(|m| (m, true)),
        SizeHint::None => parse_kernel_json(bytes, None).map(|m| (m, false)),
        SizeHint::Fallback(n) => match parse_kernel_json(bytes, None) {
            Err(KernelImportError::NeedsSize) => parse_kernel_json(bytes, Some(n)).map(|m| (m, true)),
            other => other.map(|m| (m, false)),
        },
    };
    Some(read.map(|(mask, sized)| (MaskFile::new(mask), Source::Kernel { sized })).map_err(Into::into))
}

/// The `mask_mod` branch of [`import_mask_at`]: `bytes` run as Python and evaluated at the size
/// `size` gives (or the text's `N`), at `(batch, head)`; the mask and what the import did.
///
/// # Errors
/// [`MaskModError`] naming the refused construct and its place, or the size.
#[cfg(feature = "interpreter")]
pub fn import_mask_mod(
    bytes: &[u8],
    size: SizeHint,
    batch: u64,
    head: u64,
) -> Result<(MaskFile, MaskModReport), MaskModError> {
    let text = std::str::from_utf8(bytes).map_err(|e| MaskModError::Text(e.to_string()))?;
    let m = MaskMod::parse(text)?;
    let n = match size {
        SizeHint::Given(n) => Some(n),
        SizeHint::None => m.declared_n(),
        SizeHint::Fallback(n) => m.declared_n().or(Some(n)),
    };
    let mask = m.to_mask_at(m.size(n)?, batch, head)?;
    Ok((MaskFile::new(mask), m.report()))
}

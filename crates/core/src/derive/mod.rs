//! The derivation pipeline (THEORY §5-6): from a family of training tasks to the one mask that
//! trains them all in a single forward pass.
//!
//! family → per-task Hasse diagrams → node equivalence → minimal merged task → dense and sparse
//! masks, with a report (nodes before → after, positions, entries, supervision density, `L*`,
//! leaks, the minimality criterion and training-inference consistency).
//!
//! - [`task`]: inputs (tokens, mask tokens, aggregated tokens), tasks, families.
//! - [`keys`]: per-task Hasse diagrams and the canonical keys that decide node equivalence.
//! - [`merge`]: the pipeline itself ([`derive`]): equivalence classes, merged task, masks.
//! - [`checks`]: leaks, the minimality criterion, training-inference consistency.
//! - [`report`]: [`DeriveReport`], the derived task as JSON and text.
//! - [`families`]: the built-in families (autoregressive, block generation, butterfly, MAE).
//! - [`builtin`]: [`BuiltinFamily`], a built-in family with its options as one (serde) value, and
//!   the mask file of its derivation with the preset it reproduces.
//! - [`file`]: the user family file (`docs/FAMILY_FORMAT.md`).
//! - [`wire`]: a derivation asked of the web app's Designer module, and [`DesignView`], what the
//!   Designer draws of it.
//!
//! # Examples
//! ```
//! use hasseflow_core::derive::{autoregressive, derive, AutoregressiveOptions};
//! let family = autoregressive(AutoregressiveOptions::new(5)).unwrap();
//! let d = derive(&family).unwrap();
//! assert_eq!((d.report().nodes_before, d.report().nodes_after), (10, 4));
//! assert_eq!(d.dense().to_row_strings(), ["1...", "11..", "111.", "1111"]);
//! ```

pub mod builtin;
pub mod checks;
pub mod families;
pub mod figures;
pub mod file;
pub mod keys;
pub mod merge;
pub mod report;
pub mod task;
pub mod wire;

pub use builtin::{BuiltinFamily, FAMILIES, FamilyEntry, FamilyParam, family_entry};
pub use families::{
    Aggregate, AutoregressiveOptions, BlockOptions, ButterflyOptions, MaeOptions, autoregressive, block_generation,
    butterfly, masked_autoencoding,
};
pub use figures::{DeriveReport, Leak, multiset_text};
pub use file::{FAMILY_FORMAT_TAG, FAMILY_FORMAT_VERSION, parse_family};
pub use keys::{ISO_BUDGET, TaskDiagram};
pub use merge::{Derivation, MergedNode, derive};
pub use task::{
    Family, FamilyError, Input, InputId, MAX_FAMILY_MASK_BYTES, MAX_TASK_POSITIONS, Task, Token, parse_input,
    parse_token,
};
pub use wire::{DesignView, TaskView};

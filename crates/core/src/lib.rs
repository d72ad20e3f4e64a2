//! hasseflow-core: the order theory of attention masks.
//!
//! A mask `M` (`M[q][k] = 1`: query `q` reads key `k`) used in every layer of a Transformer with
//! residual connections makes information flow converge to a partial order on classes of
//! positions. This crate computes that order and everything around it, with no UI, web, GPU, IO
//! or clock dependencies, so it runs the same natively, in the CLI and in wasm. The compute
//! kernels ([`bits`], [`analysis`], [`ops`], [`stack`], [`flow`], [`pattern`], [`reach`], [`rng`])
//! live in the `hasseflow-engine` crate and are re-exported here at the same paths: a crate of
//! their own only so that release wasm builds optimise them for speed and the rest for size.
//!
//! - [`BitMatrix`]: bit-packed masks.
//! - [`Analysis`]: closure, classes, Hasse diagram, `L*`, growth, height, width.
//! - [`FirstReach`]: the first-reach layer of every cell (one matrix answers every `L`).
//! - [`ops`]: densify, sparsify; [`stack`]: per-layer masks and heads.
//! - [`presets`]: the catalog of mask families; [`format`]: the file formats.
//! - [`flow`]: a seeded random Transformer run on the mask; measured influence against `R(L)`;
//!   [`flow_task`]: the same run split across threads (the web app's Web Workers).
//! - [`derive`]: from a family of training tasks to the minimal merged task and its mask.
//! - [`pattern`]: real models' attention by rule (layer kinds, overlays, model specs).
//! - [`reach`]: the structured reach engine: `R(l)` of interval-row layer stacks at `n` in the
//!   millions, the model report (growth, lookback, leaks, limit, compressed Hasse diagram).
//! - [`model`]: Hugging Face `config.json` files and the gallery of real architectures → [`pattern::ModelSpec`].
//! - [`interop`]: FlexAttention Python, block statistics, `.npy`, DOT, FlashAttention and FlashMask.

// Every engine module and root item, at the same paths as the engine's (one list: its lib.rs).
pub use hasseflow_engine::*;

pub mod base64;
pub mod derive;
pub mod flow_task;
pub mod format;
mod hex;
pub mod interop;
pub mod model;
pub mod presets;
pub mod report;
pub mod share;
mod tuple_wire;

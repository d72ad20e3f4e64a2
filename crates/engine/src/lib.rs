//! hasseflow-engine: the compute kernels of hasseflow's core, in their own crate so that a
//! release wasm build can optimise them for speed and everything else for size (the profile
//! `wasm-release` in the workspace `Cargo.toml`; docs/BENCHMARKS.md, "Release bundle size").
//!
//! Use it through [`hasseflow-core`](../hasseflow_core/index.html), which re-exports every module
//! here at the same path (`hasseflow_core::analysis`, `hasseflow_core::reach`, ...). No UI, web,
//! GPU, IO or clock dependencies.
//!
//! - [`BitMatrix`]: bit-packed masks; [`bits`]: the packed-bit codec.
//! - [`Analysis`]: closure, classes, Hasse diagram, `L*`, growth, height, width.
//! - [`FirstReach`]: the first-reach layer of every cell (one matrix answers every `L`).
//! - [`ops`]: densify, sparsify; [`stack`]: per-layer masks and heads.
//! - [`Job`]: every long computation in bounded steps ([`Step`]: progress or the output).
//! - [`flow`]: a seeded random Transformer run on the mask; measured influence against `R(L)`.
//! - [`pattern`]: real models' attention by rule (layer kinds, overlays, model specs).
//! - [`reach`]: the structured reach engine: `R(l)` of interval-row layer stacks at `n` in the
//!   millions, the model report (growth, lookback, leaks, limit, compressed Hasse diagram).
//! - [`rng`]: the SplitMix64 generator.

pub mod analysis;
pub mod bits;
pub mod flow;
pub mod job;
pub mod ops;
pub mod order;
pub mod pattern;
pub mod reach;
pub mod rng;
mod sparse;
pub mod stack;

pub use analysis::{Analysis, FirstReach, reach_after};
pub use bits::BitMatrix;
pub use job::{Job, Step};
pub use ops::{ClassWiring, CoverWiring, SparsifyOptions, densify, sparsify, sparsify_analysis};
pub use order::{Order, position_runs};
pub use reach::{IntervalRows, ReachError, ReachOptions, ReachReport, ReachStack, RuleLayer, StructuredLayer};
pub use stack::{Layer, LayerStack, StackAnalysis, StackMode};

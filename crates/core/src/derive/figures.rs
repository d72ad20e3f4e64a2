//! The figures and checks of a derivation: [`DeriveReport`] with its [`Leak`]s, computed by
//! [`super::merge`] and [`super::checks`], printed by [`super::report`].

use serde::Serialize;

use super::task::{Family, InputId};

/// A labelled position that sees its own label, directly or inside an aggregated token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Leak {
    /// The task (`None`: the merged task).
    pub task: Option<usize>,
    /// The labelled position.
    pub position: usize,
    /// Its label.
    pub label: String,
    /// The position it sees that carries the label.
    pub via_position: usize,
    /// What that position holds.
    pub via: String,
}

/// The figures and checks of a derivation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeriveReport {
    /// Family name.
    pub family: String,
    /// Number of tasks (padding tasks excluded).
    pub tasks: usize,
    /// Task nodes before merging (padding tasks excluded).
    pub nodes_before: usize,
    /// Merged nodes that come from some task.
    pub nodes_after: usize,
    /// Merged nodes that only padding tasks have (layout padding).
    pub padding_nodes: usize,
    /// Positions of the merged task.
    pub positions: usize,
    /// Ones of the dense mask.
    pub entries_dense: usize,
    /// Ones of the sparse mask.
    pub entries_sparse: usize,
    /// Dense entries over positions².
    pub density_dense: f64,
    /// Distinct clean tokens of the sample: every token `name_t` that a (non-padding) task holds,
    /// builds an aggregated token from, or predicts, counted once however many positions hold it.
    /// Mask tokens and aggregated tokens are not sample tokens.
    pub sample_tokens: usize,
    /// Distinct sample tokens that some task predicts (the label tokens).
    pub target_tokens: usize,
    /// Supervision density as the paper means it (docs/THEORY.md §5): `target_tokens` over
    /// `sample_tokens`, the share of the sample's tokens that are prediction targets. Butterfly and
    /// Block Two-Stream 1, autoregressive `(n-1)/n`, MAE the share of tokens some span masks.
    pub supervision_density: f64,
    /// Positions of the merged task that carry at least one label.
    pub labelled_positions: usize,
    /// `labelled_positions` over `positions`: the share of positions that carry a loss (a compute
    /// measure: how much of one forward pass is spent on positions that are trained).
    pub loss_position_share: f64,
    /// `L*` of the dense mask.
    pub depth_dense: usize,
    /// `L*` of the sparse mask.
    pub depth_sparse: usize,
    /// Leaks inside the tasks.
    pub task_leaks: Vec<Leak>,
    /// Leaks of the merged task.
    pub leaks: Vec<Leak>,
    /// THEORY §5 criterion: every merged node comes from some task and no two are equivalent.
    pub minimal: bool,
    /// Violations of the criterion, in words.
    pub criterion_violations: Vec<String>,
    /// Every labelled task node keeps exactly its upward dependency in the merged task.
    pub consistent: bool,
    /// Labelled task nodes whose dependency changed, in words.
    pub inconsistent: Vec<String>,
    /// The dense mask's Hasse diagram equals the merged diagram.
    pub diagram_matches: bool,
    /// Merged positions that carry two or more different labels.
    pub multi_label_positions: usize,
    /// Isomorphism tests that ran out of budget (treated as "not equivalent").
    pub undecided: usize,
}

/// `{a, b}` for a list of inputs.
pub fn multiset_text(family: &Family, inputs: &[InputId]) -> String {
    let parts: Vec<String> = inputs.iter().map(|&i| family.input(i).to_string()).collect();
    format!("{{{}}}", parts.join(", "))
}

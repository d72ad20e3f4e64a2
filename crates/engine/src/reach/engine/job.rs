//! [`ReachJob`]: a run in steps (limit, one layer per step, structure).

use super::limit::*;
use super::stats::*;
use super::*;
use crate::job::{Job, Step};

/// Where a [`ReachJob`] stands.
pub(super) enum Phase {
    /// The limit is not computed yet.
    Limit,
    /// Layers `1..=done` are computed.
    Layers,
    /// Every layer is computed; the limit's structure is next.
    Structure,
    /// The report is assembled.
    Done(Box<ReachReport>),
    /// A step failed; every later step returns its error.
    Failed(ReachError),
    /// The report (or the error) was handed over by [`Job::step`].
    Taken,
}

/// A run of a [`ReachStack`] in steps, so a caller can pause between them (the web app yields to
/// the browser between steps): the limit first, then one layer per step, then the limit's
/// structure, as a [`Job`]. [`ReachStack::run`] drives the same job to the end, so both give the
/// same report.
///
/// # Examples
/// ```
/// use hasseflow_engine::pattern::{LayerKind, Overlays};
/// use hasseflow_engine::reach::{ReachJob, ReachOptions, ReachStack, RuleLayer, StructuredLayer};
/// let layer = StructuredLayer::Rule(RuleLayer::new(LayerKind::Sliding { window: 4 }, true, Overlays::default()));
/// let stack = ReachStack::new(64, vec![layer; 8], Vec::new()).unwrap();
/// use hasseflow_engine::job::{Job, Step};
/// let mut job = ReachJob::new(&stack, ReachOptions::default()).unwrap();
/// let mut steps = 0;
/// let report = loop {
///     match job.step() {
///         Step::Progress { done, total } => {
///             assert_eq!((done, total), (steps, 8)); // the limit, then one layer per step
///             steps += 1;
///         }
///         Step::Done(report) => break report.unwrap(),
///     }
/// };
/// assert_eq!(job.layers_done(), 8);
/// assert_eq!(report, stack.run(&ReachOptions::default()).unwrap());
/// assert_eq!(steps, 9);
/// ```
pub struct ReachJob<'a> {
    stack: &'a ReachStack,
    options: ReachOptions,
    adjs: Vec<LayerAdj<'a>>,
    phase: Phase,
    limit: Rows,
    limit_cells: u64,
    lbs: Lookbacks,
    spare: Option<(Vec<u32>, Vec<u32>)>,
    prev: Rows,
    cells: u64,
    growth: Vec<u64>,
    full_at: Option<usize>,
    /// The statistics of `R(l-1)` (`prev`, or the limit once reached).
    last: Option<Stats>,
    /// The rows of `prev` that equal their limit rows, per document.
    frozen: Frozen,
    layers: Vec<LayerReport>,
    done: usize,
    short: u64,
}

impl<'a> ReachJob<'a> {
    /// A job that runs `stack` and reports the rows of `options.queries`.
    ///
    /// # Errors
    /// [`ReachError::QueryOutOfRange`] for a query outside `0..n`.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    pub fn new(stack: &'a ReachStack, options: ReachOptions) -> Result<ReachJob<'a>, ReachError> {
        let n = stack.n;
        for &q in &options.queries {
            if q >= n as u64 {
                return Err(ReachError::QueryOutOfRange { query: q, n: n as u64 });
            }
        }
        let adjs = layer_adjs(stack);
        Ok(ReachJob {
            stack,
            layers: Vec::with_capacity(adjs.len()),
            adjs,
            options,
            phase: Phase::Limit,
            limit: Rows::identity(0),
            limit_cells: 0,
            lbs: Lookbacks::new(n),
            spare: None,
            prev: Rows::identity(0),
            cells: n as u64,
            growth: vec![n as u64],
            full_at: None,
            last: None,
            frozen: Frozen::new(stack.documents.len(), n),
            done: 0,
            short: 0,
        })
    }

    /// Number of layers `L`.
    pub fn depth(&self) -> usize {
        self.adjs.len()
    }

    /// Layers computed so far.
    pub fn layers_done(&self) -> usize {
        self.done
    }

    /// Does one step: the limit, one layer, or the limit's structure. Returns whether the report
    /// is ready; an error ([`ReachError::TooManyIntervals`] when the general path would hold too
    /// many intervals) ends the job, and every later step returns it too.
    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    fn checked_step(&mut self) -> Result<bool, ReachError> {
        let r = self.advance();
        if let Err(e) = &r {
            self.phase = Phase::Failed(e.clone());
        }
        r
    }

    pub(super) fn advance(&mut self) -> Result<bool, ReachError> {
        let n = self.stack.n;
        match self.phase {
            Phase::Limit => {
                self.limit = close(union_adjacency(self.stack, &self.adjs))?;
                self.limit_cells = self.limit.cells();
                self.prev = Rows::identity(n);
                if self.cells == self.limit_cells {
                    self.full_at = Some(0);
                } else {
                    self.short = (0..n).filter(|&q| self.limit.row_cells(q) > 1).count() as u64;
                }
                self.phase = if self.adjs.is_empty() { Phase::Structure } else { Phase::Layers };
            }
            Phase::Layers => {
                self.layer()?;
                if self.layers.len() == self.adjs.len() {
                    self.phase = Phase::Structure;
                }
            }
            Phase::Structure => {
                // Every layer is reported: free the last rows and the lookbacks before the
                // limit's structure allocates its own.
                self.prev = Rows::identity(0);
                self.spare = None;
                self.lbs = Lookbacks::new(0);
                let structure = structure::analyse(&self.limit, self.options.max_hasse_nodes);
                self.phase = Phase::Done(Box::new(ReachReport {
                    n: n as u64,
                    depth: self.adjs.len(),
                    layers: std::mem::take(&mut self.layers),
                    growth: std::mem::take(&mut self.growth),
                    limit_cells: self.limit_cells,
                    full_at: self.full_at,
                    shortfall: Shortfall { cells: self.limit_cells - self.cells, queries: self.short },
                    limit: structure,
                }));
                return Ok(true);
            }
            Phase::Failed(ref e) => return Err(e.clone()),
            Phase::Done(_) | Phase::Taken => return Ok(true),
        }
        Ok(false)
    }

    /// Computes the next layer.
    pub(super) fn layer(&mut self) -> Result<(), ReachError> {
        let i = self.layers.len();
        let repeat = i > 0
            && match (self.adjs[i].adj(), self.adjs[i - 1].adj()) {
                (Adj::Rule(ctx), Adj::Rule(before)) => idempotent(ctx) && ctx == before,
                _ => false,
            };
        let (st, rows): (Stats, &Rows) = if self.cells == self.limit_cells {
            // R(l-1) = limit, so every later layer is the limit too.
            let st = match self.last {
                Some(st) => st,
                None => stats(&self.limit, &self.limit, &self.stack.documents, &mut self.lbs),
            };
            (st, &self.limit)
        } else if let (true, Some(st)) = (repeat, self.last) {
            // The same full or chunked layer again: `Ā·Ā = Ā`, so R(l) = R(l-1).
            (st, &self.prev)
        } else {
            // A rule layer without overlays over non-decreasing rows (every model run's layers)
            // steps in place, leaving alone the rows already at their limit; anything else into
            // the previous step's allocations.
            let in_place = match (self.adjs[i].adj(), &mut self.prev) {
                (Adj::Rule(ctx), Rows::Single { lo, hi, mono }) if ctx.simple() && *mono => {
                    // The frozen prefixes are per leak-check document: used when the layer's
                    // documents are those.
                    let frozen: &[u32] = if *ctx.docs == *self.stack.documents { &self.frozen.len } else { &[] };
                    *mono = rule_mono_in_place_from(ctx, lo, hi, frozen);
                    true
                }
                _ => false,
            };
            if !in_place {
                let next = step_reusing(self.adjs[i].adj(), &self.prev, self.spare.take().unwrap_or_default())?;
                if let Rows::Single { lo, hi, .. } = std::mem::replace(&mut self.prev, next) {
                    self.spare = Some((lo, hi));
                }
            }
            let st =
                stats_frozen(&self.prev, &self.limit, &self.stack.documents, &mut self.lbs, Some(&mut self.frozen));
            (st, &self.prev)
        };
        self.last = Some(st);
        let cells = st.cells;
        self.short = st.short;
        self.growth.push(cells);
        if self.full_at.is_none() && cells == self.limit_cells {
            self.full_at = Some(i + 1);
        }
        let query_rows =
            self.options.queries.iter().map(|&q| QueryRow { query: q, intervals: rows.row_u64(q as usize) }).collect();
        self.layers.push(LayerReport {
            layer: i + 1,
            label: self.stack.layers[i].label(),
            cells,
            lookback: st.lookback,
            leaks: st.leaking > 0,
            leaking_queries: st.leaking,
            queries_short: st.short,
            query_rows,
        });
        self.cells = cells;
        self.done += 1;
        Ok(())
    }
}

/// One layer per step after the limit: `Progress { done: layers, total: depth }`, then the report
/// (or the error of a failed step).
impl Job for ReachJob<'_> {
    type Output = Result<ReachReport, ReachError>;

    #[inline(never)] // Not inlined into its callers: see `profile.wasm-release` in Cargo.toml.
    fn step(&mut self) -> Step<Self::Output> {
        let total = self.depth();
        match self.checked_step() {
            Ok(false) => Step::Progress { done: self.done, total },
            Ok(true) => match std::mem::replace(&mut self.phase, Phase::Taken) {
                Phase::Done(report) => Step::Done(Ok(*report)),
                // Spent: the report was taken.
                _ => Step::Progress { done: total, total },
            },
            Err(e) => {
                self.phase = Phase::Taken;
                Step::Done(Err(e))
            }
        }
    }
}

pub(crate) fn run(stack: &ReachStack, options: &ReachOptions) -> Result<ReachReport, ReachError> {
    Job::run(ReachJob::new(stack, options.clone())?)
}

//! FlexAttention `mask_mod` import: runs the Python a mask file contains, in Rust, and evaluates
//! the chosen mask as torch's `create_mask` does.
//!
//! - **An interpreter of the module** ([`interp`]): imports, assignments (tuple, item and slice
//!   targets), augmented assignment, `if`/`for`/`while`, `assert`, `def` with defaults, keywords,
//!   `*args`, annotations and docstrings, closures, `lambda`, decorators, `functools.partial`,
//!   conditional expressions, comprehensions; Python's integer semantics (64-bit, floor division and
//!   modulo on negatives), floats, bools, tuples, lists, dicts and strings. A module-level statement
//!   that fails on something hasseflow does not model (a class, a benchmark call) is skipped: the
//!   names it binds become unavailable, and what it could have mutated is tainted ([`effects`]):
//!   the import fails only if the mask reads one, naming both places. What Python itself would raise (a `NameError`,
//!   `ZeroDivisionError`, a failed `assert`) stops the import, as it stops Python's.
//! - **Tensors as torch computes them** ([`tensor`], [`tensor_ops`], [`builtins`]): bool, integer
//!   and float tensors of any rank with torch's type promotion, broadcasting, basic and advanced
//!   indexing, item and slice assignment, and the constructors, elementwise operations and
//!   reductions mask code uses.
//! - **The mask, as `create_mask` evaluates it** ([`trace`]): the function is called once with
//!   `b`, `h`, `q_idx`, `kv_idx` as traced 0-d tensors (what `vmap` passes), which records a
//!   graph of tensor operations; Python control flow on a traced value is refused, as `vmap`
//!   refuses it. The graph is then evaluated at any `(b, h)` and size, row by row by interval
//!   analysis (exact; whole key ranges at once), into a dense mask or interval rows for the
//!   structured engine.
//! - **Library masks** ([`library`]): `attn_gym.masks`, `transformers.masking_utils` and
//!   FlexAttention's `and_masks` / `or_masks` / `noop_mask`, as Python preludes.
//! - **Bounded**: text size, tokens, nesting, steps, calls, tensor elements and graph size are all
//!   limited; each refusal names its line and column.
//!
//! The function taken is the global named `mask_mod`, else the last global bound to a callable of
//! four positional arguments. The size comes from the caller, else from an integer `N` in the text.

use std::fmt;

// The engine's modules at this crate's root, where the interpreter's files name them (it was the
// core's `interop::mask_mod` until it became a crate of its own, ARCHITECTURE.md). Its dense limit
// is the engine's, which the core's `format::MAX_N` equals (checked in `hasseflow_core::interop`).
use hasseflow_engine::{bits, reach};
#[cfg(test)]
use hasseflow_engine::{pattern, rng};

use crate::bits::BitMatrix;
use crate::reach::DENSE_MAX as MAX_N;

mod annotations;
mod args;
mod ast;
mod blockmask;
mod builtins;
mod effects;
mod enums;
mod excepts;
mod interp;
mod lex;
pub mod library;
mod memory;
mod mt;
mod ops;
mod parse;
mod pyset;
mod random;
mod rt;
mod tensor;
mod tensor_ops;
mod tensor_tail;
#[cfg(test)]
mod tests;
mod trace;
mod types;
mod unset;
mod value;
mod vector;
mod views;

use interp::Ctx;
use rt::{Eval, Interp};
use value::{Globals, Value, shared};

/// Largest mask_mod text read.
pub const MAX_TEXT_BYTES: usize = 8 * 1024 * 1024;
/// Most key intervals one row may have on the structured path.
pub const MAX_ROW_INTERVALS: usize = 64;
/// The deepest stack [`MaskMod::reach`] tries by itself.
pub use crate::reach::MAX_AUTO_LAYERS;
/// Largest `n` of the structured path (the reach engine's range).
pub const MAX_STRUCTURED_N: u64 = 1 << 24;

/// Why a text is not an importable `mask_mod`, with the 1-based line and column where known.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MaskModError {
    /// The text was refused at a place in it.
    #[error("line {line}, column {col}: {what}")]
    At {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What was found and why it is refused.
        what: String,
    },
    /// Something about the text as a whole.
    #[error("{0}")]
    Text(String),
    /// Evaluating the mask failed at a cell (division by zero, an index out of range), as torch's
    /// `create_mask` would.
    #[error("line {line}, column {col}: {what} (at q_idx = {q}, kv_idx = {k})")]
    Cell {
        /// 1-based line of the operation that raised.
        line: usize,
        /// 1-based column.
        col: usize,
        /// The query.
        q: u64,
        /// The key.
        k: u64,
        /// What went wrong.
        what: String,
    },
    /// No size was given and the text defines no `N`.
    #[error("the mask_mod has no size: give n (e.g. --n 64) or define N = 64 in the text")]
    NeedsSize,
    /// The size is outside `1..=MAX_N` (dense) or the structured engine's range.
    #[error("mask size n = {n} is out of range 1..={max}")]
    Size {
        /// The size asked for (as the text wrote it).
        n: i128,
        /// The largest allowed.
        max: u64,
    },
    /// A row has more intervals than the structured engine takes.
    #[error(
        "row q = {q} of the mask has over {cap} intervals of keys: too irregular for the structured engine above n = {dense}"
    )]
    TooIrregular {
        /// The row.
        q: u64,
        /// The cap.
        cap: usize,
        /// The dense limit.
        dense: usize,
    },
}

/// True when the bytes look like Python mask code rather than JSON, a text grid or `.npy`: UTF-8
/// text whose first significant character is not `{` or `[`, and which has a `def`, `lambda`,
/// `import` or `class` word (a callable class's instance is a mask_mod too).
pub fn is_mask_mod(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let Ok(text) = std::str::from_utf8(bytes) else { return false };
    // Any line ending counts, a lone `\r` included (old Mac files).
    let first = text.split(['\n', '\r']).map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'));
    match first {
        None => false,
        Some(l) if l.starts_with('{') || l.starts_with('[') => false,
        // A word is a run of ASCII letters, digits and `_`, and of any other character than
        // ASCII (Python's identifiers, and what they are not, need no Unicode table here: it
        // cost the first download 2 KB).
        Some(_) => text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii()))
            .any(|w| matches!(w, "def" | "lambda" | "import" | "class")),
    }
}

/// A module's or function's docstring (`__doc__`): its first statement when that is a string.
fn docstring(body: &[ast::Stmt]) -> Value {
    match body.first().map(|s| &s.kind) {
        Some(ast::StmtKind::Expr(ast::Expr { kind: ast::ExprKind::Str(s), .. })) => Value::Str(s.clone()),
        _ => Value::None,
    }
}

pub(crate) fn at(line: usize, col: usize, what: impl Into<String>) -> MaskModError {
    MaskModError::At { line, col, what: what.into() }
}

/// A `mask_mod` read from Python: its traced graph, ready to evaluate at any size and `(b, h)`.
#[derive(Clone, Debug)]
pub struct MaskMod {
    graph: trace::Graph,
    root: usize,
    name: String,
    declared_n: Option<Result<i64, String>>,
    skipped: Vec<(usize, usize, String)>,
    deps: u8,
}

/// What the import did besides the mask: statements skipped, and which indices the mask reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MaskModReport {
    /// The function taken.
    pub name: String,
    /// Module-level statements skipped: line, column, why.
    pub skipped: Vec<(usize, usize, String)>,
    /// The mask depends on the batch index `b`.
    pub uses_batch: bool,
    /// The mask depends on the head index `h`.
    pub uses_head: bool,
    /// Recorded tensor operations.
    pub operations: usize,
}

fn fail_error(f: rt::Fail) -> MaskModError {
    at(f.pos.line as usize, f.pos.col as usize, f.msg)
}

impl MaskMod {
    /// Runs a Python text and traces its mask function.
    ///
    /// # Errors
    /// [`MaskModError::At`] naming the refused construct and its line and column, or
    /// [`MaskModError::Text`] for the text as a whole (no mask function, too large).
    ///
    /// # Examples
    /// ```
    /// use hasseflow_mask_mod::MaskMod;
    /// let m = MaskMod::parse("W = 3\ndef sliding(b, h, q, kv):\n    return (kv <= q) & (q - kv < W)\n").unwrap();
    /// assert_eq!(m.to_mask(4).unwrap().to_row_strings(), ["1...", "11..", "111.", ".111"]);
    /// let lookup = "import torch\ndoc = torch.repeat_interleave(torch.arange(2), torch.tensor([2, 2]))\n\
    ///               def mask_mod(b, h, q, kv):\n    return doc[q] == doc[kv]\n";
    /// assert_eq!(MaskMod::parse(lookup).unwrap().to_mask(4).unwrap().to_row_strings(), ["11..", "11..", "..11", "..11"]);
    /// ```
    pub fn parse(text: &str) -> Result<MaskMod, MaskModError> {
        if text.len() > MAX_TEXT_BYTES {
            return Err(MaskModError::Text(format!(
                "the mask_mod text is {} bytes, over the limit of {MAX_TEXT_BYTES}",
                text.len()
            )));
        }
        let toks = lex::lex(text)?;
        let body = parse::Parser::new(toks).module()?;
        parse::static_blocks(&body)?;
        let mut it = Interp::new();
        let globals = shared(Globals::default());
        let ctx = Ctx { globals: globals.clone(), frame: None };
        globals.borrow_mut().set("__doc__".into(), docstring(&body));
        it.run_module(&body, &ctx).map_err(fail_error)?;
        random::seal(&mut it);
        let (name, entry) = pick_entry(&globals.borrow())?;
        // A refusal of the entry, at its binding's line when the text has one.
        let at_binding = |what: String| match binding_line(text, &name) {
            Some(line) => MaskModError::At { line, col: 1, what },
            None => MaskModError::Text(what),
        };
        if !entry.is_callable() && !matches!(entry, Value::Instance(_) | Value::Wrapped(_) | Value::Unavailable(_)) {
            // `mask_mod = None` (a factory that forgot its `return`): torch's create_mask raises.
            return Err(at_binding(format!(
                "`{name}` is a {}, not a mask function: calling it raises TypeError",
                entry.type_name()
            )));
        }
        if let Some(count) = Interp::torch_param_count(&entry).filter(|&c| c != 4) {
            // torch's create_mask counts the parameters without a default (`Interp::torch_param_count`)
            // and takes 4: a mask_mod (5 would be a score_mod).
            let method = if matches!(entry, Value::Partial(_)) { " (`self` of a bound method counted)" } else { "" };
            let error = if count == 5 {
                "it is taken for a score_mod, called with one argument more (TypeError)"
            } else {
                "(AssertionError)"
            };
            return Err(at_binding(format!(
                "`{name}` has {count} parameters without a default{method}, and torch's create_mask takes a mask_mod of 4: {error}"
            )));
        }
        let declared_n = match globals.borrow().get("N") {
            Some(Value::Int(v)) => Some(Ok(v)),
            Some(Value::Unavailable(u)) => Some(Err(u.what.clone())),
            _ => None,
        };
        let args: Vec<Value> = (0..4).map(|i| Value::Traced(i, tensor::DType::I64)).collect();
        // The call is placed at the entry's binding, where a refusal of the call itself points.
        let pos = binding_line(text, &name)
            .map_or(ast::Pos::default(), |line| ast::Pos { line: u32::try_from(line).unwrap_or(0), col: 1 });
        let result = it.call(&entry, args, Vec::new(), pos).map_err(|f| {
            let mut e = fail_error(f);
            if let MaskModError::At { what, .. } = &mut e {
                what.push_str(&format!(" (while evaluating `{name}`)"));
            }
            e
        })?;
        let root = match result {
            Value::Traced(id, tensor::DType::Bool) => id,
            Value::Tensor(t) if t.borrow().shape.is_empty() && t.borrow().dtype == tensor::DType::Bool => {
                let v = t.borrow().data[0];
                if tensor::is_unset(v) {
                    return Err(MaskModError::Text(format!(
                        "`{name}` returns a tensor from torch.empty never written"
                    )));
                }
                it.graph.push(trace::Op::Const(v), tensor::DType::Bool, pos).map_err(MaskModError::Text)?
            }
            Value::Traced(_, d) => {
                return Err(MaskModError::Text(format!("`{name}` returns a {d} tensor, not a boolean mask")));
            }
            Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::None => {
                return Err(MaskModError::Text(format!(
                    "`{name}` returns a Python {} that depends on neither q_idx nor kv_idx, not a tensor \
                     (create_mask refuses this too)",
                    result.type_name()
                )));
            }
            other => {
                return Err(MaskModError::Text(format!(
                    "`{name}` returns a {}, not a boolean tensor",
                    other.type_name()
                )));
            }
        };
        let all = it.graph.deps()[root];
        let skipped = it.skipped.iter().map(|(p, m)| (p.line as usize, p.col as usize, m.clone())).collect();
        Ok(MaskMod { graph: it.graph, root, name, declared_n, skipped, deps: all })
    }

    /// The name of the function taken.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the import did.
    pub fn report(&self) -> MaskModReport {
        MaskModReport {
            name: self.name.clone(),
            skipped: self.skipped.clone(),
            uses_batch: self.deps & 1 != 0,
            uses_head: self.deps & 2 != 0,
            operations: self.graph.nodes.len() - 4,
        }
    }

    /// The size the text declares (`N = <int>`), if it is a usable one.
    pub fn declared_n(&self) -> Option<usize> {
        match &self.declared_n {
            Some(Ok(v)) => usize::try_from(*v).ok(),
            _ => None,
        }
    }

    /// The interval rows of the `n x n` mask at `(b, h)`: row `q` lists the sorted, disjoint,
    /// inclusive key ranges `[lo, hi]` the mask sets, at most `cap` per row.
    ///
    /// # Errors
    /// [`MaskModError::Cell`] where torch would raise, [`MaskModError::TooIrregular`] over `cap`.
    pub fn rows(
        &self,
        n: u64,
        b: u64,
        h: u64,
        cap: usize,
        mut each: impl FnMut(u64, &[[u64; 2]]),
    ) -> Result<(), MaskModError> {
        let cell = |e| self.row_error(e, cap);
        let mut ev = trace::RowEval::new(&self.graph, self.root, b as i64, h as i64).map_err(cell)?;
        let (mut row, mut before) = (Vec::new(), Vec::new());
        for q in 0..n {
            ev.row_after(q, n, cap, trace::hint_for(&before, n), &mut row).map_err(cell)?;
            each(q, &row);
            std::mem::swap(&mut row, &mut before);
            // Once a hundredth of the time budget is spent, the rows so far project the rest:
            // over twice the budget is refused now rather than at the budget.
            let (work, done) = (ev.work(), q + 1);
            if work > trace::MAX_EVAL_WORK / 100
                && u128::from(work) * u128::from(n) > 2 * u128::from(trace::MAX_EVAL_WORK) * u128::from(done)
            {
                return Err(MaskModError::Text(format!(
                    "the mask_mod's evaluation would run over its time budget ({} node evaluations, about 10 s): \
                     its first {done} of {n} rows took {work}",
                    trace::MAX_EVAL_WORK
                )));
            }
        }
        Ok(())
    }

    /// The mask at `(b, h)` as interval rows for the structured reach engine, at any `n` up to
    /// [`MAX_STRUCTURED_N`], each row at most [`MAX_ROW_INTERVALS`] intervals.
    ///
    /// # Errors
    /// [`MaskModError::Size`], [`MaskModError::Cell`], [`MaskModError::TooIrregular`].
    ///
    /// # Examples
    /// ```
    /// use hasseflow_mask_mod::MaskMod;
    /// let m = MaskMod::parse("def f(b, h, q, kv):\n    return (kv <= q) & (q - kv < 1000)\n").unwrap();
    /// let rows = m.interval_rows(1 << 20, 0, 0).unwrap();
    /// assert_eq!(rows.row_u64(5000), [[4001, 5000]]);
    /// ```
    pub fn interval_rows(&self, n: u64, b: u64, h: u64) -> Result<crate::reach::IntervalRows, MaskModError> {
        if n == 0 || n > MAX_STRUCTURED_N {
            return Err(MaskModError::Size { n: i128::from(n), max: MAX_STRUCTURED_N });
        }
        let mut offsets = Vec::with_capacity(n as usize + 1);
        offsets.push(0usize);
        let mut spans: Vec<crate::reach::Span> = Vec::new();
        self.rows(n, b, h, MAX_ROW_INTERVALS, |_, row| {
            spans.extend(row.iter().map(|&[lo, hi]| [lo as u32, hi as u32]));
            offsets.push(spans.len());
        })?;
        crate::reach::IntervalRows::new(n, offsets, spans).map_err(|e| MaskModError::Text(e.to_string()))
    }

    /// The reach of `layers` copies of the mask at `(b, h)` over `n` positions, exactly, on the
    /// structured engine. Without `layers`, the depth doubles from 8 up to [`MAX_AUTO_LAYERS`]
    /// until `R(L)` reaches the limit (`full_at` is then `L*`).
    ///
    /// # Errors
    /// Those of [`MaskMod::interval_rows`], and the engine's refusals as [`MaskModError::Text`].
    ///
    /// # Examples
    /// ```
    /// use hasseflow_mask_mod::MaskMod;
    /// let m = MaskMod::parse("def f(b, h, q, kv):\n    return (kv <= q) & (q - kv < 4)\n").unwrap();
    /// let r = m.reach(100_000, 0, 0, Some(3)).unwrap();
    /// assert_eq!((r.depth, r.full_at), (3, None));
    /// let r = m.reach(20, 0, 0, None).unwrap();
    /// assert_eq!(r.full_at, Some(7));
    /// ```
    pub fn reach(
        &self,
        n: u64,
        b: u64,
        h: u64,
        layers: Option<usize>,
    ) -> Result<crate::reach::ReachReport, MaskModError> {
        let rows = self.interval_rows(n, b, h)?;
        crate::reach::reach_auto(&rows, layers, &[]).map_err(|e| MaskModError::Text(e.to_string()))
    }

    /// A row evaluator's error as the import's: a cell error names the operation that raised.
    fn row_error(&self, e: trace::RowError, cap: usize) -> MaskModError {
        match e {
            trace::RowError::Cell { q, k, node, what } => {
                let p = self.graph.nodes[node].pos;
                MaskModError::Cell { line: p.line as usize, col: p.col as usize, q, k, what: what.into() }
            }
            trace::RowError::TooManyIntervals { q } => MaskModError::TooIrregular { q, cap, dense: MAX_N },
            trace::RowError::OverBudget => MaskModError::Text(format!(
                "the mask_mod's evaluation ran over its time budget ({} node evaluations, about 10 s): \
                 the mask is too costly to evaluate at this size",
                trace::MAX_EVAL_WORK
            )),
        }
    }

    /// Evaluates the function at one cell (`b = h = 0`).
    ///
    /// # Errors
    /// [`MaskModError::Cell`] where torch would raise.
    pub fn eval(&self, q: usize, k: usize) -> Result<bool, MaskModError> {
        let n = (q.max(k) + 1) as u64;
        let cell = |e| self.row_error(e, usize::MAX);
        let mut ev = trace::RowEval::new(&self.graph, self.root, 0, 0).map_err(cell)?;
        let mut row = Vec::new();
        ev.row(q as u64, n, usize::MAX, &mut row).map_err(cell)?;
        Ok(row.iter().any(|&[lo, hi]| lo <= k as u64 && k as u64 <= hi))
    }

    /// The `n x n` mask at `b = h = 0`.
    ///
    /// # Errors
    /// [`MaskModError::Size`] outside `1..=MAX_N`; [`MaskModError::Cell`] where evaluation fails.
    pub fn to_mask(&self, n: usize) -> Result<BitMatrix, MaskModError> {
        self.to_mask_at(n, 0, 0)
    }

    /// The `n x n` mask at batch `b`, head `h`.
    ///
    /// # Errors
    /// As [`MaskMod::to_mask`].
    pub fn to_mask_at(&self, n: usize, b: u64, h: u64) -> Result<BitMatrix, MaskModError> {
        if n == 0 || n > MAX_N {
            return Err(MaskModError::Size { n: n as i128, max: MAX_N as u64 });
        }
        let mut m = BitMatrix::zeros(n);
        self.rows(n as u64, b, h, usize::MAX, |q, spans| {
            for &[lo, hi] in spans {
                for k in lo..=hi {
                    m.set(q as usize, k as usize, true);
                }
            }
        })?;
        Ok(m)
    }

    /// The `n x n` mask at `(b, h)` evaluated cell by cell, without the interval analysis: the
    /// oracle the row evaluator is tested against, and the baseline of `hasseflow-bench --mask-mod`.
    ///
    /// # Errors
    /// As [`MaskMod::to_mask_at`].
    pub fn to_mask_cellwise_at(&self, n: usize, b: u64, h: u64) -> Result<BitMatrix, MaskModError> {
        if n == 0 || n > MAX_N {
            return Err(MaskModError::Size { n: n as i128, max: MAX_N as u64 });
        }
        let cell = |e| self.row_error(e, usize::MAX);
        let mut ev = trace::RowEval::new(&self.graph, self.root, b as i64, h as i64).map_err(cell)?;
        let mut m = BitMatrix::zeros(n);
        let mut row = Vec::new();
        for q in 0..n {
            ev.row_cellwise(q as u64, n as u64, &mut row).map_err(cell)?;
            for &[lo, hi] in &row {
                for k in lo..=hi {
                    m.set(q, k as usize, true);
                }
            }
        }
        Ok(m)
    }

    /// The size to use: `n` if given, else the declared `N`.
    ///
    /// # Errors
    /// [`MaskModError::NeedsSize`] when neither is known; [`MaskModError::Size`] or
    /// [`MaskModError::At`] for an unusable `N`.
    pub fn size(&self, n: Option<usize>) -> Result<usize, MaskModError> {
        if let Some(n) = n {
            return Ok(n);
        }
        match &self.declared_n {
            Some(Ok(v)) if *v >= 1 && (*v as u128) <= usize::MAX as u128 => Ok(*v as usize),
            Some(Ok(v)) => Err(MaskModError::Size { n: i128::from(*v), max: MAX_N as u64 }),
            Some(Err(why)) => Err(MaskModError::Text(format!("N could not be computed: {why}"))),
            None => Err(MaskModError::NeedsSize),
        }
    }

    /// The mask at `n`, else at the declared `N`.
    ///
    /// # Errors
    /// As [`MaskMod::size`] and [`MaskMod::to_mask`].
    pub fn to_mask_sized(&self, n: Option<usize>) -> Result<BitMatrix, MaskModError> {
        self.to_mask(self.size(n)?)
    }
}

/// The global named `mask_mod`, else the last global holding a four-argument callable.
/// A BlockMask object taken as the mask: its `_hasseflow_mask` method, bound.
fn block_mask_entry(v: &Value) -> Option<Value> {
    let Value::Instance(i) = v else { return None };
    if &*i.class.name != "BlockMask" {
        return None;
    }
    let f = i.class.lookup("_hasseflow_mask")?;
    Some(Value::Partial(std::rc::Rc::new(value::Partial {
        func: f,
        args: vec![v.clone()],
        kwargs: Vec::new(),
        method: false,
    })))
}

/// The line of the last module-level statement that binds `name` (`name = ...`, `name: T = ...`).
fn binding_line(text: &str, name: &str) -> Option<usize> {
    let mut found = None;
    let text = text.replace("\r\n", "\n");
    for (i, line) in text.split(['\n', '\r']).enumerate() {
        if let Some(rest) = line.strip_prefix(name) {
            let rest = rest.trim_start();
            if (rest.starts_with('=') && !rest.starts_with("==")) || rest.starts_with(':') {
                found = Some(i + 1);
            }
        }
    }
    found
}

/// A binding skipped because its statement called `create_mask` or `flex_attention`, which
/// return tensors: it cannot be the mask (`mask = create_mask(fn, ...)` after `fn`).
fn holds_a_tensor(what: &str) -> bool {
    what.matches("set by the skipped statement").count() == 1
        && what.matches("the value comes from").count() == 1
        && ["create_mask", "flex_attention"]
            .iter()
            .any(|f| what.contains(&format!(": `torch.nn.attention.flex_attention.{f}` is not a mask function")))
}

fn pick_entry(g: &Globals) -> Result<(String, Value), MaskModError> {
    if let Some(v) = g.get("mask_mod") {
        if let Some(bound) = block_mask_entry(&v) {
            return Ok(("mask_mod".into(), bound));
        }
        if let Value::Unavailable(u) = &v {
            return Err(MaskModError::Text(format!("`mask_mod` is unavailable: {}", u.what)));
        }
        return Ok(("mask_mod".into(), v));
    }
    let mut best: Option<(u64, String, Value)> = None;
    let mut unavailable: Option<(u64, String)> = None;
    for (name, (v, clock)) in &g.vars {
        if let Value::Unavailable(u) = v {
            if holds_a_tensor(&u.what) {
                continue;
            }
            if unavailable.as_ref().is_none_or(|(c, _)| clock > c) {
                unavailable = Some((*clock, format!("`{name}` ({})", u.what)));
            }
            continue;
        }
        if let Some(bound) = block_mask_entry(v) {
            if best.as_ref().is_none_or(|(c, _, _)| clock > c) {
                best = Some((*clock, name.to_string(), bound));
            }
            continue;
        }
        let takes_four = match Interp::arity(v) {
            Some((req, max)) => req <= 4 && max.is_none_or(|m| m >= 4) && req >= 1,
            None => matches!(v, Value::Native(n) if n.name.starts_with("hasseflow.mask")),
        };
        if takes_four && best.as_ref().is_none_or(|(c, _, _)| clock > c) {
            best = Some((*clock, name.to_string(), v.clone()));
        }
    }
    match best {
        // A binding skipped after the chosen one may hold the mask (torch's rule takes the last
        // four-argument callable or BlockMask): the reader cannot tell, so it refuses.
        Some((clock, name, _)) if unavailable.as_ref().is_some_and(|(c, _)| *c > clock) => {
            let what = unavailable.map(|(_, w)| w).unwrap_or_default();
            Err(MaskModError::Text(format!(
                "the mask may be a binding made after `{name}`, and the last such binding was skipped: {what}"
            )))
        }
        Some((_, name, v)) => Ok((name, v)),
        None => Err(MaskModError::Text(match unavailable {
            Some((_, what)) => format!(
                "no mask function found: define mask_mod(b, h, q_idx, kv_idx); the last skipped binding was {what}"
            ),
            None => "no mask function found: define mask_mod(b, h, q_idx, kv_idx)".into(),
        })),
    }
}

impl fmt::Display for MaskMod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mask_mod `{}`", self.name)
    }
}

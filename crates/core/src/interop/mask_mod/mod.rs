//! FlexAttention `mask_mod` import: the Python that researchers write, read back into a mask.
//!
//! Accepted (the subset real `mask_mod`s use, which means the same for torch tensors and here):
//! - module level: imports (ignored), docstrings, `if __name__ == "__main__":` blocks (never run
//!   on import, so ignored), `NAME = <integer constant expression>`, `def` and
//!   `NAME = lambda ...` mask functions of four arguments under any names, and
//!   `NAME = and_masks(f, g, ...)` / `or_masks(...)` of mask functions defined in the same text;
//! - inside a `def`: a docstring, `NAME = <expression>` bindings, then `return <expression>`;
//! - expressions over the query and key arguments, integer literals, `True`/`False`, named
//!   constants, calls of the text's own mask functions, `& | ~ == != < <= > >= + - * // %` and
//!   parentheses, with Python's precedence (comparisons bind looser than `&` and `|`) and its
//!   floor semantics for `//` and `%` (which torch's integer tensors follow too).
//!
//! Everything else is refused with one line naming the construct and where it is (tensor lookups,
//! other calls, `and`/`or`/`not`, chained comparisons, loops, conditionals, the batch or head
//! argument used in arithmetic), and so is an expression that mixes booleans and integers where
//! torch would promote or fail. Assignments nobody uses are never read, so a training script's
//! other lines do not stop the import.
//!
//! The function taken is the one named `mask_mod`, else the last mask function defined. The size
//! comes from the caller, else from an integer constant `N` in the text (what hasseflow's own
//! exports define).
//!
//! Complexity: parsing is linear in the text; [`MaskMod::to_mask`] evaluates the compiled
//! expression once per cell, `O(n² · size of the expression)`.

use std::collections::HashMap;
use std::fmt;

use crate::bits::BitMatrix;
use crate::format::{MAX_INPUT_BYTES, MAX_N};

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
    /// Evaluating the expression failed at a cell (division by zero, overflow).
    #[error("at q_idx = {q}, kv_idx = {k}: {what}")]
    Cell {
        /// The query.
        q: usize,
        /// The key.
        k: usize,
        /// What went wrong.
        what: String,
    },
    /// No size was given and the text defines no `N`.
    #[error("the mask_mod has no size: give n (e.g. --n 64) or define N = 64 in the text")]
    NeedsSize,
    /// The size is outside `1..=MAX_N`.
    #[error("mask size n = {0} is out of range 1..={MAX_N}")]
    Size(usize),
}

/// True when the bytes look like Python mask code rather than JSON, a text grid or `.npy`: UTF-8
/// text whose first significant character is not `{` or `[` and which contains `def ` or
/// `lambda`.
pub fn is_mask_mod(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else { return false };
    let first = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'));
    match first {
        None => false,
        Some(l) if l.starts_with('{') || l.starts_with('[') => false,
        Some(_) => text.contains("def ") || text.contains("lambda"),
    }
}

fn at(line: usize, col: usize, what: impl Into<String>) -> MaskModError {
    MaskModError::At { line, col, what: what.into() }
}

mod compile;
mod eval;
mod lex;
mod parse;
#[cfg(test)]
mod tests;

use compile::{Binding, Compiler, Func, check_arity, collect, first_name};
use eval::{Val, eval};
use lex::lex;

/// A `mask_mod` read from Python, ready to evaluate at any size.
#[derive(Clone, Debug)]
pub struct MaskMod {
    funcs: Vec<Func>,
    entry: usize,
    declared_n: Option<i64>,
}

impl MaskMod {
    /// Parses Python text into a `mask_mod`.
    ///
    /// # Errors
    /// [`MaskModError::At`] naming the refused construct and its line and column, or
    /// [`MaskModError::Text`] for the text as a whole (no mask function, too large).
    ///
    /// # Examples
    /// ```
    /// use hasseflow_core::interop::mask_mod::MaskMod;
    /// let m = MaskMod::parse("W = 3\ndef sliding(b, h, q, kv):\n    return (kv <= q) & (q - kv < W)\n").unwrap();
    /// assert_eq!(m.to_mask(4).unwrap().to_row_strings(), ["1...", "11..", "111.", ".111"]);
    /// assert!(MaskMod::parse("def f(b, h, q, k):\n    return MASK[q, k]\n").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<MaskMod, MaskModError> {
        if text.len() > MAX_INPUT_BYTES {
            return Err(MaskModError::Text(format!(
                "the text is {} bytes, over the limit of {MAX_INPUT_BYTES}",
                text.len()
            )));
        }
        let lines = lex(text)?;
        let (bindings, order) = collect(&lines)?;
        let mut c = Compiler { bindings, funcs: Vec::new(), func_ids: HashMap::new(), constants: HashMap::new() };
        let entry_name = if c.bindings.contains_key("mask_mod") {
            "mask_mod".to_string()
        } else {
            order
                .iter()
                .rev()
                .find(|(name, _)| {
                    c.bindings.get(name).and_then(|b| b.last()).is_some_and(|b| match b {
                        Binding::Def { params, .. } | Binding::Lambda { params, .. } => params.len() == 4,
                        Binding::Value { .. } => true,
                    })
                })
                .map(|(name, _)| name.clone())
                .ok_or_else(|| match order.last().and_then(|(name, _)| Some((name, c.bindings.get(name)?.last()?))) {
                    Some((name, Binding::Def { body, line, col, .. }))
                        if body.iter().any(|l| first_name(l) == Some("def")) =>
                    {
                        at(*line, *col, format!(
                            "`{name}` builds a mask function inside a function (a factory): write its parameters as \
                             module constants and define mask_mod(b, h, q_idx, kv_idx) at module level"
                        ))
                    }
                    Some((name, Binding::Def { params, line, col, .. } | Binding::Lambda { params, line, col, .. })) => {
                        check_arity(name, params, *line, *col).err().unwrap_or(MaskModError::Text(String::new()))
                    }
                    _ => MaskModError::Text("no mask function found: define mask_mod(b, h, q_idx, kv_idx)".into()),
                })?
        };
        let (l, col) = c.bindings[&entry_name].last().map_or((1, 1), |b| match b {
            Binding::Def { line, col, .. } | Binding::Lambda { line, col, .. } | Binding::Value { line, col, .. } => {
                (*line, *col)
            }
        });
        let entry = c.function(&entry_name, l, col)?;
        let declared_n = match c.bindings.get("N") {
            Some(v) if matches!(v.as_slice(), [Binding::Value { .. }]) => c.constant("N", l, col).ok(),
            _ => None,
        };
        Ok(MaskMod { funcs: c.funcs, entry, declared_n })
    }

    /// The name of the function taken.
    pub fn name(&self) -> &str {
        &self.funcs[self.entry].name
    }

    /// The size the text declares (`N = <int>`), if any.
    pub fn declared_n(&self) -> Option<usize> {
        self.declared_n.and_then(|n| usize::try_from(n).ok())
    }

    /// Evaluates the function at one cell.
    ///
    /// # Errors
    /// [`MaskModError::Cell`] on division by zero or integer overflow.
    pub fn eval(&self, q: usize, k: usize) -> Result<bool, MaskModError> {
        let cell = |what: String| MaskModError::Cell { q, k, what };
        match eval(&self.funcs[self.entry].body, &self.funcs, q as i64, k as i64, 0).map_err(cell)? {
            Val::B(b) => Ok(b),
            Val::I(_) => Err(MaskModError::Cell { q, k, what: "the function returned an integer".into() }),
        }
    }

    /// The `n x n` mask: cell `(q, k)` is the function's value at `q_idx = q`, `kv_idx = k`.
    ///
    /// # Errors
    /// [`MaskModError::Size`] outside `1..=MAX_N`; [`MaskModError::Cell`] where evaluation fails.
    pub fn to_mask(&self, n: usize) -> Result<BitMatrix, MaskModError> {
        if n == 0 || n > MAX_N {
            return Err(MaskModError::Size(n));
        }
        let mut m = BitMatrix::zeros(n);
        for q in 0..n {
            for k in 0..n {
                if self.eval(q, k)? {
                    m.set(q, k, true);
                }
            }
        }
        Ok(m)
    }

    /// The mask at `n`, else at the declared `N`.
    ///
    /// # Errors
    /// [`MaskModError::NeedsSize`] when neither is known, and those of [`MaskMod::to_mask`].
    pub fn to_mask_sized(&self, n: Option<usize>) -> Result<BitMatrix, MaskModError> {
        let n = n.or(self.declared_n()).ok_or(MaskModError::NeedsSize)?;
        self.to_mask(n)
    }
}

impl fmt::Display for MaskMod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mask_mod `{}`", self.name())
    }
}

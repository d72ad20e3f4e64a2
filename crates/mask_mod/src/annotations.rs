//! Annotations as Python up to 3.13 runs them: a def's parameter and return annotations, and a
//! module's or class body's `name: T = v`, are evaluated when the statement runs (a function's
//! local annotations never are; `from __future__ import annotations` turns all of them into
//! strings). Their values are never read by a mask, so a typing form the reader does not model
//! is passed over; an annotation that would raise in Python is refused, as Python 3.14 (which
//! defers annotations) would not raise there.

use super::ast::{BinOp, Expr, ExprKind};
use super::interp::Ctx;
use super::rt::{FailKind, Interp, R, unsup};

/// Whether evaluating `e` can have no effect but its value: names, attributes, subscripts,
/// constants, tuples and lists of them, and `|` unions (a call could do anything).
fn inert(e: &Expr, depth: usize) -> bool {
    if depth > 100 {
        return false;
    }
    let all = |xs: &[Expr]| xs.iter().all(|x| inert(x, depth + 1));
    match &e.kind {
        ExprKind::Name(_)
        | ExprKind::Str(_)
        | ExprKind::None
        | ExprKind::Ellipsis
        | ExprKind::Int(_)
        | ExprKind::Bool(_)
        | ExprKind::Float(_) => true,
        ExprKind::Attr(x, _) => inert(x, depth + 1),
        ExprKind::Subscript(x, i) => inert(x, depth + 1) && inert(i, depth + 1),
        ExprKind::Tuple(xs) | ExprKind::List(xs) => all(xs),
        ExprKind::Chain(x, ops) => {
            inert(x, depth + 1) && ops.iter().all(|(op, y)| *op == BinOp::BitOr && inert(y, depth + 1))
        }
        _ => false,
    }
}

impl Interp {
    /// Evaluates an annotation where Python does, for what it raises.
    pub(super) fn annotation(&mut self, e: &Expr, ctx: &Ctx) -> R<()> {
        if self.future_annotations {
            return Ok(());
        }
        match self.eval(e, ctx) {
            Ok(_) => Ok(()),
            Err(f) if f.kind == FailKind::Unsupported && inert(e, 0) => Ok(()),
            Err(f) if f.kind == FailKind::Exception => unsup(
                f.pos,
                format!(
                    "this annotation raises where Python up to 3.13 evaluates it ({}), and not in Python 3.14, which \
                     defers annotations: not modelled",
                    f.msg
                ),
            ),
            Err(f) => Err(f),
        }
    }
}

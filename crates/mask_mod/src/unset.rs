//! `torch.empty`'s memory: elements torch leaves uninitialised until something writes them.
//!
//! An unwritten element holds a marker value (`tensor::UNSET_INT`, `UNSET_FLOAT`) that no write
//! stores, except, in an int64 tensor, a write of that very value, which is then taken as unwritten
//! too (a refusal, never a wrong mask). Moving the marker is free: views, copies, casts
//! (`tensor::cast` keeps it), item assignments, containers, attributes and calls of the text's own
//! functions carry it as they carry any value. Computing from it is not: every place where an
//! element's value decides something (an operator, a torch or Python builtin, a truth test, an
//! index, a gather) checks its operands with [`check`], and refuses a marker with the line that
//! reads it. A tensor that every write has covered (vLLM's `copy_` of a result into the front of a
//! persistent `torch.empty` buffer, then read through that view) reads as any other. No check runs
//! in a text that never made an empty tensor.

use std::rc::Rc;

use super::ast::Pos;
use super::rt::{Interp, R, unsup};
use super::tensor::{Sc, UNSET_INT, is_unset};
use super::value::{Native, Value};

/// The element a constructor named `f` fills its tensor with: `torch.empty`'s (`empty_like`,
/// `new_empty`) marker of an unwritten one (from here on, reads check for it), 1 for the `ones`
/// ones, 0 for the others.
pub(super) fn fill(it: &mut Interp, f: &str) -> Sc {
    if f.ends_with("empty") || f.ends_with("empty_like") {
        it.empties = true;
        Sc::I(UNSET_INT)
    } else {
        Sc::I(i64::from(f.contains("ones")))
    }
}

/// Refuses `v` when it is, or is a list or tuple holding, a tensor with an unwritten element.
#[inline(never)]
pub(super) fn check(it: &mut Interp, v: &Value, pos: Pos) -> R<()> {
    if !it.empties {
        return Ok(());
    }
    let list;
    let items: &[Value] = match v {
        Value::List(l) => {
            list = l.borrow();
            &list
        }
        Value::Tuple(t) => &t[..],
        _ => std::slice::from_ref(v),
    };
    for x in items {
        if let Value::Tensor(t) = x {
            let t = t.borrow();
            it.charge_work(pos, t.data.len(), "reads checked for torch.empty's unwritten elements")?;
            if t.data.iter().any(|&x| is_unset(x)) {
                return unsup(
                    pos,
                    "this reads an element of a tensor from torch.empty that was never written (write every \
                     element first, or use torch.zeros)",
                );
            }
        }
    }
    Ok(())
}

/// Tensor methods whose receiver's values are not read: writes that leave no element of it
/// computed from another, views and copies that move elements as they are, and its metadata.
const UNREAD_RECEIVER: [&str; 30] = [
    "copy_",
    "narrow",
    "index_fill",
    "index_fill_",
    "index_copy",
    "index_copy_",
    "fill_",
    "zero_",
    "masked_fill_",
    "view_as",
    "reshape",
    "reshape_as",
    "flatten",
    "unsqueeze",
    "squeeze",
    "t",
    "transpose",
    "permute",
    "expand",
    "expand_as",
    "detach",
    "clone",
    "contiguous",
    "cpu",
    "cuda",
    "requires_grad_",
    "size",
    "dim",
    "numel",
    "new_empty",
];

/// Python builtins and container methods that move values without reading a tensor's elements,
/// and torch functions that read only its shape and dtype.
const MOVES: [&str; 14] = [
    "builtins.isinstance",
    "builtins.len",
    "builtins.type",
    "builtins.id",
    "builtins.callable",
    "builtins.hasattr",
    "builtins.getattr",
    "builtins.setattr",
    "functools.partial",
    "list.append",
    "list.insert",
    "torch.empty_like",
    "torch.zeros_like",
    "torch.ones_like",
];

/// Before a native call: refuses an argument, or a receiver whose values the call reads, that
/// holds an unwritten element. `.view(dtype)` and `.to(...)` with a dtype or a tensor reinterpret
/// or cast the elements, so they read them.
#[inline(never)]
pub(super) fn check_call(it: &mut Interp, n: &Native, args: &[Value], kw: &[(Rc<str>, Value)], at: Pos) -> R<()> {
    let name: &str = &n.name;
    if !it.empties || MOVES.contains(&name) {
        return Ok(());
    }
    let mut casts = false;
    for v in args.iter().chain(kw.iter().map(|(_, v)| v)) {
        check(it, v, at)?;
        casts |= matches!(v, Value::Dtype(_) | Value::Tensor(_));
    }
    let m = name.split_once('.').map_or(name, |(_, m)| m);
    match &n.recv {
        Some(r) if !(if matches!(m, "to" | "type" | "view") { !casts } else { UNREAD_RECEIVER.contains(&m) }) => {
            check(it, r, at)
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::tensor::{DType, UNSET_FLOAT};

    #[test]
    fn the_markers_are_outside_what_writes_store() {
        for dt in [DType::Bool, DType::U8, DType::I8, DType::I16, DType::I32] {
            assert_ne!(dt.wrap(UNSET_INT), UNSET_INT, "{dt}");
        }
        let x = f64::from_bits(UNSET_FLOAT);
        assert!(x.is_nan() && !is_unset(Sc::F(f64::NAN)) && !is_unset(Sc::F(x + 1.0)));
    }
}

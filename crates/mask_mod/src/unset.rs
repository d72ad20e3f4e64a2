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

use super::ast::Pos;
use super::rt::{Interp, R, unsup};
use super::tensor::{DType, Sc, Tensor, UNSET_FLOAT, UNSET_INT, is_unset};
use super::value::Value;

/// A tensor of `shape` and `dt` whose every element is unwritten.
pub(super) fn empty(it: &mut Interp, dt: DType, shape: Vec<usize>, pos: Pos) -> R<Tensor> {
    let n: usize = shape.iter().product();
    it.charge(pos, n)?;
    it.empties = true;
    let v = if dt.is_float() { Sc::F(f64::from_bits(UNSET_FLOAT)) } else { Sc::I(UNSET_INT) };
    Ok(Tensor::new(dt, shape, vec![v; n]))
}

/// Refuses `v` when it is, or holds (in lists, tuples and dicts, a few levels deep), a tensor
/// with an unwritten element.
pub(super) fn check(it: &mut Interp, v: &Value, pos: Pos) -> R<()> {
    if it.empties { walk(it, v, pos, 4) } else { Ok(()) }
}

fn walk(it: &mut Interp, v: &Value, pos: Pos, depth: usize) -> R<()> {
    match v {
        Value::Tensor(t) => {
            let t = t.borrow();
            it.charge_work(pos, t.data.len(), "checks of torch.empty's unwritten elements")?;
            if let Some(k) = t.data.iter().position(|&v| is_unset(v)) {
                return unsup(
                    pos,
                    format!(
                        "this reads a tensor from torch.empty whose element {} was never written (torch leaves \
                         it uninitialised; write every element first, or use torch.zeros)",
                        flat_index(&t.shape, k)
                    ),
                );
            }
        }
        Value::List(_) | Value::Tuple(_) | Value::Dict(_) if depth > 0 => {
            let items: Vec<Value> = match v {
                Value::List(l) => l.borrow().clone(),
                Value::Tuple(t) => t.as_ref().clone(),
                Value::Dict(d) => d.borrow().iter().flat_map(|(k, x)| [k.clone(), x.clone()]).collect(),
                _ => Vec::new(),
            };
            for x in &items {
                walk(it, x, pos, depth - 1)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// `[i, j, ...]` of the flat position `k` in `shape`.
fn flat_index(shape: &[usize], mut k: usize) -> String {
    let mut idx = vec![0; shape.len()];
    for (d, &n) in shape.iter().enumerate().rev() {
        if n > 0 {
            idx[d] = k % n;
            k /= n;
        }
    }
    format!("{idx:?}")
}

/// Tensor methods whose receiver's values are not read: writes that leave no element of it
/// computed from another, views and copies that move elements as they are, and its metadata.
const UNREAD_RECEIVER: [&str; 26] = [
    "copy_",
    "fill_",
    "zero_",
    "masked_fill_",
    "view",
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

/// Before a native call `name` (receiver `recv`): refuses an argument, or a receiver whose values
/// the call reads, that holds an unwritten element. `.view(dtype)` and `.to(...)` with a dtype or
/// a tensor reinterpret or cast the elements, so they read them.
pub(super) fn check_call(
    it: &mut Interp,
    name: &str,
    recv: Option<&Value>,
    args: &[Value],
    kwargs: &[(std::rc::Rc<str>, Value)],
    pos: Pos,
) -> R<()> {
    if !it.empties || MOVES.contains(&name) {
        return Ok(());
    }
    if let Some(r) = recv {
        let m = name.split_once('.').map_or(name, |(_, m)| m);
        let casts =
            args.iter().chain(kwargs.iter().map(|(_, v)| v)).any(|v| matches!(v, Value::Dtype(_) | Value::Tensor(_)));
        let unread = UNREAD_RECEIVER.contains(&m) || (matches!(m, "to" | "type") && !casts);
        if !(unread && (m != "view" || !casts)) {
            check(it, r, pos)?;
        }
    }
    for v in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
        check(it, v, pos)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_markers_are_outside_what_writes_store() {
        for dt in [DType::Bool, DType::U8, DType::I8, DType::I16, DType::I32] {
            assert_ne!(dt.wrap(UNSET_INT), UNSET_INT, "{dt}");
        }
        let x = f64::from_bits(UNSET_FLOAT);
        assert!(x.is_nan() && !is_unset(Sc::F(f64::NAN)) && !is_unset(Sc::F(x + 1.0)));
        assert_eq!(flat_index(&[2, 3], 4), "[1, 1]");
        assert_eq!(flat_index(&[], 0), "[]");
    }
}

//! Views and their bases, as torch shares memory between them: a basic index (`x[2:]`, `x[0]`,
//! `x[None]`, `x[..., 1]`), `.view`, `.unsqueeze`, `.squeeze`, `.t`, `.detach`, `narrow`, `split`,
//! `unbind`, `expand` and a tensor's rows when iterated are views of the tensor they come from; an
//! in-place write to either side (item assignment, `+=`, `fill_`, `zero_`, `masked_fill_`) is seen
//! through every other. A write to an expanded view, whose elements repeat, is refused.
//!
//! A view is its own [`Tensor`] plus, in the interpreter's registry, its base (the tensor that owns
//! the memory, never itself a view) and its map: the flat position in the base of each of its
//! elements. A write to a view is scattered into its base; a write to a base (or through a view)
//! refreshes every live view of it. Where torch itself decides between a view and a copy by strides
//! hasseflow does not keep (`reshape` of a non-contiguous view), the result is marked uncertain and
//! a write to it or to its base is refused, never guessed.

use std::rc::Rc;

use super::ast::Pos;
use super::memory::id;
use super::rt::{Interp, R, exc, limit, unsup};
use super::tensor::{DType, Sc, Tensor};
use super::value::{Shared, Value};

/// A tensor of `shape` whose elements are their own flat positions.
pub(super) fn iota(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::new(DType::I64, shape.to_vec(), (0..n as i64).map(Sc::I).collect())
}

/// `t[i]` on a tensor, read in place (no copy of the whole tensor per index: a per-position loop
/// stays linear; the index may read the same tensor, which only borrows it too). A basic index
/// gives a view of `t`, registered here.
pub(super) fn getitem(it: &mut Interp, cell: &Shared<Tensor>, i: Value, pos: Pos) -> R<Value> {
    let basic = is_basic_index(&i);
    if !basic {
        // A gather (by a traced index, per position of the mask later) reads the tensor.
        super::unset::check(it, &Value::Tensor(cell.clone()), pos)?;
    }
    let r = super::tensor_ops::getitem(it, &cell.borrow(), i.clone(), pos)?;
    if basic {
        let shape = cell.borrow().shape.clone();
        let map = super::tensor_ops::index_positions(&shape, i, pos)?;
        register(it, cell, &r, Some(map));
    }
    Ok(r)
}

/// Records `view` (a tensor just made from `src`) as a view of `src`'s memory: `local` is the flat
/// position in `src` of each of its elements, or `None` when torch may have copied.
pub(super) fn register(it: &mut Interp, src: &Shared<Tensor>, view: &Value, local: Option<Vec<usize>>) {
    let Value::Tensor(v) = view else { return };
    if Rc::ptr_eq(v, src) {
        return;
    }
    let (base, map) = match it.views.entry(src) {
        None => (src.clone(), local.map(Rc::new)),
        Some((b, m)) => {
            let map = match (m, local) {
                (Some(m), Some(l)) => l.iter().map(|&k| m.get(k).copied()).collect::<Option<Vec<_>>>().map(Rc::new),
                _ => None,
            };
            (b.clone(), map)
        }
    };
    it.views.insert(v, base, map);
}

/// After an in-place write to `t`: its base and every other view of that base see it.
pub(super) fn written(it: &mut Interp, t: &Shared<Tensor>, pos: Pos) -> R<()> {
    let uncertain = || {
        unsup(
            pos,
            "an in-place write to a tensor that torch may or may not share with another (a `reshape` of a \
             non-contiguous view) is not modelled",
        )
    };
    let base = match it.views.entry(t) {
        None => t.clone(),
        Some((_, None)) => return uncertain(),
        Some((b, Some(m))) => {
            let (b, m) = (b.clone(), m.clone());
            it.charge(pos, m.len())?;
            // An expanded view holds an element several times: torch raises for some writes to
            // it and lets others through, each by its own kernel's rule. (A set of the view's
            // positions: its size, not the base's, so that a loop over a table's rows stays linear.)
            let mut seen = std::collections::HashSet::new();
            if m.iter().any(|&p| !seen.insert(p as u64)) {
                return unsup(pos, "a write to an expanded tensor is not modelled");
            }
            if !sync(t, &b, &m, true) {
                return uncertain();
            }
            b
        }
    };
    let me = id(t);
    for v in it.views.views_of(&base) {
        if id(&v) == me {
            continue;
        }
        let map = match it.views.entry(&v) {
            Some((_, Some(m))) => m.clone(),
            _ => return uncertain(),
        };
        it.charge(pos, map.len())?;
        if !sync(&v, &base, &map, false) {
            return uncertain();
        }
    }
    Ok(())
}

/// Whether torch can view `t` (a view of known map, or a base) with `new` as its shape: its strides
/// read off the map (a step along each dimension), then torch's rule (ATen's `computeStride`):
/// each run of dimensions that are contiguous among themselves must be split or merged into whole
/// dimensions of the new shape. `None` when the layout is not known.
pub(super) fn viewable(it: &Interp, t: &Shared<Tensor>, new: &[usize]) -> Option<bool> {
    let tb = t.borrow();
    let (old, n) = (&tb.shape, tb.numel());
    let stride: Vec<i64> = match it.views.entry(t) {
        None => return Some(true),
        Some((_, None)) => return None,
        // A step along dimension `d` (of more than one element) moves this far in the base.
        Some((_, Some(map))) if n > 0 => tb
            .strides()
            .iter()
            .zip(old)
            .map(|(&s, &len)| if len > 1 { map[s] as i64 - map[0] as i64 } else { 0 })
            .collect(),
        Some(_) => return Some(true),
    };
    let (mut view_d, mut base) = (new.len() as i64 - 1, stride.last().copied().unwrap_or(1));
    let (mut tensor_numel, mut view_numel) = (1i64, 1i64);
    for d in (0..old.len()).rev() {
        tensor_numel *= old[d] as i64;
        if d == 0 || (old[d - 1] != 1 && stride[d - 1] != tensor_numel * base) {
            while view_d >= 0 && (view_numel < tensor_numel || new[view_d as usize] == 1) {
                view_numel *= new[view_d as usize] as i64;
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return Some(false);
            }
            if d > 0 {
                base = stride[d - 1];
                (tensor_numel, view_numel) = (1, 1);
            }
        }
    }
    Some(view_d == -1)
}

/// Copies through a view's map, into its base (`to_base`) or out of it; false when the map does
/// not fit the two (never expected: a view keeps its shape).
fn sync(view: &Shared<Tensor>, base: &Shared<Tensor>, map: &[usize], to_base: bool) -> bool {
    let (mut v, mut b) = (view.borrow_mut(), base.borrow_mut());
    if v.data.len() != map.len() || map.iter().any(|&p| p >= b.data.len()) {
        return false;
    }
    for (k, &p) in map.iter().enumerate() {
        if to_base {
            b.data[p] = v.data[k];
        } else {
            v.data[k] = b.data[p];
        }
    }
    true
}

/// Whether a tensor index is basic (a view in torch): ints, 0-d integer tensors, slices, `None`,
/// `...`, or a tuple of them.
pub(super) fn is_basic_index(i: &Value) -> bool {
    let one = |v: &Value| match v {
        Value::Int(_) | Value::Slice(_) | Value::None | Value::Ellipsis => true,
        Value::Tensor(t) => {
            let t = t.borrow();
            t.shape.is_empty() && !t.dtype.is_float() && !t.dtype.is_bool()
        }
        _ => false,
    };
    match i {
        Value::Tuple(items) => items.iter().all(one),
        other => one(other),
    }
}

/// The flat positions in `src` of a shape operation's result, by running it on [`iota`].
pub(super) fn positions(
    it: &mut Interp,
    src: &Tensor,
    op: impl FnOnce(&mut Interp, Tensor) -> R<Value>,
    pos: Pos,
) -> R<Option<Vec<usize>>> {
    it.charge(pos, src.numel())?;
    Ok(match op(it, iota(&src.shape))? {
        Value::Tensor(r) => Some(r.borrow().data.iter().map(|s| s.as_i64() as usize).collect()),
        _ => None,
    })
}

/// Refuses a module whose views went uncertain and were then reshaped by `view` (torch raises or
/// shares; hasseflow cannot tell which).
pub(super) fn need_contiguous(it: &Interp, t: &Shared<Tensor>, what: &str, pos: Pos) -> R<bool> {
    match it.views.is_contiguous(t) {
        Some(c) => Ok(c),
        None => unsup(pos, format!("`{what}` of a tensor whose memory layout hasseflow does not know is not modelled")),
    }
}

/// Before `out` (at `index`, or whole) is written in place from `v`: torch refuses most values that
/// share memory with what it writes (`x[1:] += x[:-1]` is its RuntimeError) and lets others
/// through in an order of its kernel's, so such a write is refused unless `v` is `out` itself
/// (`x += x`), a 0-d tensor that an item assignment at a basic index fills from, or
/// the view `x[i]` that `x[i] += v` stores back.
pub(super) fn overlap(it: &Interp, out: &Shared<Tensor>, index: Option<&Value>, v: &Value, pos: Pos) -> R<()> {
    let Value::Tensor(t) = v else { return Ok(()) };
    if it.write_back.as_ref().is_some_and(|w| Rc::ptr_eq(w, t))
        || index.map_or(Rc::ptr_eq(t, out), |i| t.borrow().shape.is_empty() && is_basic_index(i))
        || !Rc::ptr_eq(&it.views.base_of(t), &it.views.base_of(out))
    {
        return Ok(());
    }
    // Torch raises or not by strides, and a `try` may catch it: never skipped.
    limit(pos, "a write from a tensor sharing the written one's memory is not modelled (clone() it)")
}

/// Writes `r` (an in-place operation's result, computed out of place) into `t` as torch does:
/// the same shape, cast to `t`'s dtype unless that narrows its kind (a float into an integer
/// tensor, an integer into a bool one: torch's RuntimeError), seen through every view.
pub(super) fn write_in_place(it: &mut Interp, t: &Shared<Tensor>, r: &Value, pos: Pos) -> R<()> {
    let Value::Tensor(r) = r else {
        return unsup(
            pos,
            "an in-place operator that gives a value of the indices to a tensor that is not one (a constant, or \
             `*_like` of an index) is not modelled: write `x = x <op> y`",
        );
    };
    let rb = r.borrow().clone();
    let (dt, shape) = {
        let tb = t.borrow();
        (tb.dtype, tb.shape.clone())
    };
    if rb.shape != shape {
        return exc(
            pos,
            format!("output with shape {shape:?} doesn't match the broadcast shape {:?} (RuntimeError)", rb.shape),
        );
    }
    let kind = |d: DType| u8::from(!d.is_bool()) + u8::from(d.is_float());
    if kind(rb.dtype) > kind(dt) {
        return exc(
            pos,
            format!("result type {} can't be cast to the desired output type {dt} (RuntimeError)", rb.dtype),
        );
    }
    t.borrow_mut().data = rb.data.iter().map(|&v| super::tensor::cast(v, dt)).collect();
    written(it, t, pos)
}

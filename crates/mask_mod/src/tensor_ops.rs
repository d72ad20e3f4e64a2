//! Concrete tensor operations: indexing and assignment (torch's basic and advanced indexing),
//! construction, shape changes and reductions.

use std::rc::Rc;

use super::ast::Pos;
use super::ops::{VectorHooks, push};
use super::rt::{Interp, R, exc, limit, unavailable_msg, unsup};
use super::tensor::{
    DType, MAX_ELEMENTS, MAX_RANK, OVERFLOW, Sc, Tensor, broadcast, broadcast_index, cast, checked_numel,
};
use super::trace::{Op, Table};
use super::value::Value;

/// One item of an index expression.
pub(super) enum Ix {
    Int(i64),
    Slice(Option<i64>, Option<i64>, Option<i64>),
    New,
    Ell,
    /// An integer index array and its shape.
    Adv(Vec<i64>, Vec<usize>),
    /// A boolean mask.
    Mask(Tensor),
}

fn opt_int(v: &Value, pos: Pos) -> R<Option<i64>> {
    Ok(match v {
        Value::None => None,
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Tensor(t) if t.borrow().numel() == 1 && !t.borrow().dtype.is_float() => {
            Some(t.borrow().data[0].as_i64())
        }
        Value::Traced(..) => return exc(pos, "a slice bound that depends on the indices (vmap refuses this too)"),
        Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
        _ => return exc(pos, "slice indices must be integers or None (TypeError)"),
    })
}

const BOOL_INDEX: &str = "indexing a tensor with True/False (or a 0-d bool tensor) is not supported";

fn to_ix(v: &Value, pos: Pos) -> R<Ix> {
    Ok(match v {
        Value::Int(i) => Ix::Int(*i),
        Value::Bool(_) => return unsup(pos, BOOL_INDEX),
        Value::None => Ix::New,
        Value::Ellipsis => Ix::Ell,
        Value::Slice(s) => Ix::Slice(opt_int(&s[0], pos)?, opt_int(&s[1], pos)?, opt_int(&s[2], pos)?),
        Value::Tensor(t) => {
            let t = t.borrow();
            if t.dtype.is_bool() && t.shape.is_empty() {
                // A new dimension of length 1 or 0, as `True` / `False` index.
                return unsup(pos, BOOL_INDEX);
            } else if t.dtype.is_bool() {
                Ix::Mask(t.clone())
            } else if t.dtype.is_float() || (matches!(t.dtype, DType::I8 | DType::I16) && !t.shape.is_empty()) {
                return exc(pos, "tensors used as indices must be long, int, byte or bool tensors (IndexError)");
            } else if t.dtype == DType::U8 {
                return unsup(pos, "indexing with a uint8 tensor (torch's deprecated byte mask) is not modelled");
            } else if t.shape.is_empty() {
                Ix::Int(t.data[0].as_i64())
            } else {
                Ix::Adv(t.data.iter().map(|s| s.as_i64()).collect(), t.shape.clone())
            }
        }
        Value::List(l) => {
            let l = l.borrow();
            let mut out = Vec::with_capacity(l.len());
            for x in l.iter() {
                match x {
                    Value::Int(i) => out.push(*i),
                    _ => return unsup(pos, "indexing with a list of non-integers is not supported"),
                }
            }
            let n = out.len();
            Ix::Adv(out, vec![n])
        }
        Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
        Value::Traced(..) => unreachable!("traced indices are handled by the caller"),
        other => return exc(pos, format!("a {} cannot index a tensor (IndexError)", other.type_name())),
    })
}

fn norm(i: i64, len: usize, pos: Pos) -> R<usize> {
    let l = len as i64;
    let j = if i < 0 { i + l } else { i };
    if j < 0 || j >= l {
        return exc(pos, format!("index {i} is out of bounds for a dimension of size {len} (IndexError)"));
    }
    Ok(j as usize)
}

/// Python's slice semantics: the indices selected in `0..len`.
pub(super) fn slice_indices(
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
    len: usize,
    pos: Pos,
) -> R<Vec<usize>> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return exc(pos, "slice step cannot be zero (ValueError)");
    }
    if step < 0 {
        return unsup(pos, "negative slice steps on tensors are not supported (torch refuses them too)");
    }
    let l = len as i64;
    let clampi = |v: i64| if v < 0 { (v + l).max(0) } else { v.min(l) };
    let a = start.map_or(0, clampi);
    let b = stop.map_or(l, clampi);
    let mut out = Vec::new();
    let mut i = a;
    while i < b {
        out.push(i as usize);
        i += step;
    }
    Ok(out)
}

enum Axis {
    Fixed(usize),
    Range(Vec<usize>, usize),
    Adv(usize),
}

/// The flat positions an index selects in a tensor of `shape`, and the shape of the selection.
fn select(shape: &[usize], items: Vec<Ix>, pos: Pos) -> R<(Vec<usize>, Vec<usize>)> {
    // Expand boolean masks into index arrays and the ellipsis into full slices.
    let mut expanded: Vec<Ix> = Vec::new();
    let consumed: usize = items
        .iter()
        .map(|i| match i {
            Ix::Int(_) | Ix::Slice(..) | Ix::Adv(..) => 1,
            Ix::Mask(m) => m.shape.len().max(1),
            _ => 0,
        })
        .sum();
    if consumed > shape.len() {
        return exc(pos, format!("too many indices for a tensor of dimension {} (IndexError)", shape.len()));
    }
    let mut dim = 0;
    let mut saw_ell = false;
    for it in items {
        match it {
            Ix::Ell => {
                if saw_ell {
                    // torch runs these, in a way of its own: never caught by a `try` as an IndexError.
                    return limit(pos, "an index with several ellipses is not modelled");
                }
                saw_ell = true;
                for _ in 0..shape.len() - consumed {
                    expanded.push(Ix::Slice(None, None, None));
                    dim += 1;
                }
            }
            Ix::Mask(m) => {
                let k = m.shape.len().max(1);
                if !m.shape.is_empty() && m.shape[..] != shape[dim..dim + k] {
                    return exc(
                        pos,
                        format!(
                            "the mask of shape {:?} does not match the indexed shape {:?} (IndexError)",
                            m.shape,
                            &shape[dim..dim + k]
                        ),
                    );
                }
                let mut coords: Vec<Vec<i64>> = vec![Vec::new(); k];
                let strides = m.strides();
                for (flat, v) in m.data.iter().enumerate() {
                    if v.truthy() {
                        for d in 0..k {
                            coords[d].push(if m.shape.is_empty() {
                                0
                            } else {
                                ((flat / strides[d]) % m.shape[d]) as i64
                            });
                        }
                    }
                }
                for c in coords {
                    let n = c.len();
                    expanded.push(Ix::Adv(c, vec![n]));
                }
                dim += k;
            }
            other => {
                if !matches!(other, Ix::New) {
                    dim += 1;
                }
                expanded.push(other);
            }
        }
    }
    while dim < shape.len() {
        expanded.push(Ix::Slice(None, None, None));
        dim += 1;
    }
    // Advanced indices: broadcast together; placed where the first one is when they are adjacent.
    let adv_pos: Vec<usize> =
        expanded.iter().enumerate().filter(|(_, i)| matches!(i, Ix::Adv(..))).map(|(k, _)| k).collect();
    let mut adv_shape: Vec<usize> = Vec::new();
    for i in &expanded {
        if let Ix::Adv(_, s) = i {
            adv_shape = broadcast(&adv_shape, s).or_else(|m| exc(pos, format!("index arrays: {m} (IndexError)")))?;
        }
    }
    let adjacent = adv_pos.windows(2).all(|w| w[1] == w[0] + 1);
    let mut out_shape: Vec<usize> = Vec::new();
    let mut axes: Vec<Axis> = Vec::new();
    let mut adv_arrays: Vec<(Vec<i64>, Vec<usize>)> = Vec::new();
    let mut adv_at: Option<usize> = None;
    if !adv_pos.is_empty() && !adjacent {
        adv_at = Some(0);
        out_shape.extend(adv_shape.iter().copied());
    }
    let mut d = 0;
    for it in expanded {
        match it {
            Ix::Int(i) => {
                axes.push(Axis::Fixed(norm(i, shape[d], pos)?));
                d += 1;
            }
            Ix::Slice(a, b, s) => {
                let idx = slice_indices(a, b, s, shape[d], pos)?;
                let n = idx.len();
                axes.push(Axis::Range(idx, out_shape.len()));
                out_shape.push(n);
                d += 1;
            }
            Ix::New => out_shape.push(1),
            Ix::Adv(v, s) => {
                for &x in &v {
                    norm(x, shape[d], pos)?;
                }
                if adv_at.is_none() {
                    adv_at = Some(out_shape.len());
                    out_shape.extend(adv_shape.iter().copied());
                }
                axes.push(Axis::Adv(adv_arrays.len()));
                adv_arrays.push((v, s));
                d += 1;
            }
            Ix::Ell | Ix::Mask(_) => unreachable!("expanded above"),
        }
    }
    let total = checked_numel(&out_shape).or_else(|m| limit(pos, m))?;
    let strides = super::tensor::strides_of(shape);
    let mut positions = Vec::with_capacity(total);
    let mut coord = vec![0usize; out_shape.len()];
    for _ in 0..total {
        let adv_flat = adv_at.map(|at| {
            let mut f = 0;
            for (k, &len) in adv_shape.iter().enumerate() {
                f = f * len + coord[at + k];
            }
            f
        });
        let mut flat = 0;
        for (sd, ax) in axes.iter().enumerate() {
            let i = match ax {
                Axis::Fixed(i) => *i,
                Axis::Range(idx, o) => idx[coord[*o]],
                Axis::Adv(k) => {
                    let (v, s) = &adv_arrays[*k];
                    let raw = v[broadcast_index(adv_flat.unwrap_or(0), &adv_shape, s)];
                    norm(raw, shape[sd], pos)?
                }
            };
            flat += i * strides[sd];
        }
        positions.push(flat);
        for k in (0..coord.len()).rev() {
            coord[k] += 1;
            if coord[k] < out_shape[k] {
                break;
            }
            coord[k] = 0;
        }
    }
    Ok((positions, out_shape))
}

/// An index as its items: a tuple's, or the one index.
pub(super) fn items_of(i: Value) -> Vec<Value> {
    match i {
        Value::Tuple(t) => t.as_ref().clone(),
        other => vec![other],
    }
}

/// `t[i]`.
pub(super) fn getitem(it: &mut Interp, t: &Tensor, i: Value, pos: Pos) -> R<Value> {
    let items = items_of(i);
    if items.iter().any(|v| matches!(v, Value::TracedVec(_) | Value::Lookup(_))) {
        return unsup(
            pos,
            "a lookup at a per-position vector of indices is not supported (index with a scalar per position)",
        );
    }
    if items.iter().any(|v| matches!(v, Value::Traced(..))) {
        // `table[i, :]`: trailing full slices leave those dimensions, as fewer indices do.
        let mut items = items;
        while items.len() > 1
            && items.len() <= t.shape.len()
            && matches!(items.last(), Some(Value::Slice(sl)) if sl.iter().all(|x| matches!(x, Value::None)))
        {
            items.pop();
        }
        return traced_lookup(it, t, &items, pos);
    }
    let ix = items.iter().map(|v| to_ix(v, pos)).collect::<R<Vec<_>>>()?;
    let (positions, shape) = select(&t.shape, ix, pos)?;
    it.charge(pos, positions.len())?;
    let data = positions.iter().map(|&p| t.data[p]).collect();
    Ok(Value::tensor(Tensor::new(t.dtype, shape, data)))
}

/// The flat positions `t[i]` reads, for a basic index (a view's map).
pub(super) fn index_positions(shape: &[usize], i: Value, pos: Pos) -> R<Vec<usize>> {
    let ix = items_of(i).iter().map(|v| to_ix(v, pos)).collect::<R<Vec<_>>>()?;
    Ok(select(shape, ix, pos)?.0)
}

/// `t[i] = v`.
pub(super) fn setitem(it: &mut Interp, t: &mut Tensor, i: Value, v: &Value, pos: Pos) -> R<()> {
    let items = items_of(i);
    if items.iter().any(|v| matches!(v, Value::Traced(..))) {
        return exc(pos, "assigning into a tensor at traced indices is not supported");
    }
    let ix = items.iter().map(|v| to_ix(v, pos)).collect::<R<Vec<_>>>()?;
    let (positions, shape) = select(&t.shape, ix, pos)?;
    it.charge(pos, positions.len())?;
    // A Python number is checked against the written tensor's dtype (a tensor is not).
    if let Value::Bool(_) | Value::Int(_) | Value::Float(_) = v {
        scalar_into(v, t.dtype, pos)?;
    }
    let src = match v {
        Value::Bool(b) => Tensor::scalar(DType::Bool, Sc::I(i64::from(*b))),
        Value::Int(x) => Tensor::scalar(DType::I64, Sc::I(*x)),
        Value::Float(x) => Tensor::scalar(DType::F64, Sc::F(*x)),
        Value::Tensor(s) => s.borrow().clone(),
        Value::Traced(..) => return exc(pos, "storing a traced index value into a tensor is not supported"),
        Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
        // A list or tuple too: torch assigns numbers and tensors only.
        other => return exc(pos, format!("can't assign a {} to a tensor (TypeError)", other.type_name())),
    };
    // The source broadcasts to the selection's shape (leading 1s of the source may be dropped).
    let mut s = src.shape.clone();
    while s.len() > shape.len() && s[0] == 1 {
        s.remove(0);
    }
    let b = broadcast(&shape, &s).or_else(|m| exc(pos, m))?;
    if b != shape {
        return exc(
            pos,
            format!(
                "shape mismatch: a value of shape {:?} cannot be assigned to a selection of shape {shape:?}",
                src.shape
            ),
        );
    }
    // The value is cast to the tensor's dtype, as torch does silently.
    for (k, &p) in positions.iter().enumerate() {
        t.data[p] = cast(src.data[broadcast_index(k, &shape, &s)], t.dtype);
    }
    Ok(())
}

/// [`to_ix`] for the vector module.
pub(super) fn to_ix_pub(v: &Value, pos: Pos) -> R<Ix> {
    to_ix(v, pos)
}

/// [`select`] for the vector module.
pub(super) fn select_pub(shape: &[usize], items: Vec<Ix>, pos: Pos) -> R<(Vec<usize>, Vec<usize>)> {
    select(shape, items, pos)
}

fn traced_lookup(it: &mut Interp, t: &Tensor, items: &[Value], pos: Pos) -> R<Value> {
    let simple = items.iter().all(|v| matches!(v, Value::Traced(..) | Value::Int(_)));
    if items.len() < t.shape.len() && simple && !items.is_empty() {
        let mut idx = Vec::with_capacity(items.len());
        for v in items {
            idx.push(match v {
                Value::Traced(n, d) if !d.is_float() && !d.is_bool() => *n,
                Value::Traced(..) => return traced_lookup(it, t, &items[..0], pos),
                Value::Int(i) => push(it, Op::Const(Sc::I(*i)), DType::I64, pos)?,
                _ => unreachable!("checked above"),
            });
        }
        return it.vector_lookup(t, idx, pos);
    }
    if items.len() != t.shape.len() {
        return unsup(
            pos,
            format!(
                "a lookup into a tensor of shape {:?} with {} index(es) gives a vector per position, which hasseflow does \
                 not model: index every dimension",
                t.shape,
                items.len()
            ),
        );
    }
    if items.len() > 8 {
        return unsup(pos, "lookups into tensors of over 8 dimensions are not supported");
    }
    let mut idx = Vec::with_capacity(items.len());
    for v in items {
        let id = match v {
            Value::Traced(n, d) => {
                if d.is_float() {
                    return exc(pos, "tensors used as indices must be long, int, byte or bool tensors (IndexError)");
                }
                if d.is_bool() {
                    return unsup(pos, "a boolean traced value used as an index is not supported");
                }
                *n
            }
            Value::Int(i) => push(it, Op::Const(Sc::I(*i)), DType::I64, pos)?,
            Value::Tensor(x) if x.borrow().shape.is_empty() && !x.borrow().dtype.is_float() => {
                let v = x.borrow().data[0];
                push(it, Op::Const(v), DType::I64, pos)?
            }
            _ => return unsup(pos, "a lookup mixing traced indices with slices or arrays is not supported"),
        };
        idx.push(id);
    }
    let table = Rc::new(Table::new(t.clone()));
    let id = push(it, Op::Gather(table, idx), t.dtype, pos)?;
    Ok(Value::Traced(id, t.dtype))
}

/// The sub-tensors along the first dimension (iteration, `unbind`).
pub(super) fn unbind(t: &Tensor, pos: Pos) -> R<Vec<Tensor>> {
    if t.shape.is_empty() {
        return exc(pos, "iteration over a 0-d tensor (TypeError)");
    }
    let n = t.shape[0];
    let inner: usize = t.shape[1..].iter().product();
    Ok((0..n)
        .map(|i| Tensor::new(t.dtype, t.shape[1..].to_vec(), t.data[i * inner..(i + 1) * inner].to_vec()))
        .collect())
}

/// `t.reshape(shape)` with one `-1` allowed.
pub(super) fn reshape(t: &Tensor, dims: &[i64], pos: Pos) -> R<Tensor> {
    let n = t.numel();
    if dims.len() > MAX_RANK {
        return unsup(
            pos,
            format!("a tensor of {} dimensions: over {MAX_RANK} dimensions is not modelled", dims.len()),
        );
    }
    let Some(known) = dims.iter().filter(|&&d| d != -1).try_fold(1i64, |acc, &d| acc.checked_mul(d)) else {
        return exc(pos, format!("shape {dims:?} is invalid for input of size {n} (RuntimeError)"));
    };
    let free = dims.iter().filter(|&&d| d == -1).count();
    if free > 1 || dims.iter().any(|&d| d < -1) {
        return exc(pos, "invalid shape for reshape (RuntimeError)");
    }
    if free == 1 && known == 0 && n == 0 {
        return exc(pos, "reshape of 0 elements: -1 is ambiguous (RuntimeError)");
    }
    let shape: Vec<usize> = dims
        .iter()
        .map(|&d| if d == -1 { if known == 0 { 0 } else { n / known as usize } } else { d as usize })
        .collect();
    if shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)) != Some(n) {
        return exc(pos, format!("shape {dims:?} is invalid for input of size {n} (RuntimeError)"));
    }
    Ok(Tensor::new(t.dtype, shape, t.data.clone()))
}

/// Torch's error for a dimension given to an operation that needs one of a 0-d tensor.
pub(super) fn no_dims<T>(d: i64, pos: Pos) -> R<T> {
    exc(pos, format!("Dimension specified as {d} but tensor has no dimensions (IndexError)"))
}

/// Normalises a dimension argument.
pub(super) fn dim_of(d: i64, ndim: usize, pos: Pos) -> R<usize> {
    let n = ndim.max(1) as i64;
    let j = if d < 0 { d + n } else { d };
    if j < 0 || j >= n {
        return exc(pos, format!("dimension {d} out of range for a tensor of {ndim} dimensions (IndexError)"));
    }
    Ok(j as usize)
}

/// Applies `f` along `dim` to each 1-d lane, which it rewrites in place (cumsum, diff-like ops that keep
/// the length).
pub(super) fn along(t: &Tensor, dim: usize, mut f: impl FnMut(&mut [Sc])) -> Tensor {
    let mut out = t.clone();
    if t.shape.is_empty() {
        f(&mut out.data[..]);
        return out;
    }
    let len = t.shape[dim];
    let stride: usize = t.shape[dim + 1..].iter().product();
    let outer: usize = t.shape[..dim].iter().product();
    let mut lane = vec![Sc::I(0); len];
    for o in 0..outer {
        for s in 0..stride {
            let base = o * len * stride + s;
            for (k, slot) in lane.iter_mut().enumerate() {
                *slot = out.data[base + k * stride];
            }
            f(&mut lane);
            for (k, v) in lane.iter().enumerate() {
                out.data[base + k * stride] = *v;
            }
        }
    }
    out
}

/// Concatenates tensors along `dim`.
pub(super) fn cat(ts: &[Tensor], dim: i64, pos: Pos) -> R<Tensor> {
    let ts: Vec<&Tensor> = ts.iter().filter(|t| !(t.shape.len() == 1 && t.shape[0] == 0)).collect();
    let Some(first) = ts.first() else { return Ok(Tensor::new(DType::F32, vec![0], Vec::new())) };
    if first.shape.is_empty() {
        return exc(pos, "zero-dimensional tensors cannot be concatenated (RuntimeError)");
    }
    let d = dim_of(dim, first.shape.len(), pos)?;
    let mut dt = first.dtype;
    for t in &ts {
        if t.shape.len() != first.shape.len() || t.shape.iter().enumerate().any(|(k, &s)| k != d && s != first.shape[k])
        {
            return exc(pos, "tensors must have the same shape except in the concatenating dimension (RuntimeError)");
        }
        dt = DType::promote(dt, t.dtype);
    }
    let mut shape = first.shape.clone();
    shape[d] = ts.iter().map(|t| t.shape[d]).sum();
    checked_numel(&shape).or_else(|m| limit(pos, m))?;
    let outer: usize = shape[..d].iter().product();
    let inner: usize = shape[d + 1..].iter().product();
    let mut data = Vec::new();
    for o in 0..outer {
        for t in &ts {
            let chunk = t.shape[d] * inner;
            data.extend(t.data[o * chunk..(o + 1) * chunk].iter().map(|&v| cast(v, dt)));
        }
    }
    Ok(Tensor::new(dt, shape, data))
}

/// The single number `v` holds (a Python number or a one-element tensor, as [`scalar_of`] takes
/// it), checked as torch writes it into a tensor of dtype `dt` ([`DType::holds`]).
pub(super) fn scalar_into(v: &Value, dt: DType, pos: Pos) -> R<Sc> {
    held(dt, scalar_of(v, pos)?.0, pos)
}

/// `v`, where a tensor of dtype `dt` holds it ([`DType::holds`]); else torch's overflow error.
#[inline(never)]
pub(super) fn held(dt: DType, v: Sc, pos: Pos) -> R<Sc> {
    if dt.holds(v) { Ok(v) } else { exc(pos, OVERFLOW) }
}

pub(super) fn scalar_of(v: &Value, pos: Pos) -> R<(Sc, DType)> {
    Ok(match v {
        Value::Instance(i) if i.class.is_int_enum() => return scalar_of(&v.clone().plain(), pos),
        Value::Instance(i) => {
            return unsup(
                pos,
                format!("an object of the class `{}` as a tensor element is not modelled", i.class.name),
            );
        }
        Value::Bool(b) => (Sc::I(i64::from(*b)), DType::Bool),
        Value::Int(i) => (Sc::I(*i), DType::I64),
        Value::Float(f) => (Sc::F(*f), DType::F32),
        Value::Tensor(t) if t.borrow().numel() == 1 => {
            let t = t.borrow();
            (t.data[0], t.dtype)
        }
        Value::Traced(..) => {
            return exc(pos, "a traced index value cannot be stored in a new tensor (vmap refuses this too)");
        }
        Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
        other => return exc(pos, format!("a {} cannot be a tensor element (TypeError)", other.type_name())),
    })
}

/// `torch.tensor(data)`: nested lists of numbers (or one-element tensors).
pub(super) fn tensor_from(v: &Value, dtype: Option<DType>, pos: Pos) -> R<Tensor> {
    fn walk(v: &Value, depth: usize, shape: &mut Vec<usize>, data: &mut Vec<(Sc, DType)>, pos: Pos) -> R<()> {
        let items: Option<Vec<Value>> = match v {
            Value::List(l) => Some(l.borrow().clone()),
            Value::Tuple(t) => Some(t.as_ref().clone()),
            Value::Tensor(t) if !t.borrow().shape.is_empty() => {
                let t = t.borrow().clone();
                Some(unbind(&t, pos)?.into_iter().map(Value::tensor).collect())
            }
            _ => None,
        };
        match items {
            Some(items) => {
                if shape.len() == depth {
                    shape.push(items.len());
                } else if shape.get(depth) != Some(&items.len()) {
                    return exc(pos, "torch.tensor of ragged nested sequences (ValueError)");
                }
                if depth >= MAX_RANK {
                    return exc(pos, "too many dimensions 'list' (ValueError)");
                }
                if data.len() + items.len() > MAX_ELEMENTS {
                    return limit(pos, "a tensor literal over the element limit");
                }
                for x in &items {
                    walk(x, depth + 1, shape, data, pos)?;
                }
            }
            None => {
                if shape.len() != depth {
                    return exc(pos, "torch.tensor of ragged nested sequences (ValueError)");
                }
                data.push(scalar_of(v, pos)?);
            }
        }
        Ok(())
    }
    let mut shape = Vec::new();
    let mut data = Vec::new();
    walk(v, 0, &mut shape, &mut data, pos)?;
    let inferred = if data.iter().any(|(_, d)| d.is_float()) {
        data.iter().filter(|(_, d)| d.is_float()).map(|(_, d)| *d).fold(DType::F32, DType::promote)
    } else if !data.is_empty() && data.iter().all(|(_, d)| d.is_bool()) {
        DType::Bool
    } else if data.is_empty() {
        DType::F32
    } else {
        DType::I64
    };
    let dt = dtype.unwrap_or(inferred);
    // Torch's overflow check of the numbers and one-element tensors of a list, for an integer dtype
    // only (a float past float32's range is inf); a tensor given whole is cast, and wraps.
    if !dt.is_float() && !matches!(v, Value::Tensor(_)) {
        for &(v, _) in &data {
            held(dt, v, pos)?;
        }
    }
    Ok(Tensor::new(dt, shape, data.into_iter().map(|(v, _)| cast(v, dt)).collect()))
}

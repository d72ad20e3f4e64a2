//! The tail of torch that mask code uses on fixed tables at module level: `roll`, `expand`, `repeat`,
//! `sort` / `argsort`, `scatter` / `index_put_`, `unique` / `unique_consecutive`, `eye`, `diff`
//! on any dimension, `F.pad` in every mode, `nonzero`, `gather`, `index_select`,
//! `masked_select`, `count_nonzero`, `bincount`, `one_hot`, `topk`, `block_diag`, `meshgrid`,
//! `split` / `chunk` / `narrow` (views), `index_fill` / `index_copy`; the in-place forms are
//! written through the tensor's views. Each follows torch's CPU
//! semantics (dtypes, negative indices, stable sorts); where torch's result is not determined
//! (ties in `topk`), the call is refused.

use std::cmp::Ordering;
use std::rc::Rc;

use super::args::{Args, filled, list_of, shape_args, tensor_of, to_int, unavailable};
use super::ast::Pos;
use super::rt::{Interp, R, exc, limit, unsup};
use super::tensor::{
    Bin, DType, Sc, Tensor, apply_bin, broadcast, broadcast_index, cast, checked_numel, result_type, strides_of,
};
use super::tensor_ops::{dim_of, scalar_of, setitem};
use super::value::Value;
use super::views::is_basic_index;

/// The `torch.NAME` functions served here.
pub(super) const TAIL_FNS: [&str; 41] = [
    "diff",
    "unbind",
    "narrow",
    "index_fill",
    "index_copy",
    "diag",
    "flip",
    "eye",
    "roll",
    "argsort",
    "sort",
    "scatter",
    "unique_consecutive",
    "unique",
    "block_diag",
    "meshgrid",
    "split",
    "chunk",
    "nonzero",
    "gather",
    "index_select",
    "masked_select",
    "count_nonzero",
    "bincount",
    "topk",
    "cummax",
    "cummin",
    "outer",
    "ger",
    "kron",
    "argwhere",
    "index_put",
    "broadcast_to",
    "matmul",
    "mm",
    "bmm",
    "mv",
    "dot",
    "scatter_reduce",
    "tril_indices",
    "triu_indices",
];

fn tv(t: Tensor) -> Value {
    Value::tensor(t)
}

fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut out = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        if shape[d] > 0 {
            out[d] = i % shape[d];
            i /= shape[d];
        }
    }
    out
}

fn index_tensor(v: &Value, what: &str, pos: Pos) -> R<Tensor> {
    let t = tensor_of(v, pos)?;
    if !matches!(t.dtype, DType::I32 | DType::I64) {
        return exc(pos, format!("{what}: expected dtype int32 or int64 (RuntimeError)"));
    }
    Ok(t)
}

/// Torch's `index_put_`, and an item assignment at an advanced index, take a value tensor of the
/// written tensor's dtype, but for a 0-d value at an index holding a boolean mask (cast, as
/// `masked_fill_` casts).
pub(super) fn put_dtype(dt: DType, i: &Value, v: &Value, item: bool, pos: Pos) -> R<()> {
    let Value::Tensor(v) = v else { return Ok(()) };
    let v = v.borrow();
    if v.dtype == dt || (item && is_basic_index(i)) {
        return Ok(());
    }
    let items = match i {
        Value::Tuple(items) => &items[..],
        other => std::slice::from_ref(other),
    };
    let has_mask = items.iter().any(|x| match x {
        // (A 0-d bool tensor, which is no mask, is refused as an index.)
        Value::Tensor(m) => m.borrow().dtype.is_bool(),
        Value::List(l) => matches!(l.borrow().first(), Some(Value::Bool(_))),
        _ => false,
    });
    if v.shape.is_empty() && has_mask {
        return Ok(());
    }
    exc(pos, "Index put requires the source and destination dtypes match (RuntimeError)")
}

/// An index of `gather`, `scatter` or `index_select`: torch takes no negative index there.
fn norm_index(i: i64, len: usize, pos: Pos) -> R<usize> {
    let j = i;
    if j < 0 || j >= len as i64 {
        return exc(pos, format!("index {i} is out of bounds for dimension with size {len} (IndexError)"));
    }
    Ok(j as usize)
}

/// Torch's sort order: NaN after every number.
fn cmp_sc(a: Sc, b: Sc) -> Ordering {
    match (a, b) {
        (Sc::I(x), Sc::I(y)) => x.cmp(&y),
        _ => {
            let (x, y) = (a.as_f64(), b.as_f64());
            match (x.is_nan(), y.is_nan()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
            }
        }
    }
}

/// The positions of `line` in torch's sort order ([`cmp_sc`]), ascending or descending, equal
/// values in their order: one sort for `sort`, `topk` and `unique` (each closure given to
/// `sort_by` is a sort of its own in the binary).
fn order_of(line: &[Sc], desc: bool) -> Vec<usize> {
    sorted_positions(line.len(), &|x, y| if desc { cmp_sc(line[y], line[x]) } else { cmp_sc(line[x], line[y]) })
}

/// `0..len` sorted by `cmp`, stably: the one sort of the reader (Python's `sorted` and torch's
/// `sort`, `topk` and `unique` come here).
#[inline(never)]
pub(super) fn sorted_positions(len: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut ix: Vec<usize> = (0..len).collect();
    ix.sort_by(|&x, &y| cmp(x, y));
    ix
}

/// Applies `f` to every line along `dim`: `f(values) -> new values` (the line's new length may differ).
fn lines(t: &Tensor, dim: usize, mut f: impl FnMut(Vec<Sc>) -> R<Vec<Sc>>, dtype: DType) -> R<Tensor> {
    lines_dyn(t, dim, &mut f, dtype)
}

/// [`lines`], one copy for every caller's `f` (a copy inlined into each made the lazy module 3.1 KB larger, gzipped).
#[inline(never)]
fn lines_dyn(t: &Tensor, dim: usize, f: &mut dyn FnMut(Vec<Sc>) -> R<Vec<Sc>>, dtype: DType) -> R<Tensor> {
    let len = t.shape[dim];
    let outer: usize = t.shape[..dim].iter().product();
    let inner: usize = t.shape[dim + 1..].iter().product();
    let mut results = Vec::with_capacity(outer * inner);
    let mut new_len = None;
    for o in 0..outer {
        for i in 0..inner {
            let line: Vec<Sc> = (0..len).map(|k| t.data[(o * len + k) * inner + i]).collect();
            let r = f(line)?;
            new_len = Some(r.len());
            results.push(r);
        }
    }
    let nl = new_len.unwrap_or(len);
    let mut data = vec![Sc::I(0); outer * nl * inner];
    for o in 0..outer {
        for i in 0..inner {
            for (k, v) in results[o * inner + i].iter().enumerate() {
                data[(o * nl + k) * inner + i] = *v;
            }
        }
    }
    let mut shape = t.shape.clone();
    shape[dim] = nl;
    Ok(Tensor::new(dtype, shape, data))
}

fn arg_dim(a: &Args, i: usize, name: &str, default: i64, ndim: usize) -> R<usize> {
    let d = a.int(i, name)?.unwrap_or(default);
    dim_of(d, ndim.max(1), a.at)
}

fn bool_kw(a: &Args, i: usize, name: &str) -> R<bool> {
    Ok(match a.get(i, name) {
        None | Some(Value::None) => false,
        Some(Value::Bool(b)) => b,
        Some(v) => to_int(&v, a.at)? != 0,
    })
}

fn as_1d(t: Tensor) -> Tensor {
    if t.shape.is_empty() { Tensor::new(t.dtype, vec![1], t.data) } else { t }
}

/// Torch's CPU sort keeps equal values in order up to this many per line; above it, without
/// `stable=True`, the order of equal values is its own (not reproduced here).
const STABLE_UP_TO: usize = 16;

/// Sorted values and indices; the indices are `None` when torch's order of equal values is not
/// reproduced (ties in a line over [`STABLE_UP_TO`] without `stable=True`).
fn sorted(t: &Tensor, a: &Args, off: usize) -> R<(Tensor, Option<Tensor>)> {
    let t0 = as_1d(t.clone());
    let dim = arg_dim(a, off, "dim", -1, t0.shape.len())?;
    let desc = bool_kw(a, off + 1, "descending")?;
    let stable = bool_kw(a, off + 2, "stable")?;
    let mut unordered = false;
    let mut idx_out = Vec::new();
    let vals = lines(
        &t0,
        dim,
        |line| {
            let ix = order_of(&line, desc);
            if !stable
                && line.len() > STABLE_UP_TO
                && ix.windows(2).any(|w| cmp_sc(line[w[0]], line[w[1]]) == Ordering::Equal)
            {
                unordered = true;
            }
            idx_out.push(ix.iter().map(|&x| Sc::I(x as i64)).collect());
            Ok(ix.iter().map(|&k| line[k]).collect())
        },
        t0.dtype,
    )?;
    let idx = kept_lines(&t0, dim, idx_out)?;
    let shape = t.shape.clone();
    let idx = (!unordered).then(|| Tensor::new(DType::I64, shape.clone(), idx.data));
    Ok((Tensor::new(vals.dtype, shape, vals.data), idx))
}

/// The indices a pass of [`lines`] kept, one line of them per line of `t` along `dim` in the
/// pass's order, as an int64 tensor (the second output of `sort`, `topk`, `cummax`, `cummin`).
fn kept_lines(t: &Tensor, dim: usize, kept: Vec<Vec<Sc>>) -> R<Tensor> {
    let mut kept = kept.into_iter();
    lines(t, dim, |_| Ok(kept.next().unwrap_or_default()), DType::I64)
}

/// `kron(other)`: `t` as [a0, 1, a1, 1, ...] times `other` as [1, b0, 1, b1, ...] (each padded
/// with leading 1s to the larger rank): the product broadcasts to [a0, b0, a1, b1, ...], whose
/// elements in order are the result's, of shape [a0·b0, a1·b1, ...].
fn kron(it: &mut Interp, t: &Tensor, other: &Tensor, pos: Pos) -> R<Value> {
    let rank = t.shape.len().max(other.shape.len());
    let (mut xs, mut ys, mut shape) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..rank {
        let dim = |s: &[usize]| (i + s.len()).checked_sub(rank).map_or(1, |j| s[j]);
        let (p, q) = (dim(&t.shape), dim(&other.shape));
        xs.extend([p, 1]);
        ys.extend([1, q]);
        shape.push(p * q);
    }
    let x = Tensor::new(t.dtype, xs, t.data.clone());
    let y = Tensor::new(other.dtype, ys, other.data.clone());
    let kind = super::ops::Elem::Bin(super::tensor::Bin::Mul);
    let mut r = tensor_of(&super::ops::elementwise(it, kind, &[tv(x), tv(y)], pos)?, pos)?;
    r.shape = shape;
    Ok(tv(r))
}

/// `x @ y` (`matmul`), or `mm`, `bmm`, `mv`, `dot` (`kind`: each takes only its own ranks, and
/// `bmm` no broadcast), as torch's CPU kernels give it: the same dtype on both sides, no bool; a
/// 1-d operand a row (left) or column (right) whose dimension is dropped again; the batch
/// dimensions broadcast. Integers wrap at their width. A float sum is taken only where its order
/// cannot change it: one non-zero product at most (a selection by a one-hot operand), or every
/// value an integer and the sum of `|a·b|` under `2^24` (float32) or `2^53` (float64), so that
/// every partial sum is exact (torch's BLAS order of summation, which decides the rounding
/// otherwise, is not reproduced: such a product is refused).
#[inline(never)]
pub(super) fn matmul(it: &mut Interp, x: &Value, y: &Value, kind: &str, pos: Pos) -> R<Value> {
    super::unset::check(it, x, pos)?;
    super::unset::check(it, y, pos)?;
    let (x, y) = (&tensor_of(x, pos)?, &tensor_of(y, pos)?);
    let (rx, ry) = (x.shape.len(), y.shape.len());
    if x.dtype.is_bool() && y.dtype.is_bool() {
        return exc(pos, format!("{kind}: not implemented for 'Bool' (NotImplementedError)"));
    }
    // As matrices: a 1-d left operand is one row, a 1-d right one a column.
    let (m, k) = match x.shape[..] {
        [k] => (1, k),
        [.., m, k] => (m, k),
        [] => (0, 0),
    };
    let (k2, p) = match y.shape[..] {
        [k] => (k, 1),
        [.., k, p] => (k, p),
        [] => (0, 0),
    };
    let (bx, by) = (&x.shape[..rx.saturating_sub(2)], &y.shape[..ry.saturating_sub(2)]);
    let batch = broadcast(bx, by).unwrap_or_default();
    let ranks = match kind {
        "mm" => rx == 2 && ry == 2,
        "bmm" => rx == 3 && ry == 3 && bx == by,
        "mv" => rx == 2 && ry == 1,
        "dot" => rx == 1 && ry == 1,
        _ => rx > 0 && ry > 0 && batch.len() == bx.len().max(by.len()),
    };
    if !ranks || x.dtype != y.dtype || k != k2 {
        let (xs, ys, xt, yt) = (&x.shape, &y.shape, x.dtype, y.dtype);
        return exc(
            pos,
            format!("{kind}: shapes {xs:?} and {ys:?} ({xt} and {yt}) cannot be multiplied (RuntimeError)"),
        );
    }
    let mut shape = batch.clone();
    shape.extend((rx > 1).then_some(m));
    shape.extend((ry > 1).then_some(p));
    let cells = checked_numel(&shape).or_else(|e| limit(pos, e))?;
    it.charge(pos, cells.saturating_mul(k.max(1)))?;
    let float = x.dtype.is_float();
    let exact_below = if x.dtype == DType::F32 { 16_777_216.0 } else { 9_007_199_254_740_992.0 };
    let mut data = Vec::with_capacity(cells);
    for b in 0..cells / (m * p).max(1) {
        let (xo, yo) = (broadcast_index(b, &batch, bx) * m * k, broadcast_index(b, &batch, by) * k * p);
        for i in 0..m {
            for j in 0..p {
                let (mut int, mut sum, mut abs, mut terms) = (0i64, 0.0f64, 0.0f64, 0);
                for l in 0..k {
                    let (a, c) = (x.data[xo + i * k + l], y.data[yo + l * p + j]);
                    let (af, cf) = (a.as_f64(), c.as_f64());
                    let ac = af * cf;
                    sum += ac;
                    abs += if af.fract() == 0.0 && cf.fract() == 0.0 { ac.abs() } else { f64::INFINITY };
                    terms += usize::from(ac != 0.0);
                    int = int.wrapping_add(a.as_i64().wrapping_mul(c.as_i64()));
                }
                if float && terms > 1 && abs.partial_cmp(&exact_below) != Some(std::cmp::Ordering::Less) {
                    let t = x.dtype;
                    return unsup(
                        pos,
                        format!(
                            "{kind} of {t} values that are not small integers: torch's order of summation, which decides the rounding, is not reproduced"
                        ),
                    );
                }
                data.push(if float { Sc::F(x.dtype.round(sum)) } else { Sc::I(x.dtype.wrap(int)) });
            }
        }
    }
    Ok(tv(Tensor::new(x.dtype, shape, data)))
}

/// `cummax(dim)` / `cummin(dim)`: the running maximum (minimum) along `dim` and where it was
/// last reached, as torch's CPU kernel takes it: a value equal to the running one, or NaN (which
/// then stays), moves the index to it.
fn cum_extreme(t: &Tensor, a: &Args, max: bool, name: &str) -> R<(Value, Value)> {
    let Some(d) = a.int(0, "dim")? else {
        return exc(a.at, format!("{name}() missing 1 required positional arguments: \"dim\" (TypeError)"));
    };
    let t0 = as_1d(t.clone());
    let dim = dim_of(d, t0.shape.len(), a.at)?;
    let mut at_lines = Vec::new();
    let vals = lines(
        &t0,
        dim,
        |line| {
            let mut out = line.clone();
            let mut at = Vec::with_capacity(line.len());
            let (mut best, mut i) = (line.first().copied().unwrap_or(Sc::I(0)), 0);
            for (k, &x) in line.iter().enumerate() {
                let nan = matches!(x, Sc::F(f) if f.is_nan());
                let order = cmp_sc(x, best);
                let takes = match best {
                    Sc::F(b) if b.is_nan() => nan,
                    _ => nan || if max { order != Ordering::Less } else { order != Ordering::Greater },
                };
                if takes {
                    (best, i) = (x, k);
                }
                out[k] = best;
                at.push(Sc::I(i as i64));
            }
            at_lines.push(at);
            Ok(out)
        },
        t0.dtype,
    )?;
    let idx = kept_lines(&t0, dim, at_lines)?;
    let shape = t.shape.clone();
    Ok((tv(Tensor::new(vals.dtype, shape.clone(), vals.data)), tv(Tensor::new(DType::I64, shape, idx.data))))
}

const UNORDERED: &str = "the indices of a sort over tied values without stable=True: torch's CPU order of equal \
                         values in a line over 16 is its own, not reproduced (pass stable=True)";

fn roll(t: &Tensor, shifts: &Value, dims: Option<Value>, pos: Pos) -> R<Tensor> {
    let to_list = |v: &Value| -> R<Vec<i64>> {
        match v {
            Value::Tuple(x) => x.iter().map(|e| to_int(e, pos)).collect(),
            Value::List(x) => x.borrow().iter().map(|e| to_int(e, pos)).collect(),
            other => Ok(vec![to_int(other, pos)?]),
        }
    };
    let shifts = to_list(shifts)?;
    let dims = match dims {
        None | Some(Value::None) => None,
        Some(d) => Some(to_list(&d)?),
    };
    let Some(dims) = dims else {
        if shifts.len() != 1 {
            return exc(pos, "roll: shifts and dims must align when dims is not given (RuntimeError)");
        }
        let n = t.numel();
        if n == 0 {
            return Ok(t.clone());
        }
        let s = shifts[0].rem_euclid(n as i64) as usize;
        let data = (0..n).map(|i| t.data[(i + n - s) % n]).collect();
        return Ok(Tensor::new(t.dtype, t.shape.clone(), data));
    };
    if dims.len() != shifts.len() {
        return exc(pos, "roll: shifts and dims must have the same length (RuntimeError)");
    }
    let mut cur = t.clone();
    for (s, d) in shifts.iter().zip(&dims) {
        if cur.shape.is_empty() {
            return super::tensor_ops::no_dims(*d, pos);
        }
        let d = dim_of(*d, cur.shape.len(), pos)?;
        let len = cur.shape[d];
        if len == 0 {
            continue;
        }
        let s = s.rem_euclid(len as i64) as usize;
        cur = lines(&cur, d, |line| Ok((0..len).map(|i| line[(i + len - s) % len]).collect()), cur.dtype)?;
    }
    Ok(cur)
}

/// `flip(dims)`: each named dimension reversed (`t.flip(0, 1)`, `t.flip((0,))`, `torch.flip(t, [0])`).
fn flip(t: &Tensor, a: &Args, pos: Pos) -> R<Tensor> {
    let given: Vec<Value> = match a.pos.as_slice() {
        [] => match a.kw("dims") {
            Some(d) => vec![d],
            None => return exc(pos, "flip() missing required argument 'dims' (TypeError)"),
        },
        v => v.to_vec(),
    };
    let dims: Vec<i64> = match given.as_slice() {
        [Value::Tuple(x)] => x.iter().map(|e| to_int(e, pos)).collect::<R<_>>()?,
        [Value::List(x)] => x.borrow().iter().map(|e| to_int(e, pos)).collect::<R<_>>()?,
        v => v.iter().map(|e| to_int(e, pos)).collect::<R<_>>()?,
    };
    let mut seen = Vec::new();
    let mut cur = t.clone();
    for d in dims {
        let k = dim_of(d, t.shape.len(), pos)?;
        if seen.contains(&k) {
            return exc(pos, format!("dim {k} appears multiple times in the list of dims (RuntimeError)"));
        }
        seen.push(k);
        if t.shape.is_empty() {
            continue;
        }
        cur = lines(
            &cur,
            k,
            |mut line| {
                line.reverse();
                Ok(line)
            },
            cur.dtype,
        )?;
    }
    Ok(cur)
}

/// `t.expand(*sizes)`: `t` broadcast to `sizes` (`-1` keeps a size), as a copy.
pub(super) fn expand(t: &Tensor, sizes: &[i64], pos: Pos) -> R<Tensor> {
    if sizes.len() < t.shape.len() {
        return exc(
            pos,
            format!(
                "expand: the number of sizes ({}) must be at least the tensor's dimensions ({}) (RuntimeError)",
                sizes.len(),
                t.shape.len()
            ),
        );
    }
    let lead = sizes.len() - t.shape.len();
    let mut out = Vec::with_capacity(sizes.len());
    for (k, &s) in sizes.iter().enumerate() {
        let own = if k >= lead { Some(t.shape[k - lead]) } else { None };
        let v = match (s, own) {
            (-1, Some(o)) => o,
            (-1, None) => return exc(pos, "expand: -1 is not allowed in a new leading dimension (RuntimeError)"),
            (s, _) if s < 0 => return exc(pos, format!("expand: invalid size {s} (RuntimeError)")),
            (s, Some(o)) if o != 1 && o as i64 != s => {
                return exc(
                    pos,
                    format!(
                        "expand: the size of dimension {k} ({o}) must match {s} at a non-singleton dimension (RuntimeError)"
                    ),
                );
            }
            (s, _) => s as usize,
        };
        out.push(v);
    }
    let n = checked_numel(&out).or_else(|m| limit(pos, m))?;
    let mut own = vec![1; lead];
    own.extend_from_slice(&t.shape);
    let data = (0..n).map(|i| t.data[broadcast_index(i, &out, &own)]).collect();
    Ok(Tensor::new(t.dtype, out, data))
}

/// The sizes of `expand`/`repeat`: as arguments, one tuple or list, or the keyword `kw`.
fn sizes_of(a: &Args, kw: &str) -> R<Vec<i64>> {
    let pos = a.at;
    let ints = |vals: &[Value]| vals.iter().map(|v| to_int(v, pos)).collect::<R<Vec<_>>>();
    match a.pos.as_slice() {
        [Value::Tuple(x)] => ints(x),
        [Value::List(x)] => ints(&x.borrow()),
        [] => match a.kw(kw) {
            Some(s) => Ok(shape_args(&[s], pos)?.into_iter().map(|x| x as i64).collect()),
            None => Ok(Vec::new()),
        },
        other => ints(other),
    }
}

/// `t.repeat(*sizes)`: `t` tiled `sizes[k]` times along dimension `k` (new leading dimensions
/// for the sizes past `t`'s own), as torch's `Tensor.repeat`.
fn repeat(t: &Tensor, sizes: &[i64], pos: Pos) -> R<Tensor> {
    if sizes.len() < t.shape.len() {
        return exc(
            pos,
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor (RuntimeError)",
        );
    }
    let lead = sizes.len() - t.shape.len();
    let mut own = vec![1; lead];
    own.extend_from_slice(&t.shape);
    let mut out = Vec::with_capacity(sizes.len());
    for (&s, &o) in sizes.iter().zip(&own) {
        // A size past memory saturates, and `checked_numel` below refuses it by its shape.
        let Ok(s) = usize::try_from(s) else {
            let d = s.saturating_mul(o as i64);
            return exc(pos, format!("Trying to create tensor with negative dimension {d} (RuntimeError)"));
        };
        out.push(s.saturating_mul(o));
    }
    let n = checked_numel(&out).or_else(|m| limit(pos, m))?;
    let (out_strides, own_strides) = (strides_of(&out), strides_of(&own));
    let data = (0..n)
        .map(|i| {
            let at: usize = (0..out.len()).map(|k| (i / out_strides[k] % out[k]) % own[k] * own_strides[k]).sum();
            t.data[at]
        })
        .collect();
    Ok(Tensor::new(t.dtype, out, data))
}

fn diff(it: &mut Interp, t: &Tensor, a: &Args, off: usize) -> R<Tensor> {
    let pos = a.at;
    let n = a.int(off, "n")?.unwrap_or(1);
    if n < 0 {
        return exc(pos, format!("diff expects n to be non-negative, got {n} (RuntimeError)"));
    }
    if t.shape.is_empty() {
        return exc(pos, "diff expects input to be at least one-dimensional (RuntimeError)");
    }
    let dim = arg_dim(a, off + 1, "dim", -1, t.shape.len())?;
    let mut parts = Vec::new();
    for (k, name) in [(off + 2, "prepend"), (usize::MAX, "")] {
        if k == usize::MAX {
            parts.push(t.clone());
            break;
        }
        if let Some(p) = a.get(k, name).filter(|v| !matches!(v, Value::None)) {
            parts.push(tensor_of(&p, pos)?);
        }
    }
    if let Some(p) = a.get(off + 3, "append").filter(|v| !matches!(v, Value::None)) {
        parts.push(tensor_of(&p, pos)?);
    }
    let mut cur = if parts.len() == 1 { parts.remove(0) } else { super::tensor_ops::cat(&parts, dim as i64, pos)? };
    it.charge(pos, cur.numel().saturating_mul(n.min(64) as usize + 1))?;
    let dt = cur.dtype;
    for _ in 0..n {
        if cur.shape[dim] == 0 {
            break;
        }
        cur = lines(
            &cur,
            dim,
            |line| {
                line.windows(2)
                    .map(|w| {
                        if dt.is_bool() {
                            Ok(Sc::I(i64::from((w[0].as_i64() != 0) != (w[1].as_i64() != 0))))
                        } else {
                            apply_bin(Bin::Sub, dt, w[1], w[0]).or_else(|m| exc(pos, m))
                        }
                    })
                    .collect()
            },
            dt,
        )?;
    }
    Ok(cur)
}

fn pad(it: &mut Interp, a: &Args) -> R<Value> {
    let pos = a.at;
    let t = tensor_of(&a.need(0, "input")?, pos)?;
    let p = list_of(it, &a.need(1, "pad")?, pos)?;
    let p = p.iter().map(|v| to_int(v, pos)).collect::<R<Vec<_>>>()?;
    if p.len() % 2 != 0 || p.len() / 2 > t.shape.len() {
        return exc(
            pos,
            "Padding length must be divisible by 2 and at most twice the input's dimensions (RuntimeError)",
        );
    }
    let mode = match a.get(2, "mode") {
        None | Some(Value::None) => "constant".to_string(),
        Some(Value::Str(s)) => s.to_string(),
        Some(v) => return exc(pos, format!("F.pad: mode must be a string, not {} (TypeError)", v.type_name())),
    };
    let k = p.len() / 2;
    let nd = t.shape.len();
    if mode != "constant" {
        if !matches!(mode.as_str(), "reflect" | "replicate" | "circular") {
            return exc(pos, format!("F.pad: unrecognised padding mode {mode} (NotImplementedError)"));
        }
        if !(nd == k + 1 || nd == k + 2) || k > 3 {
            return exc(
                pos,
                format!("Padding size {} is not supported for {nd}D input tensor (NotImplementedError)", p.len()),
            );
        }
        if a.get(3, "value").is_some_and(|v| !matches!(v, Value::None)) {
            return exc(pos, format!("Padding mode \"{mode}\" doesn't take in value argument (AssertionError)"));
        }
    }
    let value = match a.get(3, "value") {
        Some(Value::None) | None => Sc::I(0),
        // F.pad takes its value as a float, checked against the tensor's dtype as torch does.
        Some(v) => super::tensor_ops::held(t.dtype, Sc::F(scalar_of(&v, pos)?.0.as_f64()), pos)?,
    };
    let mut cur = t;
    for j in 0..k {
        let (l, r) = (p[2 * j], p[2 * j + 1]);
        let dim = nd - 1 - j;
        let len = cur.shape[dim] as i64;
        let new_len = len + l + r;
        if new_len < 0 {
            return exc(pos, format!("F.pad: the padded size of dimension {dim} is negative (RuntimeError)"));
        }
        let mut shape = cur.shape.clone();
        shape[dim] = new_len.max(0) as usize;
        let total = checked_numel(&shape).or_else(|m| limit(pos, m))?;
        it.charge(pos, total)?;
        match mode.as_str() {
            "reflect" if l >= len || r >= len => {
                return exc(
                    pos,
                    format!(
                        "Padding size should be less than the corresponding input dimension, but got: padding ({l}, {r}) at dimension {dim} of size {len} (RuntimeError)"
                    ),
                );
            }
            "circular" if l > len || r > len => {
                return exc(pos, "Padding value causes wrapping around more than once (RuntimeError)");
            }
            "replicate" if len == 0 => return exc(pos, "F.pad: replicate of an empty dimension (RuntimeError)"),
            _ => {}
        }
        if (l < 0 || r < 0) && mode != "constant" {
            return unsup(pos, "negative padding outside the constant mode is not supported");
        }
        let fill = cast(value, cur.dtype);
        let m = mode.clone();
        cur = lines(
            &cur,
            dim,
            |line| {
                let len = line.len() as i64;
                Ok((0..new_len.max(0))
                    .map(|o| {
                        let i = o - l;
                        if (0..len).contains(&i) {
                            return line[i as usize];
                        }
                        match m.as_str() {
                            "constant" => fill,
                            "replicate" => line[i.clamp(0, len - 1) as usize],
                            "circular" => line[i.rem_euclid(len) as usize],
                            _ => {
                                let j = if i < 0 { -i } else { 2 * (len - 1) - i };
                                line[j as usize]
                            }
                        }
                    })
                    .collect())
            },
            cur.dtype,
        )?;
    }
    Ok(tv(cur))
}

fn one_hot(a: &Args) -> R<Value> {
    let pos = a.at;
    let t = tensor_of(&a.need(0, "tensor")?, pos)?;
    if t.dtype != DType::I64 {
        return exc(pos, "one_hot is only applicable to index tensor of type LongTensor (RuntimeError)");
    }
    let k = a.int(1, "num_classes")?.unwrap_or(-1);
    let max = t.data.iter().map(|v| v.as_i64()).max();
    if t.data.iter().any(|v| v.as_i64() < 0) {
        return exc(pos, "one_hot: class values must be non-negative (RuntimeError)");
    }
    let k = if k == -1 {
        match max {
            Some(m) => m + 1,
            None => return exc(pos, "one_hot: can not infer total number of classes from empty tensor (RuntimeError)"),
        }
    } else {
        if max.is_some_and(|m| m >= k) {
            return exc(pos, "one_hot: class values must be smaller than num_classes (RuntimeError)");
        }
        k
    };
    let mut shape = t.shape.clone();
    shape.push(k.max(0) as usize);
    let n = checked_numel(&shape).or_else(|m| limit(pos, m))?;
    let mut data = vec![Sc::I(0); n];
    for (i, v) in t.data.iter().enumerate() {
        data[i * k as usize + v.as_i64() as usize] = Sc::I(1);
    }
    Ok(tv(Tensor::new(DType::I64, shape, data)))
}

/// `torch.nn.functional.NAME`.
pub(super) fn functional(it: &mut Interp, f: &str, a: &Args) -> R<Option<Value>> {
    Ok(Some(match f {
        "pad" => pad(it, a)?,
        "one_hot" => one_hot(a)?,
        _ => return Ok(None),
    }))
}

fn unique(t: &Tensor, a: &Args, off: usize, consecutive: bool) -> R<Value> {
    let pos = a.at;
    let (inv_i, cnt_i, dim_i) = if consecutive { (off, off + 1, off + 2) } else { (off + 1, off + 2, off + 3) };
    // `sorted=True` is what is computed; without sorting, torch's order is its own.
    if !consecutive && a.get(off, "sorted").map_or(Ok(1), |v| to_int(&v, pos))? == 0 {
        return unsup(pos, "unique with sorted=False: torch's order of the values is not reproduced");
    }
    let want_inv = bool_kw(a, inv_i, "return_inverse")?;
    let want_cnt = bool_kw(a, cnt_i, "return_counts")?;
    if a.get(dim_i, "dim").is_some_and(|v| !matches!(v, Value::None)) {
        return unsup(pos, "unique along a dimension is not supported (flattened unique is)");
    }
    let flat: Vec<Sc> = t.data.clone();
    let (vals, inverse, counts) = if consecutive {
        let mut vals: Vec<Sc> = Vec::new();
        let mut inv = Vec::with_capacity(flat.len());
        let mut cnt: Vec<i64> = Vec::new();
        for &v in &flat {
            if vals.last().is_some_and(|&l| cmp_sc(l, v) == Ordering::Equal) {
                *cnt.last_mut().unwrap_or(&mut 0) += 1;
            } else {
                vals.push(v);
                cnt.push(1);
            }
            inv.push(vals.len() as i64 - 1);
        }
        (vals, inv, cnt)
    } else {
        let mut s: Vec<Sc> = order_of(&flat, false).into_iter().map(|i| flat[i]).collect();
        s.dedup_by(|x, y| cmp_sc(*x, *y) == Ordering::Equal);
        let inv: Vec<i64> =
            flat.iter().map(|v| s.binary_search_by(|p| cmp_sc(*p, *v)).map_or(0, |k| k as i64)).collect();
        let mut cnt = vec![0i64; s.len()];
        for &k in &inv {
            cnt[k as usize] += 1;
        }
        (s, inv, cnt)
    };
    let n = vals.len();
    let out = tv(Tensor::new(t.dtype, vec![n], vals));
    if !want_inv && !want_cnt {
        return Ok(out);
    }
    let mut parts = vec![out];
    if want_inv {
        parts.push(tv(Tensor::new(DType::I64, t.shape.clone(), inverse.into_iter().map(Sc::I).collect())));
    }
    if want_cnt {
        parts.push(tv(Tensor::new(DType::I64, vec![n], counts.into_iter().map(Sc::I).collect())));
    }
    Ok(Value::Tuple(Rc::new(parts)))
}

fn nonzero(t: &Tensor, as_tuple: bool) -> Value {
    let t = if t.shape.is_empty() && as_tuple { as_1d(t.clone()) } else { t.clone() };
    let hits: Vec<Vec<usize>> =
        t.data.iter().enumerate().filter(|(_, v)| v.truthy()).map(|(i, _)| unravel(i, &t.shape)).collect();
    let nd = t.shape.len();
    if as_tuple {
        let cols = (0..nd)
            .map(|d| tv(Tensor::new(DType::I64, vec![hits.len()], hits.iter().map(|h| Sc::I(h[d] as i64)).collect())))
            .collect();
        return Value::Tuple(Rc::new(cols));
    }
    let data = hits.iter().flat_map(|h| h.iter().map(|&x| Sc::I(x as i64))).collect();
    tv(Tensor::new(DType::I64, vec![hits.len(), nd], data))
}

fn gather(t: &Tensor, dim: i64, index: &Tensor, pos: Pos) -> R<Tensor> {
    let nd = t.shape.len().max(1);
    if index.shape.len().max(1) != nd {
        return exc(pos, "gather: index tensor must have the same number of dimensions as input tensor (RuntimeError)");
    }
    let d = dim_of(dim, nd, pos)?;
    let ts = if t.shape.is_empty() { vec![1] } else { t.shape.clone() };
    let is = if index.shape.is_empty() { vec![1] } else { index.shape.clone() };
    for k in 0..nd {
        if k != d && is[k] > ts[k] {
            return exc(pos, format!("gather: size of index dimension {k} exceeds the input's (RuntimeError)"));
        }
    }
    let st = strides_of(&ts);
    let mut data = Vec::with_capacity(index.numel());
    for (i, v) in index.data.iter().enumerate() {
        let mut c = unravel(i, &is);
        c[d] = norm_index(v.as_i64(), ts[d], pos)?;
        data.push(t.data[c.iter().zip(&st).map(|(a, b)| a * b).sum::<usize>()]);
    }
    Ok(Tensor::new(t.dtype, index.shape.clone(), data))
}

fn scatter(t: &Tensor, a: &Args, reduced: bool) -> R<Tensor> {
    let pos = a.at;
    let d = dim_of(to_int(&a.need(0, "dim")?, pos)?, t.shape.len().max(1), pos)?;
    let index = index_tensor(&a.need(1, "index")?, "scatter(): index", pos)?;
    let float = t.dtype.is_float();
    // `scatter_reduce(dim, index, src, reduce, *, include_self=True)`: each `src` value reduced
    // into the cell its index names by `amax` / `amin` (or `max` / `min`; NaN wins, as in torch),
    // or `sum` / `prod` of integers (wrapping at the width); with `include_self=False` a cell that
    // receives values starts from the first of them. A float sum, product or mean (whose
    // rounding depends on torch's order) and an integer mean are refused.
    #[derive(Clone, Copy, PartialEq)]
    enum Reduce {
        Max,
        Min,
        Sum,
        Prod,
    }
    let (mut reduce, mut include_self) = (None, true);
    if reduced {
        let Value::Str(r) = a.need(3, "reduce")? else {
            return exc(pos, "scatter_reduce(): argument 'reduce' must be str (TypeError)");
        };
        reduce = Some(match &*r {
            "amax" | "max" => Reduce::Max,
            "amin" | "min" => Reduce::Min,
            "sum" if !float => Reduce::Sum,
            "prod" if !float => Reduce::Prod,
            "sum" | "prod" | "mean" => {
                return unsup(pos, format!("scatter_reduce with reduce=\"{r}\" on {}: not modelled", t.dtype));
            }
            _ => {
                let m = "reduce argument must be either sum, prod, mean, amax or amin";
                return exc(pos, format!("{m}, got {r} (RuntimeError)"));
            }
        });
        include_self = a.get(4, "include_self").map_or(Ok(true), |v| to_int(&v, pos).map(|i| i != 0))?;
    } else if a.get(3, "reduce").is_some_and(|v| !matches!(v, Value::None)) {
        return unsup(pos, "scatter with a reduce argument is not supported");
    }
    let src = a.get(2, "src").or_else(|| a.kw("value")).ok_or_else(|| super::rt::Fail {
        kind: super::rt::FailKind::Exception,
        msg: "scatter() missing `src` or `value` (TypeError)".into(),
        pos,
        exc_type: None,
    })?;
    let (src, value) = match &src {
        Value::Tensor(s) => (Some(s.borrow().clone()), Sc::I(0)),
        _ if reduced => (Some(tensor_of(&src, pos)?), Sc::I(0)),
        _ => (None, super::tensor_ops::scalar_into(&src, t.dtype, pos)?),
    };
    if let Some(s) = &src
        && s.dtype != t.dtype
    {
        let (x, y) = (t.dtype, s.dtype);
        return exc(
            pos,
            format!("scatter(): Expected self.dtype to be equal to src.dtype ({x} vs {y}) (RuntimeError)"),
        );
    }
    let one = |s: &[usize]| if s.is_empty() { vec![1] } else { s.to_vec() };
    let (ts, is) = (one(&t.shape), one(&index.shape));
    if is.len() != ts.len() {
        return exc(pos, "scatter: index must have the same number of dimensions as self (RuntimeError)");
    }
    if (0..is.len()).any(|k| k != d && is[k] > ts[k]) {
        return exc(pos, "scatter: index is larger than self in a dimension other than dim (RuntimeError)");
    }
    let st = strides_of(&ts);
    let mut out = t.clone();
    let mut touched = vec![include_self; out.data.len()];
    for (i, v) in index.data.iter().enumerate() {
        let mut c = unravel(i, &is);
        let x = match &src {
            Some(s) => {
                let ss = one(&s.shape);
                if ss.len() != is.len() || c.iter().zip(&ss).any(|(x, y)| x >= y) {
                    return exc(pos, "scatter: index is larger than src in some dimension (RuntimeError)");
                }
                s.data[c.iter().zip(strides_of(&ss)).map(|(a, b)| a * b).sum::<usize>()]
            }
            None => value,
        };
        c[d] = norm_index(v.as_i64(), ts[d], pos)?;
        let at = c.iter().zip(&st).map(|(a, b)| a * b).sum::<usize>();
        let y = out.data[at];
        let (p, q) = (x.as_i64(), y.as_i64());
        out.data[at] = match reduce {
            _ if !touched[at] => x,
            None => cast(x, t.dtype),
            Some(r @ (Reduce::Max | Reduce::Min)) if float => {
                let (p, q) = (x.as_f64(), y.as_f64());
                Sc::F(if p.is_nan() || q.is_nan() {
                    f64::NAN
                } else if (p > q) == (r == Reduce::Max) {
                    p
                } else {
                    q
                })
            }
            Some(r @ (Reduce::Max | Reduce::Min)) => Sc::I(if (p > q) == (r == Reduce::Max) { p } else { q }),
            Some(Reduce::Sum) => Sc::I(t.dtype.wrap(p.wrapping_add(q))),
            Some(Reduce::Prod) => Sc::I(t.dtype.wrap(p.wrapping_mul(q))),
        };
        touched[at] = true;
    }
    Ok(out)
}

fn bincount(a: &Args, t: &Tensor) -> R<Tensor> {
    let pos = a.at;
    if t.shape.len() != 1 || t.dtype.is_float() || t.dtype.is_bool() {
        return exc(pos, "bincount only supports 1-d non-negative integral inputs (RuntimeError)");
    }
    if t.data.iter().any(|v| v.as_i64() < 0) {
        return exc(pos, "bincount only supports 1-d non-negative integral inputs (RuntimeError)");
    }
    let minlength = a.int(1, "minlength")?.unwrap_or(0);
    if minlength < 0 {
        return exc(pos, "bincount: minlength should be >= 0 (RuntimeError)");
    }
    let len = t.data.iter().map(|v| v.as_i64() + 1).max().unwrap_or(0).max(minlength) as usize;
    checked_numel(&[len]).or_else(|m| limit(pos, m))?;
    match a.get(0, "weights").filter(|v| !matches!(v, Value::None)) {
        None => {
            let mut c = vec![0i64; len];
            for v in &t.data {
                c[v.as_i64() as usize] += 1;
            }
            Ok(Tensor::new(DType::I64, vec![len], c.into_iter().map(Sc::I).collect()))
        }
        Some(w) => {
            let w = tensor_of(&w, pos)?;
            if w.shape != t.shape {
                return exc(pos, "bincount: weights should be 1-d and have the same length as input (RuntimeError)");
            }
            let dt = if w.dtype == DType::F32 { DType::F32 } else { DType::F64 };
            let mut c = vec![0f64; len];
            for (v, x) in t.data.iter().zip(&w.data) {
                let s = c[v.as_i64() as usize] + x.as_f64();
                c[v.as_i64() as usize] = if dt == DType::F32 { s as f32 as f64 } else { s };
            }
            Ok(Tensor::new(dt, vec![len], c.into_iter().map(Sc::F).collect()))
        }
    }
}

fn topk(t: &Tensor, a: &Args, off: usize) -> R<(Value, Value)> {
    let pos = a.at;
    let k = to_int(&a.need(off, "k")?, pos)?;
    if t.dtype.is_bool() {
        return exc(pos, "topk does not support bool dtypes on CPU (NotImplementedError)");
    }
    let t0 = as_1d(t.clone());
    let dim = arg_dim(a, off + 1, "dim", -1, t0.shape.len())?;
    let largest = a.get(off + 2, "largest").is_none_or(|v| !matches!(v, Value::Bool(false)));
    if a.get(off + 3, "sorted").is_some_and(|v| !matches!(v, Value::Bool(true))) {
        return unsup(pos, "topk with `sorted=` other than True: the order of the k values is torch's own");
    }
    let len = t0.shape[dim];
    if k < 0 || k as usize > len {
        return exc(pos, "topk: selected index k out of range (RuntimeError)");
    }
    // A 0-d tensor's one value, whether k is 0 or 1.
    let k = if t.shape.is_empty() { 1 } else { k as usize };
    let mut tied = false;
    let mut idxs = Vec::new();
    let vals = lines(
        &t0,
        dim,
        |line| {
            let ix = order_of(&line, largest);
            // Torch leaves the order of equal values unspecified: refuse ties among the first k + 1.
            let span = (k + 1).min(line.len());
            for w in ix[..span].windows(2) {
                if cmp_sc(line[w[0]], line[w[1]]) == Ordering::Equal {
                    tied = true;
                }
            }
            idxs.push(ix[..k].iter().map(|&x| Sc::I(x as i64)).collect());
            Ok(ix[..k].iter().map(|&j| line[j]).collect())
        },
        t0.dtype,
    )?;
    if tied {
        return unsup(pos, "topk over tied values: torch does not fix which of the equal values comes first");
    }
    let (mut vals, mut idx) = (vals, kept_lines(&t0, dim, idxs)?);
    if t.shape.is_empty() {
        (vals.shape, idx.shape) = (Vec::new(), Vec::new());
    }
    Ok((tv(vals), tv(idx)))
}

/// `torch.NAME(...)` for the functions of [`TAIL_FNS`] (and `eye`).
pub(super) fn torch_fn(it: &mut Interp, f: &str, a: &Args) -> R<Option<Value>> {
    let pos = a.at;
    if f == "eye" {
        let n = to_int(&a.need(0, "n")?, pos)?;
        let m = a.int(1, "m")?.unwrap_or(n);
        if n < 0 || m < 0 {
            return exc(pos, format!("eye: n and m must be non-negative, got {n} and {m} (RuntimeError)"));
        }
        let shape = vec![n as usize, m as usize];
        checked_numel(&shape).or_else(|e| limit(pos, e))?;
        it.charge(pos, (n * m) as usize)?;
        let dt = a.dtype()?.unwrap_or(DType::F32);
        let mut t = filled(dt, shape, Sc::I(0));
        for i in 0..n.min(m) as usize {
            t.data[i * m as usize + i] = cast(Sc::I(1), dt);
        }
        return Ok(Some(tv(t)));
    }
    if matches!(f, "tril_indices" | "triu_indices") {
        let upper = f == "triu_indices";
        // The (row, column) pairs of the lower (upper) triangle, `offset` diagonals up, row by row.
        let (rows, cols) = (to_int(&a.need(0, "row")?, pos)?, to_int(&a.need(1, "col")?, pos)?);
        let offset = a.int(2, "offset")?.unwrap_or(0);
        if rows < 0 || cols < 0 {
            return exc(pos, "row and col must be non-negative (RuntimeError)");
        }
        it.charge(pos, (rows as usize).saturating_mul(cols as usize))?;
        let (mut rs, mut cs) = (Vec::new(), Vec::new());
        for r in 0..rows {
            for c in 0..cols {
                if if upper { c - r >= offset } else { c - r <= offset } {
                    rs.push(Sc::I(r));
                    cs.push(Sc::I(c));
                }
            }
        }
        let len = rs.len();
        rs.extend(cs);
        let t = Tensor::new(DType::I64, vec![2, len], rs);
        return match a.dtype()? {
            Some(dt) if dt != DType::I64 => {
                Ok(Some(super::ops::elementwise(it, super::ops::Elem::Cast(dt), &[tv(t)], pos)?))
            }
            _ => Ok(Some(tv(t))),
        };
    }
    if f == "block_diag" {
        return block_diag(it, a).map(Some);
    }
    if f == "meshgrid" {
        return meshgrid(it, a).map(Some);
    }
    if !TAIL_FNS.contains(&f) {
        return Ok(None);
    }
    let input = a.need(0, "input")?;
    let t = tensor_of(&input, pos)?;
    it.charge(pos, t.numel())?;
    let rest = Args {
        pos: a.pos.get(1..).map(<[Value]>::to_vec).unwrap_or_default(),
        kw: a.kw.clone(),
        at: pos,
        name: a.name.clone(),
        used: a.used.clone(),
    };
    tensor_method(it, f, &input, &t, &rest).map(Some)
}

/// `torch.diag(input, diagonal)`: of a 1-d tensor, the square matrix with it on that diagonal
/// (zeros elsewhere); of a 2-d one, a copy of that diagonal.
fn diag(it: &mut Interp, t: &Tensor, a: &Args) -> R<Tensor> {
    let pos = a.at;
    let k = a.int(0, "diagonal")?.unwrap_or(0);
    let off = k.unsigned_abs() as usize;
    // The first cell of the diagonal: (row, column).
    let (r0, c0) = if k >= 0 { (0, off) } else { (off, 0) };
    Ok(match t.shape[..] {
        [n] => {
            let side = n.saturating_add(off);
            let shape = vec![side, side];
            checked_numel(&shape).or_else(|m| limit(pos, m))?;
            it.charge(pos, side * side)?;
            let mut out = filled(t.dtype, shape, Sc::I(0));
            for (i, &x) in t.data.iter().enumerate() {
                out.data[(r0 + i) * side + c0 + i] = x;
            }
            out
        }
        [rows, cols] => {
            let len = rows.saturating_sub(r0).min(cols.saturating_sub(c0));
            Tensor::new(t.dtype, vec![len], (0..len).map(|i| t.data[(r0 + i) * cols + c0 + i]).collect())
        }
        _ => return exc(pos, format!("diag(): Supports 1D or 2D tensors. Got {}D (RuntimeError)", t.shape.len())),
    })
}

/// `torch.block_diag(*tensors)`: each tensor (0-d as 1 x 1, 1-d as one row, 2-d) on the diagonal
/// of a zero matrix, in their promoted dtype (a 0-d tensor of the same kind as the others does not
/// widen it); none gives a 1 x 0 float32 matrix.
fn block_diag(it: &mut Interp, a: &Args) -> R<Value> {
    let pos = a.at;
    let (mut kinds, mut sides) = (Vec::new(), Vec::new());
    let (mut rows, mut cols) = (0usize, 0usize);
    for v in &a.pos {
        // Anything but a tensor is `tensor_of`'s error.
        let Value::Tensor(t) = v else { return tensor_of(v, pos).map(tv) };
        let t = t.borrow();
        let (r, c) = match t.shape[..] {
            [r, c] => (r, c),
            [c] => (1, c),
            [] => (1, 1),
            _ => return exc(pos, "block_diag: inputs must have 2 or fewer dimensions (RuntimeError)"),
        };
        (rows, cols) = (rows.saturating_add(r), cols.saturating_add(c));
        kinds.extend(super::vector::class_of(v));
        sides.push((r, c));
    }
    let (dt, shape) = if sides.is_empty() { (DType::F32, vec![1, 0]) } else { (result_type(&kinds), vec![rows, cols]) };
    checked_numel(&shape).or_else(|m| limit(pos, m))?;
    it.charge(pos, rows * cols)?;
    let mut out = filled(dt, shape, Sc::I(0));
    let (mut r0, mut c0) = (0, 0);
    for (v, &(r, c)) in a.pos.iter().zip(&sides) {
        let Value::Tensor(t) = v else { continue };
        let t = t.borrow();
        for i in 0..r {
            let at = (r0 + i) * cols + c0;
            for (o, &x) in out.data[at..at + c].iter_mut().zip(&t.data[i * c..]) {
                *o = cast(x, dt);
            }
        }
        (r0, c0) = (r0 + r, c0 + c);
    }
    Ok(tv(out))
}

/// `torch.meshgrid(*tensors, indexing=)`: 0- or 1-d tensors of one dtype (or one list or tuple of
/// them), each repeated along the grid's other dimensions; `indexing="xy"` swaps the first two.
/// The results are copies, where torch's are expanded views.
fn meshgrid(it: &mut Interp, a: &Args) -> R<Value> {
    let pos = a.at;
    let items = match &a.pos[..] {
        [v @ (Value::List(_) | Value::Tuple(_))] => list_of(it, v, pos)?,
        other => other.to_vec(),
    };
    let xy = match a.kw("indexing") {
        None | Some(Value::None) => false,
        Some(Value::Str(s)) if &*s == "ij" || &*s == "xy" => &*s == "xy",
        Some(_) => return exc(pos, "meshgrid: indexing must be \"xy\" or \"ij\" (RuntimeError)"),
    };
    let mut ts = Vec::new();
    for v in &items {
        let t = tensor_of(v, pos)?;
        if t.shape.len() > 1 || ts.first().is_some_and(|f: &Tensor| f.dtype != t.dtype) {
            return exc(pos, "meshgrid expects 0-d or 1-d tensors of one dtype (RuntimeError)");
        }
        ts.push(t);
    }
    if ts.is_empty() {
        return exc(pos, "meshgrid expects a non-empty TensorList (RuntimeError)");
    }
    let mut shape: Vec<usize> = ts.iter().map(Tensor::numel).collect();
    let swap = xy && ts.len() > 1;
    if swap {
        shape.swap(0, 1);
    }
    let numel = checked_numel(&shape).or_else(|m| limit(pos, m))?;
    it.charge(pos, numel.saturating_mul(ts.len()))?;
    let mut out = Vec::new();
    for (k, t) in ts.iter().enumerate() {
        // `t` runs along one grid dimension, and is broadcast along the others.
        let d = if swap && k < 2 { 1 - k } else { k };
        let mut own = vec![1; shape.len()];
        own[d] = shape[d];
        let data = (0..numel).map(|i| t.data[broadcast_index(i, &shape, &own)]).collect();
        out.push(tv(Tensor::new(t.dtype, shape.clone(), data)));
    }
    Ok(Value::Tuple(Rc::new(out)))
}

/// The most pieces `split` or `chunk` makes: each is a view (a few hundred bytes and a few
/// microseconds), and documents or heads are far fewer.
const MAX_PIECES: usize = 1 << 16;

/// `split(size or sizes, dim)` and `chunk(chunks, dim)`: the pieces along `dim`, each a basic
/// slice of the tensor, so a view of it as torch's are (a write through one is seen by the
/// tensor).
fn split(it: &mut Interp, m: &str, recv: &Value, t: &Tensor, a: &Args) -> R<Value> {
    let pos = a.at;
    // `t` is `recv`'s tensor: the pieces are views of `recv`.
    let (Value::Tensor(cell), false) = (recv, t.shape.is_empty()) else {
        return exc(pos, "split and chunk expect at least a 1-dimensional tensor (RuntimeError)");
    };
    let d = dim_of(a.int(1, "dim")?.unwrap_or(0), t.shape.len(), pos)?;
    let n = t.shape[d] as i64;
    let arg = a.need(0, "split_size_or_sections")?;
    let mut sizes = Vec::new();
    if matches!(arg, Value::List(_) | Value::Tuple(_)) && m == "split" {
        let mut left = n;
        for v in list_of(it, &arg, pos)? {
            let s = to_int(&v, pos)?;
            if s < 0 || s > left {
                left = -1;
                break;
            }
            left -= s;
            sizes.push(s);
        }
        if sizes.len() > MAX_PIECES {
            return limit(pos, format!("{m} into over {MAX_PIECES} pieces is not modelled"));
        }
        if left != 0 {
            return exc(
                pos,
                "split_with_sizes expects sizes of at least 0 that sum to the dimension's size (RuntimeError)",
            );
        }
    } else {
        let k = to_int(&arg, pos)?;
        // A chunk's size, or the split's; chunks of an empty dimension are `k` empty pieces.
        let size = if m == "chunk" && k > 0 && n > 0 {
            (n - 1) / k + 1
        } else if m == "chunk" && k > 0 {
            0
        } else {
            k
        };
        if size < 0 || (size == 0 && (n > 0 || m == "chunk" && k <= 0)) {
            return exc(pos, "split and chunk need sizes of at least 0 and chunks of at least 1 (RuntimeError)");
        }
        let count = if n == 0 { if m == "chunk" { k } else { 1 } } else { (n - 1) / size + 1 };
        if count > MAX_PIECES as i64 {
            return limit(pos, format!("{m} into over {MAX_PIECES} pieces is not modelled"));
        }
        for i in 0..count {
            sizes.push(size.min(n - i * size));
        }
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    for size in sizes {
        let index = on_dim(d, Value::Slice(Rc::new([Value::Int(start), Value::Int(start + size), Value::None])));
        pieces.push(super::views::getitem(it, cell, index, pos)?);
        start += size;
    }
    Ok(Value::Tuple(Rc::new(pieces)))
}

/// The in-place methods served here: computed out of place, then written through the tensor's views.
const IN_PLACE: [&str; 5] = ["scatter_", "scatter_reduce_", "index_put_", "index_fill_", "index_copy_"];

/// `narrow(dim, start, length)`: the view of `length` elements of `dim` from `start` (an int or a
/// 0-d integer tensor; a negative one counts from the end), with torch's checks.
fn narrow(it: &mut Interp, recv: &Value, t: &Tensor, a: &Args) -> R<Value> {
    let pos = a.at;
    let (Value::Tensor(cell), false) = (recv, t.shape.is_empty()) else {
        return exc(pos, "narrow() cannot be applied to a 0-dim tensor. (RuntimeError)");
    };
    let d = dim_of(to_int(&a.need(0, "dim")?, pos)?, t.shape.len(), pos)?;
    // An int, or a 0-d integer tensor; torch's error is a TypeError or a RuntimeError.
    let start = match a.need(1, "start")? {
        Value::Int(i) => i,
        v @ Value::Tensor(_) if is_basic_index(&v) => to_int(&v, pos)?,
        _ => return exc(pos, "narrow(): start must be an int or a 0-d integer tensor"),
    };
    let length = to_int(&a.need(2, "length")?, pos)?;
    let n = t.shape[d] as i64;
    if start < -n || start > n {
        return exc(pos, "narrow(): start out of range (IndexError)");
    }
    let start = if start < 0 { start + n } else { start };
    if length < 0 || length > n - start {
        return exc(pos, "narrow(): start + length exceeds the dimension's size, or length < 0 (RuntimeError)");
    }
    let index = on_dim(d, Value::Slice(Rc::new([Value::Int(start), Value::Int(start + length), Value::None])));
    super::views::getitem(it, cell, index, pos)
}

/// The index `[:, ..., :, last]` that takes `last` on dimension `d` and all of the others before it.
#[inline(never)]
fn on_dim(d: usize, last: Value) -> Value {
    let mut index = vec![Value::Slice(Rc::new([Value::None, Value::None, Value::None])); d];
    index.push(last);
    Value::Tuple(Rc::new(index))
}

/// `index_fill(dim, index, value)` and `index_copy(dim, index, source)` out of place (`fill`
/// says which), as the item assignment `t[:, ..., index] = value` they are, with torch's checks:
/// an int64 index of at most one dimension; `index_copy` takes no negative index, a `source` of
/// `t`'s dtype and shape but `index`'s length on `dim`, and refuses a repeated index (whose
/// result is torch's kernel order); `index_fill` takes a number or a 0-d tensor.
fn index_along(it: &mut Interp, fill: bool, t: &Tensor, a: &Args) -> R<Tensor> {
    let pos = a.at;
    let mut out = as_1d(t.clone());
    let d = dim_of(to_int(&a.need(0, "dim")?, pos)?, out.shape.len(), pos)?;
    let index = tensor_of(&a.need(1, "index")?, pos)?;
    let v = a.need(2, if fill { "value" } else { "source" })?;
    let len = out.shape[d];
    let (mut seen, mut repeated, mut outside) = (vec![false; len], false, None);
    for x in &index.data {
        let i = x.as_i64() + if fill && x.as_i64() < 0 { len as i64 } else { 0 };
        if !(0..len as i64).contains(&i) {
            outside = outside.or(Some(x.as_i64()));
        } else if !fill {
            repeated |= std::mem::replace(&mut seen[i as usize], true);
        }
    }
    let mut want = out.shape.clone();
    want[d] = index.numel();
    let ok = index.dtype == DType::I64
        && index.shape.len() < 2
        && match &v {
            Value::Tensor(s) if fill => s.borrow().shape.is_empty(),
            Value::Tensor(s) => {
                let s = s.borrow();
                s.dtype == t.dtype && as_1d(s.clone()).shape == want
            }
            _ => fill,
        };
    if !ok {
        // Torch's error differs in type from one check to another: this one names none.
        return exc(
            pos,
            "torch raises: index_fill and index_copy take an int64 index of at most 1 dimension, and a 0-d value or a source of the tensor's dtype and shape",
        );
    }
    if outside.is_some() {
        return exc(pos, "index_fill or index_copy: an index out of bounds for its dimension (IndexError)");
    }
    if repeated {
        return unsup(pos, "index_copy_() with a repeated index is not modelled");
    }
    // A 0-d tensor's value is checked against the dtype as a number is (torch's overflow error).
    if let (true, Value::Tensor(s)) = (fill, &v) {
        super::tensor_ops::held(t.dtype, s.borrow().data[0], pos)?;
    }
    setitem(it, &mut out, on_dim(d, tv(as_1d(index))), &v, pos)?;
    out.shape.clone_from(&t.shape);
    Ok(out)
}

/// `tensor.NAME(...)` for the methods served here; `None` for the others.
pub(super) fn method(it: &mut Interp, m: &str, recv: &Value, a: &Args) -> R<Option<Value>> {
    let known = TAIL_FNS.contains(&m) || matches!(m, "expand" | "expand_as" | "repeat") || IN_PLACE.contains(&m);
    let Value::Tensor(cell) = recv else { return Ok(None) };
    if !known {
        return Ok(None);
    }
    let in_place = IN_PLACE.contains(&m);
    if in_place {
        // Torch refuses an index or a source that shares memory with the written tensor (and
        // lets a disjoint slice of it through): refused here, as no stride is kept; a 0-d value
        // (`index_fill_`'s, read before the write) is let through.
        for v in a.pos.iter().chain(a.kw.iter().map(|(_, v)| v)) {
            super::views::overlap(it, cell, Some(&Value::None), v, a.at)?;
        }
    }
    let t = cell.borrow().clone();
    it.charge(a.at, t.numel())?;
    let out = tensor_method(it, m, recv, &t, a)?;
    if in_place {
        // Written as `x[...] = v` writes: through the tensor's base and every live view of it.
        super::views::write_in_place(it, cell, &out, a.at)?;
        return Ok(Some(recv.clone()));
    }
    Ok(Some(out))
}

fn tensor_method(it: &mut Interp, m: &str, recv: &Value, t: &Tensor, a: &Args) -> R<Value> {
    let pos = a.at;
    Ok(match m {
        "roll" => tv(roll(t, &a.need(0, "shifts")?, a.get(1, "dims"), pos)?),
        "narrow" => narrow(it, recv, t, a)?,
        "index_fill" | "index_fill_" | "index_copy" | "index_copy_" => {
            tv(index_along(it, m.starts_with("index_f"), t, a)?)
        }
        "flip" => tv(flip(t, a, pos)?),
        "diag" => tv(diag(it, t, a)?),
        "split" | "chunk" => split(it, m, recv, t, a)?,
        "expand" | "broadcast_to" | "repeat" | "expand_as" => {
            let sizes = if m == "expand_as" {
                tensor_of(&a.need(0, "other")?, pos)?.shape.iter().map(|&x| x as i64).collect()
            } else {
                sizes_of(a, if m == "repeat" { "repeats" } else { "size" })?
            };
            let e = if m == "repeat" { repeat(t, &sizes, pos)? } else { expand(t, &sizes, pos)? };
            it.charge(pos, e.numel())?;
            let e = tv(e);
            // An expansion is a view of the receiver, its elements repeated along new dimensions.
            if let (false, Value::Tensor(cell)) = (m == "repeat", recv) {
                let map = expand(&super::views::iota(&t.shape), &sizes, pos)?;
                super::views::register(it, cell, &e, Some(map.data.iter().map(|p| p.as_i64() as usize).collect()));
            }
            e
        }
        "sort" => {
            let (v, i) = sorted(t, a, 0)?;
            let i = match i {
                Some(i) => tv(i),
                None => unavailable(UNORDERED.to_string(), pos),
            };
            it.pairs.pair(tv(v), i)
        }
        "argsort" => match sorted(t, a, 0)?.1 {
            Some(i) => tv(i),
            None => return unsup(pos, UNORDERED),
        },
        "scatter" | "scatter_" => tv(scatter(t, a, false)?),
        "scatter_reduce" | "scatter_reduce_" => tv(scatter(t, a, true)?),
        "index_put" | "index_put_" => {
            if bool_kw(a, 2, "accumulate")? {
                return unsup(pos, "index_put_ with accumulate=True is not supported");
            }
            let items = match a.need(0, "indices")? {
                Value::List(l) => l.borrow().clone(),
                Value::Tuple(t) => t.to_vec(),
                _ => vec![Value::None],
            };
            let v = a.need(1, "values")?;
            if !matches!(v, Value::Tensor(_)) || items.iter().any(|x| !matches!(x, Value::Tensor(_))) {
                return exc(pos, "index_put_() takes a tuple of index tensors and a value tensor (TypeError)");
            }
            if items.is_empty() {
                return exc(pos, "index_put_(): no index (RuntimeError)");
            }
            let (mut out, idx) = (t.clone(), Value::Tuple(Rc::new(items)));
            put_dtype(t.dtype, &idx, &v, false, pos)?;
            setitem(it, &mut out, idx, &v, pos)?;
            tv(out)
        }
        "unique" => unique(t, a, 0, false)?,
        "unique_consecutive" => unique(t, a, 0, true)?,
        "nonzero" | "argwhere" => nonzero(t, m == "nonzero" && bool_kw(a, 99, "as_tuple")?),
        "gather" => {
            let index = index_tensor(&a.need(1, "index")?, "gather(): index", pos)?;
            tv(gather(t, to_int(&a.need(0, "dim")?, pos)?, &index, pos)?)
        }
        "index_select" => {
            let index = index_tensor(&a.need(1, "index")?, "index_select(): index", pos)?;
            if index.shape.len() > 1 {
                return exc(pos, "index_select(): Index is supposed to be a vector (IndexError)");
            }
            let t0 = as_1d(t.clone());
            let d = dim_of(to_int(&a.need(0, "dim")?, pos)?, t0.shape.len(), pos)?;
            if t.shape.is_empty() && index.numel() != 1 {
                return exc(pos, "index_select(): Index to scalar can have only 1 value (RuntimeError)");
            }
            let len = t0.shape[d];
            let picks = index.data.iter().map(|v| norm_index(v.as_i64(), len, pos)).collect::<R<Vec<_>>>()?;
            let r = lines(&t0, d, |line| Ok(picks.iter().map(|&k| line[k]).collect()), t0.dtype)?;
            if t.shape.is_empty() { tv(Tensor::new(t.dtype, Vec::new(), r.data)) } else { tv(r) }
        }
        "masked_select" => {
            let mask = tensor_of(&a.need(0, "mask")?, pos)?;
            if !mask.dtype.is_bool() {
                return exc(
                    pos,
                    format!("masked_select: expected BoolTensor for mask, got {} (RuntimeError)", mask.dtype),
                );
            }
            let shape = broadcast(&t.shape, &mask.shape).or_else(|e| exc(pos, e))?;
            let n = checked_numel(&shape).or_else(|e| limit(pos, e))?;
            let data: Vec<Sc> = (0..n)
                .filter(|&i| mask.data[broadcast_index(i, &shape, &mask.shape)].truthy())
                .map(|i| t.data[broadcast_index(i, &shape, &t.shape)])
                .collect();
            let k = data.len();
            tv(Tensor::new(t.dtype, vec![k], data))
        }
        "count_nonzero" => match a.get(0, "dim").filter(|v| !matches!(v, Value::None)) {
            None => tv(Tensor::new(
                DType::I64,
                Vec::new(),
                vec![Sc::I(t.data.iter().filter(|v| v.truthy()).count() as i64)],
            )),
            Some(d) => {
                let t0 = as_1d(t.clone());
                let d = dim_of(to_int(&d, pos)?, t0.shape.len(), pos)?;
                let r = lines(
                    &t0,
                    d,
                    |line| Ok(vec![Sc::I(line.iter().filter(|v| v.truthy()).count() as i64)]),
                    DType::I64,
                )?;
                let mut shape = t0.shape.clone();
                shape.remove(d);
                tv(Tensor::new(DType::I64, shape, r.data))
            }
        },
        "bincount" => tv(bincount(a, t)?),
        "outer" | "ger" => {
            // The products of every pair, as torch broadcasts a column by a row.
            let other = tensor_of(&a.need(0, "vec2")?, pos)?;
            for (v, which) in [(t, "self"), (&other, "vec2")] {
                if v.shape.len() != 1 {
                    let d = v.shape.len();
                    return exc(pos, format!("outer: Expected 1-D argument {which}, but got {d}-D (RuntimeError)"));
                }
            }
            let col = Tensor::new(t.dtype, vec![t.shape[0], 1], t.data.clone());
            let row = Tensor::new(other.dtype, vec![1, other.shape[0]], other.data);
            let kind = super::ops::Elem::Bin(super::tensor::Bin::Mul);
            super::ops::elementwise(it, kind, &[tv(col), tv(row)], pos)?
        }
        "kron" => kron(it, t, &tensor_of(&a.need(0, "other")?, pos)?, pos)?,
        "matmul" | "mm" | "bmm" | "mv" | "dot" => matmul(it, recv, &a.need(0, "other")?, m, pos)?,
        "cummax" | "cummin" => {
            let (values, indices) = cum_extreme(t, a, m == "cummax", m)?;
            it.pairs.pair(values, indices)
        }
        "topk" => {
            let (values, indices) = topk(t, a, 0)?;
            it.pairs.pair(values, indices)
        }
        "diff" => tv(diff(it, t, a, 0)?),
        "unbind" => {
            if t.shape.is_empty() {
                return super::tensor_ops::no_dims(0, pos);
            }
            let d = arg_dim(a, 0, "dim", 0, t.shape.len())?;
            // Each part is `t[:, ..., k]`, a view of the receiver.
            let cell = match recv {
                Value::Tensor(c) => c.clone(),
                _ => super::value::shared(t.clone()),
            };
            let mut parts = Vec::new();
            for k in 0..t.shape[d] as i64 {
                parts.push(super::views::getitem(it, &cell, on_dim(d, Value::Int(k)), pos)?);
            }
            Value::Tuple(Rc::new(parts))
        }
        _ => {
            let _ = recv;
            return unsup(pos, format!("the tensor method `.{m}()` is not supported"));
        }
    })
}

//! Vector values per position: a traced value with trailing dimensions, as `vmap` allows inside
//! a mask_mod. It comes from a lookup that leaves dimensions unindexed (`span = spans[doc[kv]]`,
//! `intervals[b]`) or from a traced value combined with a tensor (`q_idx - offsets`). It may be
//! indexed with Python integers and slices (`span[0]`, `pairs[:, 0]`), indexed again by a traced
//! value when it is still a pure lookup (`intervals[b][doc]`), unpacked, combined elementwise with
//! broadcasting, and reduced (`any`, `all`, `sum`, `amax`, `amin`, `prod`).
//!
//! Every element is an ordinary scalar node of the mask's graph, so the dense and the
//! interval-row evaluations cover vectors with no change.

use std::rc::Rc;

use super::ast::Pos;
use super::ops::{Elem, MAX_VECTOR, VectorHooks, elementwise, push};
use super::rt::Interp;
use super::rt::{R, exc, limit, unsup};
use super::tensor::{Bin, Class, DType, Sc, Tensor, broadcast, broadcast_index, cast, result_type};
use super::tensor_ops::{self, to_ix_pub};
use super::trace::{Op, Table};
use super::value::{TVec, Value};

fn wrap(shape: Vec<usize>, nodes: Vec<usize>, dtype: DType, origin: Option<(Rc<Tensor>, Vec<usize>)>) -> Value {
    if shape.is_empty() {
        return Value::Traced(nodes[0], dtype);
    }
    Value::TracedVec(Rc::new(TVec { shape, nodes, dtype, origin }))
}

/// `table[i0, ..., ik]` with fewer traced indices than the table has dimensions.
pub(super) fn lookup(it: &mut Interp, t: &Tensor, idx: Vec<usize>, pos: Pos) -> R<Value> {
    let free: Vec<usize> = t.shape[idx.len()..].to_vec();
    let n: usize = free.iter().product();
    if n > MAX_VECTOR {
        // Not built: only a further index can use it (`mask[b][h][q_idx][kv_idx]`).
        return Ok(Value::Lookup(Rc::new((Rc::new(t.clone()), idx))));
    }
    let table = Rc::new(Table::new(t.clone()));
    let mut consts: Vec<Option<usize>> = Vec::new();
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        let mut rem = i;
        let mut coords = vec![0usize; free.len()];
        for d in (0..free.len()).rev() {
            coords[d] = rem % free[d].max(1);
            rem /= free[d].max(1);
        }
        let mut full = idx.clone();
        for c in coords {
            if consts.len() <= c {
                consts.resize(c + 1, None);
            }
            let id = match consts[c] {
                Some(id) => id,
                None => {
                    let id = push(it, Op::Const(Sc::I(c as i64)), DType::I64, pos)?;
                    consts[c] = Some(id);
                    id
                }
            };
            full.push(id);
        }
        nodes.push(push(it, Op::Gather(table.clone(), full), t.dtype, pos)?);
    }
    Ok(wrap(free, nodes, t.dtype, Some((Rc::new(t.clone()), idx))))
}

/// The items of an index, each constant (a traced constant, as `h.new_zeros(h.shape)` makes, or
/// a 0-d tensor) of int64 or int32 as the integer it is: torch indexes by it as by that integer.
/// Other dtypes stay as they are (under `vmap` torch refuses an int8 or int16 index, and takes a
/// uint8 one as a mask).
fn index_items(it: &Interp, i: Value) -> Vec<Value> {
    let int = |d: DType| matches!(d, DType::I64 | DType::I32);
    let mut items = tensor_ops::items_of(i);
    for x in items.iter_mut() {
        let c = match x {
            Value::Traced(n, d) if int(*d) => match it.graph.nodes[*n].op {
                Op::Const(c) => c,
                _ => continue,
            },
            Value::Tensor(t) => {
                let t = t.borrow();
                if !t.shape.is_empty() || !int(t.dtype) {
                    continue;
                }
                t.data[0]
            }
            _ => continue,
        };
        *x = Value::Int(c.as_i64());
    }
    items
}

/// `lookup[i]` of a lookup not built ([`Value::Lookup`]): traced and integer indices extend it
/// (chained indexing, as `table[idx..., i]` in one lookup); anything else is refused with its size.
pub(super) fn index_lookup(it: &mut Interp, l: &(Rc<Tensor>, Vec<usize>), i: Value, pos: Pos) -> R<Value> {
    let items = index_items(it, i);
    if !items.iter().all(|x| matches!(x, Value::Traced(..) | Value::Int(_))) {
        return super::ops::too_large(l, pos);
    }
    grow_lookup(it, &l.0, &l.1, items, pos)
}

/// `table[idx..., items...]`: a lookup (`idx`, its indices' nodes) indexed further, as one lookup.
fn grow_lookup(it: &mut Interp, table: &Tensor, idx: &[usize], items: Vec<Value>, pos: Pos) -> R<Value> {
    let mut all: Vec<Value> = idx.iter().map(|&n| Value::Traced(n, it.graph.nodes[n].dtype)).collect();
    all.extend(items);
    tensor_ops::getitem(it, table, Value::Tuple(Rc::new(all)), pos)
}

/// `v[i]`.
pub(super) fn getitem(it: &mut Interp, v: &TVec, i: Value, pos: Pos) -> R<Value> {
    let items = index_items(it, i);
    // Integers alone keep a pure lookup one (`mask[b][0][q_idx]`), as traced values do.
    let ints = v.origin.is_some() && items.iter().all(|x| matches!(x, Value::Int(_)));
    if ints || items.iter().any(|x| matches!(x, Value::Traced(..) | Value::TracedVec(_))) {
        // A pure lookup indexed again by traced values: the lookup grows.
        let Some((table, idx)) = &v.origin else {
            return unsup(
                pos,
                "indexing a per-position vector by a traced value is supported only right after a lookup \
                 (write the lookup as one `table[i, j]`)",
            );
        };
        return grow_lookup(it, table, idx, items, pos);
    }
    // Integers, slices, None and Ellipsis select among the nodes as for a concrete tensor.
    let ix = items.iter().map(|x| to_ix_pub(x, pos)).collect::<R<Vec<_>>>()?;
    let (positions, shape) = tensor_ops::select_pub(&v.shape, ix, pos)?;
    let nodes: Vec<usize> = positions.iter().map(|&p| v.nodes[p]).collect();
    if shape.is_empty() {
        return Ok(Value::Traced(nodes[0], v.dtype));
    }
    // Plain integer selections of leading dims keep it a lookup only when nothing was sliced.
    Ok(wrap(shape, nodes, v.dtype, None))
}

/// `x.unsqueeze(dim)` of a traced scalar: a vector of one element (`dim` is 0 or -1).
pub(super) fn unsqueeze_scalar(x: &Value, dim: Option<i64>, pos: Pos) -> R<Value> {
    let Value::Traced(id, dtype) = x else { return unsup(pos, "`.unsqueeze()` of this value is not modelled") };
    match dim {
        Some(0 | -1) => Ok(wrap(vec![1], vec![*id], *dtype, None)),
        Some(d) => exc(pos, format!("dimension {d} out of range for unsqueeze of a 0-d value (IndexError)")),
        None => exc(pos, "unsqueeze() missing argument `dim` (TypeError)"),
    }
}

/// The rows along the first dimension (`a, b = span`, `for x in row`).
pub(super) fn iterate(it: &mut Interp, v: &TVec, pos: Pos) -> R<Vec<Value>> {
    (0..v.shape[0]).map(|k| getitem(it, v, Value::Int(k as i64), pos)).collect()
}

/// `.shape`, `.dtype`, `.ndim`.
pub(super) fn attr(v: &TVec, name: &str) -> Option<Value> {
    Some(match name {
        "shape" => Value::Tuple(Rc::new(v.shape.iter().map(|&d| Value::Int(d as i64)).collect())),
        "dtype" => Value::Dtype(v.dtype),
        "ndim" => Value::Int(v.shape.len() as i64),
        "device" => Value::Device,
        _ => return None,
    })
}

/// An operand's dtype and its class in torch's type promotion ([`super::tensor::result_type`]);
/// `None` for a value that is no operand.
pub(super) fn class_of(v: &Value) -> Option<(DType, Class)> {
    Some(match v {
        Value::Bool(_) => (DType::Bool, Class::Wrapped),
        Value::Int(_) => (DType::I64, Class::Wrapped),
        Value::Float(_) => (DType::F64, Class::Wrapped),
        Value::Traced(_, d) => (*d, Class::Zero),
        Value::TracedVec(t) => (t.dtype, Class::Dim),
        Value::Tensor(t) => {
            let t = t.borrow();
            (t.dtype, if t.shape.is_empty() { Class::Zero } else { Class::Dim })
        }
        _ => return None,
    })
}

/// An elementwise operation with at least one vector operand: broadcast over the per-position
/// shapes, in the dtype torch's promotion gives for the whole operation.
pub(super) fn elementwise_vec(it: &mut Interp, kind: Elem, vals: &[Value], pos: Pos) -> R<Value> {
    let mut shape: Vec<usize> = Vec::new();
    for v in vals {
        let s = match v {
            Value::TracedVec(t) => t.shape.clone(),
            Value::Tensor(t) => t.borrow().shape.clone(),
            _ => Vec::new(),
        };
        shape = broadcast(&shape, &s).or_else(|m| exc(pos, m))?;
    }
    let n: usize = shape.iter().product();
    if n > MAX_VECTOR {
        return limit(pos, format!("a per-position vector of {n} values (over {MAX_VECTOR})"));
    }
    // The compute dtype of the whole operation; operands are cast to it first so that the
    // elementwise recursion on scalars computes in the same dtype.
    let classes: Vec<(DType, Class)> = vals.iter().filter_map(class_of).collect();
    let promote_from = match kind {
        Elem::Bin(_) | Elem::Cmp(_) => Some((0, result_type(&classes))),
        Elem::Where => Some((1, result_type(&classes[1.min(classes.len())..]))),
        _ => None,
    };
    let mut out_nodes = Vec::with_capacity(n);
    let mut out_dtype = DType::Bool;
    for i in 0..n {
        let mut scalars = Vec::with_capacity(vals.len());
        for (k, v) in vals.iter().enumerate() {
            let mut s = match v {
                Value::TracedVec(t) => Value::Traced(t.nodes[broadcast_index(i, &shape, &t.shape)], t.dtype),
                Value::Tensor(t) => {
                    let t = t.borrow();
                    let x = t.data[broadcast_index(i, &shape, &t.shape)];
                    Value::tensor(Tensor::new(t.dtype, Vec::new(), vec![x]))
                }
                other => other.clone(),
            };
            if let Some((from, dt)) = promote_from
                && k >= from
            {
                s = match s {
                    Value::Traced(id, d) if d != dt => {
                        let c = push(it, Op::Cast(id), dt, pos)?;
                        Value::Traced(c, dt)
                    }
                    Value::Tensor(t) => {
                        let x = t.borrow().data[0];
                        Value::tensor(Tensor::new(dt, Vec::new(), vec![cast(x, dt)]))
                    }
                    other => other,
                };
            }
            scalars.push(s);
        }
        match elementwise(it, kind, &scalars, pos)? {
            Value::Traced(id, d) => {
                out_dtype = d;
                out_nodes.push(id);
            }
            Value::Tensor(t) => {
                let t = t.borrow();
                out_dtype = t.dtype;
                out_nodes.push(push(it, Op::Const(t.data[0]), t.dtype, pos)?);
            }
            other => return exc(pos, format!("an elementwise result of type {}", other.type_name())),
        }
    }
    if n == 0 {
        return unsup(pos, "an empty per-position vector is not supported");
    }
    Ok(wrap(shape, out_nodes, out_dtype, None))
}

/// `any`, `all`, `sum`, `amax`, `amin`, `max`, `min`, `prod` of a vector (all elements, or along
/// the last dimension of a 1-d vector).
pub(super) fn reduce(it: &mut Interp, kind: &str, v: &TVec, dim: Option<i64>, pos: Pos) -> R<Value> {
    if let Some(d) = dim {
        let nd = v.shape.len() as i64;
        if !(-nd..nd).contains(&d) {
            return exc(
                pos,
                format!(
                    "Dimension out of range (expected to be in range of [{}, {}], but got {d}) (IndexError)",
                    -nd,
                    nd - 1
                ),
            );
        }
        if nd != 1 {
            return unsup(pos, "a reduction along one dimension of a per-position vector of over one dimension");
        }
    }
    let (op, out) = match kind {
        "any" => (Elem::LogicalOr, DType::Bool),
        "all" => (Elem::LogicalAnd, DType::Bool),
        "sum" => (Elem::Bin(Bin::Add), if v.dtype.is_float() { v.dtype } else { DType::I64 }),
        "prod" => (Elem::Bin(Bin::Mul), if v.dtype.is_float() { v.dtype } else { DType::I64 }),
        "amax" | "max" => (Elem::Bin(Bin::Max), v.dtype),
        "amin" | "min" => (Elem::Bin(Bin::Min), v.dtype),
        _ => return unsup(pos, format!("`{kind}` of a per-position vector is not supported")),
    };
    if matches!(kind, "amax" | "max" | "amin" | "min") && v.dtype.is_bool() {
        return unsup(pos, format!("`{kind}` of a bool per-position vector is not supported"));
    }
    let mut acc = Value::Traced(v.nodes[0], v.dtype);
    acc = elementwise(it, Elem::Cast(out), &[acc], pos)?;
    for &n in &v.nodes[1..] {
        let x = elementwise(it, Elem::Cast(out), &[Value::Traced(n, v.dtype)], pos)?;
        acc = elementwise(it, op, &[acc, x], pos)?;
    }
    Ok(acc)
}

/// A tensor method called on a vector; `None` when it is not one served here.
pub(super) fn method(it: &mut Interp, m: &str, v: &TVec, dim: Option<i64>, pos: Pos) -> R<Option<Value>> {
    Ok(match m {
        "any" | "all" | "sum" | "prod" | "amax" | "amin" => Some(reduce(it, m, v, dim, pos)?),
        "max" | "min" if dim.is_none() => Some(reduce(it, m, v, None, pos)?),
        "unbind" => Some(Value::Tuple(Rc::new(iterate(it, v, pos)?))),
        "unsqueeze" => {
            let Some(d) = dim else { return exc(pos, "unsqueeze() missing argument `dim` (TypeError)") };
            let nd = v.shape.len() as i64 + 1;
            let k = if d < 0 { d + nd } else { d };
            if !(0..nd).contains(&k) {
                return exc(
                    pos,
                    format!("dimension {d} out of range for unsqueeze of {} dimensions (IndexError)", nd - 1),
                );
            }
            let mut shape = v.shape.clone();
            shape.insert(k as usize, 1);
            Some(wrap(shape, v.nodes.clone(), v.dtype, None))
        }
        "dim" => Some(Value::Int(v.shape.len() as i64)),
        "numel" => Some(Value::Int(v.nodes.len() as i64)),
        "size" => Some(match dim {
            Some(d) => {
                let nd = v.shape.len() as i64;
                let k = if d < 0 { d + nd } else { d };
                if !(0..nd).contains(&k) {
                    return exc(pos, "Dimension out of range (IndexError)");
                }
                Value::Int(v.shape[k as usize] as i64)
            }
            None => attr(v, "shape").unwrap_or(Value::None),
        }),
        "item" | "tolist" => {
            return exc(pos, format!("`.{m}()` of a value that depends on the indices (vmap refuses this too)"));
        }
        _ => None,
    })
}

impl VectorHooks for Interp {
    fn elementwise_vec(&mut self, kind: Elem, vals: &[Value], pos: Pos) -> R<Value> {
        elementwise_vec(self, kind, vals, pos)
    }
    fn vector_lookup(&mut self, t: &Tensor, idx: Vec<usize>, pos: Pos) -> R<Value> {
        lookup(self, t, idx, pos)
    }
}

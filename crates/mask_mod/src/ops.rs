//! Operators on values: Python semantics for Python numbers, torch semantics (promotion,
//! broadcasting, kernels) for tensors, and graph nodes for traced per-position values.

use std::rc::Rc;

use super::ast::{BinOp, Pos, UnOp};
use super::rt::{
    Interp, MAX_ITEMS, MAX_VALUE_DEPTH, R, exc, int_float_cmp, kernel_of, limit, py_eq, unavailable_msg, unsup,
};
use super::tensor::{
    Bin, Class, Cmp, DType, OVERFLOW, Sc, Tensor, Un, apply_bin, apply_cmp, apply_un, bin_dtype, broadcast,
    broadcast_index, cast, checked_numel, result_type, un_dtype,
};
use super::trace::Op;
use super::value::Value;

/// An elementwise tensor operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Elem {
    Bin(Bin),
    Cmp(Cmp),
    Un(Un),
    /// `where(cond, a, b)`.
    Where,
    Cast(DType),
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    LogicalNot,
}

/// An operand of an elementwise operation.
enum Opd {
    Py(Sc, DType),
    Ten(Tensor),
    Tr(usize, DType),
}

impl Opd {
    fn dtype(&self) -> DType {
        match self {
            Opd::Py(_, d) | Opd::Tr(_, d) => *d,
            Opd::Ten(t) => t.dtype,
        }
    }
    fn class(&self) -> Class {
        match self {
            Opd::Py(..) => Class::Wrapped,
            Opd::Tr(..) => Class::Zero,
            Opd::Ten(t) if t.shape.is_empty() => Class::Zero,
            Opd::Ten(_) => Class::Dim,
        }
    }
}

fn opd(v: &Value, pos: Pos) -> R<Opd> {
    Ok(match v {
        Value::Bool(b) => Opd::Py(Sc::I(i64::from(*b)), DType::Bool),
        Value::Int(i) => Opd::Py(Sc::I(*i), DType::I64),
        Value::Float(f) => Opd::Py(Sc::F(*f), DType::F64),
        Value::Tensor(t) => Opd::Ten(t.borrow().clone()),
        Value::Traced(n, d) => Opd::Tr(*n, *d),
        Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
        Value::List(_) | Value::Tuple(_) => {
            return exc(pos, format!("a {} where a tensor or number is expected (TypeError)", v.type_name()));
        }
        other => return exc(pos, format!("a {} where a tensor or number is expected (TypeError)", other.type_name())),
    })
}

/// Torch's error for a subtraction with a bool operand (a Python bool too), whatever the other is.
pub(super) const SUB_BOOL: &str =
    "Subtraction, the `-` operator, with a bool tensor is not supported; use `~` or `^` (NotImplementedError)";

/// The dtype an elementwise operation computes in, and the dtype it returns.
fn dtypes(kind: Elem, opds: &[Opd]) -> Result<(DType, DType), String> {
    let cls: Vec<(DType, Class)> = opds.iter().map(|o| (o.dtype(), o.class())).collect();
    Ok(match kind {
        // torch checks subtraction's operands before promoting them: a bool one (a Python bool
        // too) is refused whatever the other is.
        Elem::Bin(Bin::Sub) if cls.iter().any(|c| c.0.is_bool()) => return Err(SUB_BOOL.into()),
        Elem::Bin(op) => {
            let dt = result_type(&cls);
            // Torch computes a tensor's negative exponents of integers, and refuses a number's, as
            // it refuses one out of the integer dtype's range (where a base is wrapped).
            if op == Bin::Pow
                && !dt.is_float()
                && let Opd::Py(Sc::I(y), _) = opds[1]
            {
                if y < 0 {
                    return Err("Integers to negative integer powers are not allowed (RuntimeError)".into());
                }
                if !dt.holds(Sc::I(y)) {
                    return Err(OVERFLOW.into());
                }
            }
            (dt, bin_dtype(op, dt)?)
        }
        Elem::Cmp(_) => (result_type(&cls), DType::Bool),
        Elem::Un(op) => {
            let dt = cls[0].0;
            (dt, un_dtype(op, dt)?)
        }
        Elem::Where => {
            if cls[0].0 != DType::Bool {
                return Err(format!("where expected a boolean condition, got {}", cls[0].0));
            }
            let dt = result_type(&cls[1..]);
            // A Python number is written into the promoted dtype: torch's error where it cannot
            // hold it (`where(m, uint8, 300)`).
            if opds[1..].iter().any(|o| matches!(o, Opd::Py(v, _) if !dt.holds(*v))) {
                return Err(OVERFLOW.into());
            }
            (dt, dt)
        }
        Elem::Cast(d) => (cls[0].0, d),
        // The logical functions take tensors, not numbers.
        Elem::LogicalAnd | Elem::LogicalOr | Elem::LogicalXor if opds.iter().any(|o| matches!(o, Opd::Py(..))) => {
            return Err("logical_and/or/xor(): argument 'other' must be Tensor, not a number (TypeError)".into());
        }
        Elem::LogicalAnd | Elem::LogicalOr | Elem::LogicalXor | Elem::LogicalNot => (DType::Bool, DType::Bool),
    })
}

/// One element of the operation, operands already cast to the compute dtype.
fn kernel(kind: Elem, dt: DType, out: DType, v: &[Sc]) -> Result<Sc, &'static str> {
    Ok(match kind {
        Elem::Bin(op) => apply_bin(op, dt, v[0], v[1])?,
        Elem::Cmp(op) => Sc::I(i64::from(apply_cmp(op, v[0], v[1]))),
        Elem::Un(op) => apply_un(op, out, v[0]),
        Elem::Where => {
            if v[0].truthy() {
                v[1]
            } else {
                v[2]
            }
        }
        Elem::Cast(d) => cast(v[0], d),
        Elem::LogicalAnd => Sc::I(i64::from(v[0].truthy() && v[1].truthy())),
        Elem::LogicalOr => Sc::I(i64::from(v[0].truthy() || v[1].truthy())),
        Elem::LogicalXor => Sc::I(i64::from(v[0].truthy() != v[1].truthy())),
        Elem::LogicalNot => Sc::I(i64::from(!v[0].truthy())),
    })
}

/// The dtype operand `i` is cast to before the kernel.
fn operand_dtype(kind: Elem, i: usize, dt: DType, own: DType) -> DType {
    match kind {
        Elem::Where if i == 0 => DType::Bool,
        // True division of integers casts each operand to float32 (a Python int is not wrapped
        // into the tensor's dtype first).
        Elem::Bin(Bin::Div) if !dt.is_float() => DType::F32,
        Elem::Cast(_) => own,
        Elem::LogicalAnd | Elem::LogicalOr | Elem::LogicalXor | Elem::LogicalNot => DType::Bool,
        _ => dt,
    }
}

/// What the per-position vectors (`vector`, above the kernels) do when a kernel meets one: the
/// kernels call up through this trait, implemented for [`Interp`] in `vector`.
pub(super) trait VectorHooks {
    /// An elementwise operation with a vector among its operands.
    fn elementwise_vec(&mut self, kind: Elem, vals: &[Value], pos: Pos) -> R<Value>;
    /// A lookup in `t` that leaves dimensions: a vector per position.
    fn vector_lookup(&mut self, t: &Tensor, idx: Vec<usize>, pos: Pos) -> R<Value>;
}

/// Most elements of one vector value (each is a node of the graph).
pub(super) const MAX_VECTOR: usize = 4096;

/// A use of a lookup too large to build other than a further index: refused with its size.
pub(super) fn too_large<T>(l: &(Rc<Tensor>, Vec<usize>), pos: Pos) -> R<T> {
    let n: usize = l.0.shape[l.1.len()..].iter().product();
    limit(
        pos,
        format!("a lookup leaving a vector of {n} values per position (over {MAX_VECTOR}): index more dimensions"),
    )
}

/// Applies an elementwise operation to values (at least one a tensor or traced value).
pub(super) fn elementwise(it: &mut Interp, kind: Elem, vals: &[Value], pos: Pos) -> R<Value> {
    // Every operator on a tensor comes here: its operands' elements are read (but for those a
    // concrete `where` or cast only moves: torch.empty's garbage stays garbage), after the shapes,
    // which are torch's error whatever the elements hold.
    let concrete = !vals.iter().any(|v| matches!(v, Value::Traced(..) | Value::TracedVec(_)));
    if !concrete {
        for v in vals {
            super::unset::check(it, v, pos)?;
        }
    }
    if let Some(Value::Lookup(l)) = vals.iter().find(|v| matches!(v, Value::Lookup(_))) {
        return too_large(l, pos);
    }
    let any_traced = vals.iter().any(|v| matches!(v, Value::Traced(..)));
    if vals.iter().any(|v| {
        matches!(v, Value::TracedVec(_))
            || (any_traced && matches!(v, Value::Tensor(t) if !t.borrow().shape.is_empty()))
    }) {
        return it.elementwise_vec(kind, vals, pos);
    }
    let opds: Vec<Opd> = vals.iter().map(|v| opd(v, pos)).collect::<R<_>>()?;
    let (dt, out) = match dtypes(kind, &opds) {
        Ok(x) => x,
        Err(m) => return exc(pos, m),
    };
    if opds.iter().any(|o| matches!(o, Opd::Tr(..))) {
        return traced(it, kind, &opds, dt, out, pos);
    }
    // Concrete: broadcast and compute.
    let shapes: Vec<Vec<usize>> = opds
        .iter()
        .map(|o| match o {
            Opd::Ten(t) => t.shape.clone(),
            _ => Vec::new(),
        })
        .collect();
    let mut shape: Vec<usize> = Vec::new();
    for s in &shapes {
        shape = broadcast(&shape, s).or_else(|m| exc(pos, m))?;
    }
    for (i, v) in vals.iter().enumerate() {
        if !matches!((kind, i), (Elem::Cast(_), _) | (Elem::Where, 1..)) {
            super::unset::check(it, v, pos)?;
        }
    }
    let n = checked_numel(&shape).or_else(|m| limit(pos, m))?;
    it.charge(pos, n * opds.len().max(1))?;
    let mut data = Vec::with_capacity(n);
    let mut buf = [Sc::I(0); 3];
    for i in 0..n {
        for (k, o) in opds.iter().enumerate() {
            let od = operand_dtype(kind, k, dt, o.dtype());
            buf[k] = match o {
                Opd::Py(v, _) => cast(*v, od),
                Opd::Ten(t) => cast(t.data[broadcast_index(i, &shape, &t.shape)], od),
                Opd::Tr(..) => unreachable!("no traced operand here"),
            };
        }
        match kernel(kind, dt, out, &buf[..opds.len()]) {
            Ok(v) => data.push(v),
            Err(m) => return exc(pos, m),
        }
    }
    Ok(Value::tensor(Tensor::new(out, shape, data)))
}

fn traced(it: &mut Interp, kind: Elem, opds: &[Opd], dt: DType, out: DType, pos: Pos) -> R<Value> {
    let mut ids = Vec::with_capacity(opds.len());
    for (k, o) in opds.iter().enumerate() {
        let od = operand_dtype(kind, k, dt, o.dtype());
        let id = match o {
            Opd::Py(v, _) => push(it, Op::Const(cast(*v, od)), od, pos)?,
            Opd::Ten(t) if t.shape.is_empty() => push(it, Op::Const(cast(t.data[0], od)), od, pos)?,
            Opd::Ten(t) => {
                return unsup(
                    pos,
                    format!(
                        "an index tensor combined with a tensor of shape {:?} gives a vector per position, which \
                         hasseflow does not model (index the tensor by q_idx or kv_idx instead)",
                        t.shape
                    ),
                );
            }
            Opd::Tr(n, d) => {
                if *d == od {
                    *n
                } else {
                    push(it, Op::Cast(*n), od, pos)?
                }
            }
        };
        ids.push(id);
    }
    let op = match kind {
        Elem::Bin(b) => Op::Bin(b, ids[0], ids[1]),
        Elem::Cmp(c) => Op::Cmp(c, ids[0], ids[1]),
        Elem::Un(u) => Op::Un(u, ids[0]),
        Elem::Where => Op::Where(ids[0], ids[1], ids[2]),
        Elem::Cast(_) => Op::Cast(ids[0]),
        Elem::LogicalAnd => Op::Bin(Bin::And, ids[0], ids[1]),
        Elem::LogicalOr => Op::Bin(Bin::Or, ids[0], ids[1]),
        Elem::LogicalXor => Op::Bin(Bin::Xor, ids[0], ids[1]),
        Elem::LogicalNot => Op::Un(Un::Invert, ids[0]),
    };
    if let (Op::Cast(a), true) = (&op, dt == out) {
        return Ok(Value::Traced(*a, out));
    }
    let id = push(it, op, out, pos)?;
    Ok(Value::Traced(id, out))
}

pub(super) fn push(it: &mut Interp, op: Op, dtype: DType, pos: Pos) -> R<usize> {
    let pos = it.user_call.unwrap_or(pos);
    it.graph.push(op, dtype, pos).or_else(|m| limit(pos, m))
}

fn is_tensorish(v: &Value) -> bool {
    matches!(v, Value::Tensor(_) | Value::Traced(..) | Value::TracedVec(_))
}

fn overflow<T>(pos: Pos) -> R<T> {
    unsup(pos, "an integer result over 64 bits (hasseflow models Python integers up to 64 bits)")
}

/// `a <op> b`.
pub(super) fn binary(it: &mut Interp, op: BinOp, a: Value, b: Value, pos: Pos) -> R<Value> {
    if let Some(Value::Lookup(l)) = [&a, &b].into_iter().find(|v| matches!(v, Value::Lookup(_))) {
        return too_large(l, pos);
    }
    // An `IntEnum` member is an int in arithmetic.
    let (a, b) = (a.plain(), b.plain());
    if let Value::Unavailable(u) = &a {
        return unsup(pos, unavailable_msg(u));
    }
    if let Value::Unavailable(u) = &b {
        return unsup(pos, unavailable_msg(u));
    }
    if is_tensorish(&a) || is_tensorish(&b) {
        // `@` of tensors is the interpreter's (`tensor_tail::matmul`), above this module: what
        // comes here is the in-place `@=`.
        let Some(k) = kernel_of(op) else {
            return unsup(pos, "the in-place matrix multiplication `@=` is not modelled");
        };
        return elementwise(it, Elem::Bin(k), &[a, b], pos);
    }
    if op == BinOp::BitOr && (is_type(&a) || is_type(&b)) {
        // `int | None`, `X | Y`: a union of types, as annotations write them. Kept inert.
        return Ok(Value::Unavailable(std::rc::Rc::new(super::value::Unavailable {
            what: format!(
                "line {}, column {}: a union of types (`X | Y`), kept as an inert value: using it is not modelled",
                pos.line, pos.col
            ),
            aliases: Vec::new(),
        })));
    }
    if matches!(op, BinOp::BitOr | BinOp::BitAnd | BinOp::BitXor | BinOp::Sub)
        && (it.sets.is_set(&a) || it.sets.is_set(&b))
    {
        return unsup(pos, format!("the set operator `{}` is not modelled", op.symbol()));
    }
    match (&a, &b) {
        (Value::Str(x), Value::Str(y)) if op == BinOp::Add => {
            if x.len() + y.len() > MAX_ITEMS {
                return limit(pos, "a string over the size limit");
            }
            it.alloc(pos, x.len() + y.len())?;
            return Ok(Value::Str(format!("{x}{y}").into()));
        }
        (Value::List(x), Value::List(y)) if op == BinOp::Add => {
            it.alloc_items(pos, x.borrow().len() + y.borrow().len())?;
            let mut v = x.borrow().clone();
            v.extend(y.borrow().iter().cloned());
            if v.len() > MAX_ITEMS {
                return limit(pos, "a list over the item limit");
            }
            return Ok(Value::List(super::value::shared(v)));
        }
        (Value::Tuple(x), Value::Tuple(y)) if op == BinOp::Add => {
            it.alloc_items(pos, x.len() + y.len())?;
            let mut v = x.as_ref().clone();
            v.extend(y.iter().cloned());
            if v.len() > MAX_ITEMS {
                return limit(pos, "a tuple over the item limit");
            }
            return Ok(Value::Tuple(Rc::new(v)));
        }
        (Value::List(_) | Value::Tuple(_) | Value::Str(_), Value::Int(_) | Value::Bool(_))
        | (Value::Int(_) | Value::Bool(_), Value::List(_) | Value::Tuple(_) | Value::Str(_))
            if op == BinOp::Mul =>
        {
            let (seq, k) = if matches!(a, Value::Int(_) | Value::Bool(_)) { (&b, &a) } else { (&a, &b) };
            let k = match k {
                Value::Int(i) => (*i).max(0) as usize,
                Value::Bool(t) => usize::from(*t),
                _ => 0,
            };
            let len = match seq {
                Value::List(l) => l.borrow().len(),
                Value::Tuple(t) => t.len(),
                Value::Str(s) => s.len(),
                _ => 0,
            };
            if len.saturating_mul(k) > MAX_ITEMS {
                return limit(pos, format!("a sequence of {len} items repeated {k} times is over the item limit"));
            }
            let slot = if matches!(seq, Value::Str(_)) { 1 } else { std::mem::size_of::<Value>() };
            it.alloc(pos, len * k * slot)?;
            return Ok(match seq {
                Value::List(l) => Value::List(super::value::shared((0..k).flat_map(|_| l.borrow().clone()).collect())),
                Value::Tuple(t) => Value::Tuple(Rc::new((0..k).flat_map(|_| t.iter().cloned()).collect())),
                Value::Str(s) => Value::Str(s.repeat(k).into()),
                _ => Value::None,
            });
        }
        _ => {}
    }
    py_arith(op, &a, &b, pos)
}

/// A type as a value: a builtin type or typing construct, or a class of the text.
fn is_type(v: &Value) -> bool {
    match v {
        Value::Class(_) => true,
        Value::Native(n) => {
            n.recv.is_none()
                && (n.name.starts_with("typing.")
                    || super::types::exception_parent(&n.name).is_some()
                    || matches!(
                        &*n.name,
                        "builtins.int"
                            | "builtins.float"
                            | "builtins.str"
                            | "builtins.bool"
                            | "builtins.list"
                            | "builtins.tuple"
                            | "builtins.dict"
                            | "builtins.set"
                            | "builtins.frozenset"
                            | "builtins.type"
                            | "builtins.NoneType"
                            | "builtins.range"
                            | "builtins.slice"
                            | "torch.Tensor"
                            | "torch.dtype"
                            | "torch.device"
                            | "torch.Size"
                            | "torch.Generator"
                            | "enum.Enum"
                            | "enum.IntEnum"
                    ))
        }
        _ => false,
    }
}

fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

fn as_num(v: &Value) -> Option<f64> {
    match v {
        Value::Float(f) => Some(*f),
        _ => as_int(v).map(|i| i as f64),
    }
}

fn py_arith(op: BinOp, a: &Value, b: &Value, pos: Pos) -> R<Value> {
    let type_err = || {
        exc(
            pos,
            format!(
                "unsupported operand types for {}: {} and {} (TypeError)",
                op.symbol(),
                a.type_name(),
                b.type_name()
            ),
        )
    };
    if op == BinOp::Mod && matches!(a, Value::Str(_)) {
        // printf-style formatting: Python defines it for any right operand.
        return unsup(pos, "`%` formatting of a string is not modelled");
    }
    if let (Value::Bool(x), Value::Bool(y)) = (a, b) {
        match op {
            BinOp::BitAnd => return Ok(Value::Bool(*x && *y)),
            BinOp::BitOr => return Ok(Value::Bool(*x || *y)),
            BinOp::BitXor => return Ok(Value::Bool(x != y)),
            _ => {}
        }
    }
    if let (Some(x), Some(y)) = (as_int(a), as_int(b)) {
        let v = match op {
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            BinOp::Div => {
                if y == 0 {
                    return exc(pos, "division by zero (ZeroDivisionError)");
                }
                return Ok(Value::Float(x as f64 / y as f64));
            }
            BinOp::FloorDiv | BinOp::Mod => {
                if y == 0 {
                    return exc(pos, "integer division or modulo by zero (ZeroDivisionError)");
                }
                if x == i64::MIN && y == -1 {
                    // Python's `-2**63 // -1` is 2**63; its `%` is 0.
                    return if op == BinOp::Mod { Ok(Value::Int(0)) } else { overflow(pos) };
                }
                let r =
                    apply_bin(if op == BinOp::Mod { Bin::Rem } else { Bin::FloorDiv }, DType::I64, Sc::I(x), Sc::I(y));
                r.ok().map(|s| s.as_i64())
            }
            BinOp::Pow => {
                if y < 0 {
                    if x == 0 {
                        return exc(pos, "0 cannot be raised to a negative power (ZeroDivisionError)");
                    }
                    return Ok(Value::Float((x as f64).powf(y as f64)));
                }
                let mut r: i64 = 1;
                for _ in 0..y.min(64) {
                    r = match r.checked_mul(x) {
                        Some(r) => r,
                        None => return overflow(pos),
                    };
                    if r == 0 || r == 1 {
                        break;
                    }
                }
                if y > 64 && x.abs() > 1 {
                    return overflow(pos);
                }
                if x == -1 {
                    r = if y % 2 == 0 { 1 } else { -1 };
                }
                Some(r)
            }
            BinOp::BitAnd => Some(x & y),
            BinOp::BitOr => Some(x | y),
            BinOp::BitXor => Some(x ^ y),
            BinOp::Shl => {
                if y < 0 {
                    return exc(pos, "negative shift count (ValueError)");
                }
                if x == 0 {
                    Some(0)
                } else if y >= 63 {
                    None
                } else {
                    let r = x << y;
                    if r >> y == x { Some(r) } else { None }
                }
            }
            BinOp::Shr => {
                if y < 0 {
                    return exc(pos, "negative shift count (ValueError)");
                }
                Some(if y >= 64 { if x < 0 { -1 } else { 0 } } else { x >> y })
            }
            BinOp::MatMul => return type_err(),
        };
        return match v {
            Some(v) => Ok(Value::Int(v)),
            None => overflow(pos),
        };
    }
    let (Some(x), Some(y)) = (as_num(a), as_num(b)) else { return type_err() };
    let v = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0.0 {
                return exc(pos, "float division by zero (ZeroDivisionError)");
            }
            x / y
        }
        BinOp::FloorDiv => {
            if y == 0.0 {
                return exc(pos, "float floor division by zero (ZeroDivisionError)");
            }
            (x / y).floor()
        }
        BinOp::Mod => {
            if y == 0.0 {
                return exc(pos, "float modulo by zero (ZeroDivisionError)");
            }
            match apply_bin(Bin::Rem, DType::F64, Sc::F(x), Sc::F(y)) {
                Ok(s) => s.as_f64(),
                Err(m) => return exc(pos, m),
            }
        }
        BinOp::Pow => {
            if x < 0.0 && y.fract() != 0.0 {
                return unsup(pos, "a negative number to a fractional power (a complex result)");
            }
            if x == 0.0 && y < 0.0 {
                return exc(pos, "0.0 cannot be raised to a negative power (ZeroDivisionError)");
            }
            x.powf(y)
        }
        _ => return type_err(),
    };
    Ok(Value::Float(v))
}

/// `<op> a` for `-`, `+`, `~`.
pub(super) fn unary(it: &mut Interp, op: UnOp, a: Value, pos: Pos) -> R<Value> {
    if let Value::Lookup(l) = &a {
        return too_large(l, pos);
    }
    let a = a.plain();
    if let Value::Unavailable(u) = &a {
        return unsup(pos, unavailable_msg(u));
    }
    if is_tensorish(&a) {
        return match op {
            UnOp::Pos => Ok(a),
            UnOp::Neg => elementwise(it, Elem::Un(Un::Neg), &[a], pos),
            UnOp::Invert => elementwise(it, Elem::Un(Un::Invert), &[a], pos),
            UnOp::Not => unreachable!("`not` is handled by the interpreter"),
        };
    }
    match (op, &a) {
        (UnOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
        (UnOp::Pos, Value::Float(f)) => Ok(Value::Float(*f)),
        (UnOp::Neg, _) => match as_int(&a).map(i64::checked_neg) {
            Some(Some(v)) => Ok(Value::Int(v)),
            Some(None) => overflow(pos),
            None => exc(pos, format!("bad operand type for unary -: {} (TypeError)", a.type_name())),
        },
        (UnOp::Pos, _) => match as_int(&a) {
            Some(v) => Ok(Value::Int(v)),
            None => exc(pos, format!("bad operand type for unary +: {} (TypeError)", a.type_name())),
        },
        (UnOp::Invert, _) => match as_int(&a) {
            Some(v) => Ok(Value::Int(!v)),
            None => exc(pos, format!("bad operand type for unary ~: {} (TypeError)", a.type_name())),
        },
        (UnOp::Not, _) => unreachable!("`not` is handled by the interpreter"),
    }
}

/// `a <cmp> b` for the six ordering comparisons.
pub(super) fn compare(it: &mut Interp, op: Cmp, a: &Value, b: &Value, pos: Pos) -> R<Value> {
    let (a, b) = (&a.clone().plain(), &b.clone().plain());
    if let (Value::Instance(x), Value::Instance(y)) = (a, b)
        && Rc::ptr_eq(x, y)
        && matches!(op, Cmp::Eq | Cmp::Ne)
    {
        return Ok(Value::Bool(op == Cmp::Eq));
    }
    if a.is_member() || b.is_member() {
        // Members compare by identity; an `Enum` has no order.
        return match op {
            Cmp::Eq | Cmp::Ne => Ok(Value::Bool((op == Cmp::Eq) == py_eq(a, b))),
            _ => exc(
                pos,
                format!("`{op:?}` is not supported between {} and {} (TypeError)", a.type_name(), b.type_name()),
            ),
        };
    }
    if let Some(Value::Instance(i)) = [a, b].into_iter().find(|v| matches!(v, Value::Instance(_))) {
        return unsup(pos, format!("comparing objects of the class `{}` is not modelled", i.class.name));
    }
    if let Value::Unavailable(u) = a {
        return unsup(pos, unavailable_msg(u));
    }
    if let Value::Unavailable(u) = b {
        return unsup(pos, unavailable_msg(u));
    }
    if is_tensorish(a) || is_tensorish(b) {
        if matches!(a, Value::None) || matches!(b, Value::None) {
            return Ok(Value::Bool(op == Cmp::Ne));
        }
        return elementwise(it, Elem::Cmp(op), &[a.clone(), b.clone()], pos);
    }
    if let (Some(x), Some(y)) = (as_int(a), as_int(b)) {
        return Ok(Value::Bool(op.test(x, y)));
    }
    let mixed = match (a, b) {
        (Value::Float(f), other) => as_int(other).map(|i| int_float_cmp(i, *f).map(std::cmp::Ordering::reverse)),
        (other, Value::Float(f)) => as_int(other).map(|i| int_float_cmp(i, *f)),
        _ => None,
    };
    if let Some(ord) = mixed {
        // Python compares an int with a float exactly (NaN: only `!=` holds).
        return Ok(Value::Bool(match ord {
            None => op == Cmp::Ne,
            Some(o) => op.test(o, std::cmp::Ordering::Equal),
        }));
    }
    if let (Some(x), Some(y)) = (as_num(a), as_num(b)) {
        return Ok(Value::Bool(op.test(x, y)));
    }
    if let (Value::Str(x), Value::Str(y)) = (a, b) {
        return Ok(Value::Bool(op.test(x, y)));
    }
    if it.sets.is_set(a) || it.sets.is_set(b) {
        return unsup(pos, "comparing sets (subset, superset, equality) is not modelled");
    }
    match op {
        Cmp::Eq => Ok(Value::Bool(seq_eq(it, a, b, 0, pos)?)),
        Cmp::Ne => Ok(Value::Bool(!seq_eq(it, a, b, 0, pos)?)),
        _ => exc(pos, format!("`{op:?}` is not supported between {} and {} (TypeError)", a.type_name(), b.type_name())),
    }
}

/// `a == b` for lists and tuples, as CPython compares them: items that are the same object are
/// equal without a look inside (so a list that holds itself equals itself), each item compared
/// is a step, and nesting over Python's recursion limit raises as Python's does.
fn seq_eq(it: &mut Interp, a: &Value, b: &Value, depth: usize, pos: Pos) -> R<bool> {
    fn same(p: &Value, q: &Value) -> bool {
        match (p, q) {
            (Value::List(x), Value::List(y)) => Rc::ptr_eq(x, y),
            (Value::Tuple(x), Value::Tuple(y)) => Rc::ptr_eq(x, y),
            _ => false,
        }
    }
    // Comparing mutates nothing, so the items are read in place (no copy per level).
    let (xl, yl);
    let (x, y): (&[Value], &[Value]) = match (a, b) {
        (Value::List(x), Value::List(y)) => {
            (xl, yl) = (x.borrow(), y.borrow());
            (&xl[..], &yl[..])
        }
        (Value::Tuple(x), Value::Tuple(y)) => (x, y),
        _ => return Ok(py_eq(a, b)),
    };
    if x.len() != y.len() {
        return Ok(false);
    }
    if depth >= MAX_VALUE_DEPTH {
        return exc(pos, "maximum recursion depth exceeded in comparison (RecursionError)");
    }
    for (p, q) in x.iter().zip(y.iter()) {
        it.step(pos)?;
        if !same(p, q) && !seq_eq(it, p, q, depth + 1, pos)? {
            return Ok(false);
        }
    }
    Ok(true)
}

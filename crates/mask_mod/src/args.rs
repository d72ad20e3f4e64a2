//! The arguments of a native call ([`Args`]: every keyword read is marked) and the value
//! conversions the builtins and the torch tail share (below both, so neither names the other).

use std::rc::Rc;

use super::ast::Pos;
use super::rt::{Eval, Fail, FailKind, Interp, R, exc, limit, unavailable_msg, unsup};
use super::tensor::{DType, Sc, Tensor, cast, checked_numel};
use super::value::{Unavailable, Value};

/// Positional and keyword arguments of a native call. Every keyword read is marked: a keyword
/// the call never read is refused by [`call_native`], never ignored.
pub(super) struct Args {
    pub(super) pos: Vec<Value>,
    pub(super) kw: Vec<(Rc<str>, Value)>,
    pub(super) at: Pos,
    pub(super) name: Rc<str>,
    /// Which keywords were read (bit i: `kw[i]`; keywords past 64 count as read).
    pub(super) used: Rc<std::cell::Cell<u64>>,
}

/// Keywords that change where or how a tensor is stored, never its values.
const INERT_KEYWORDS: [&str; 5] = ["device", "requires_grad", "pin_memory", "non_blocking", "memory_format"];

impl Args {
    pub(super) fn new(pos: Vec<Value>, kw: Vec<(Rc<str>, Value)>, at: Pos, name: Rc<str>) -> Args {
        Args { pos, kw, at, name, used: Rc::new(std::cell::Cell::new(0)) }
    }
    pub(super) fn find_kw(&self, name: &str) -> Option<Value> {
        let i = self.kw.iter().position(|(k, _)| &**k == name)?;
        if i < 64 {
            self.used.set(self.used.get() | (1 << i));
        }
        Some(self.kw[i].1.clone())
    }
    /// Marks every keyword as read (the call passes them on whole).
    pub(super) fn use_all(&self) {
        self.used.set(u64::MAX);
    }
    /// The first keyword the call never read, unless it is inert.
    pub(super) fn unread(&self) -> Option<Rc<str>> {
        let used = self.used.get();
        self.kw
            .iter()
            .enumerate()
            .find(|(i, (k, _))| *i < 64 && used & (1 << i) == 0 && !INERT_KEYWORDS.contains(&&**k))
            .map(|(_, (k, _))| k.clone())
    }
    pub(super) fn get(&self, i: usize, name: &str) -> Option<Value> {
        self.find_kw(name).or_else(|| self.pos.get(i).cloned())
    }
    pub(super) fn kw(&self, name: &str) -> Option<Value> {
        self.find_kw(name)
    }
    pub(super) fn need(&self, i: usize, name: &str) -> R<Value> {
        self.get(i, name).ok_or_else(|| Fail {
            kind: FailKind::Exception,
            msg: format!("{}() missing argument `{name}` (TypeError)", self.name),
            pos: self.at,
            exc_type: None,
        })
    }
    pub(super) fn int(&self, i: usize, name: &str) -> R<Option<i64>> {
        match self.get(i, name) {
            None | Some(Value::None) => Ok(None),
            Some(v) => Ok(Some(to_int(&v, self.at)?)),
        }
    }
    pub(super) fn dtype(&self) -> R<Option<DType>> {
        match self.kw("dtype") {
            None | Some(Value::None) => Ok(None),
            Some(Value::Dtype(d)) => Ok(Some(d)),
            Some(Value::Unavailable(u)) => unsup(self.at, unavailable_msg(&u)),
            Some(_) => unsup(self.at, "this dtype is not supported (bool, integer, float32 and float64 are)"),
        }
    }
}

/// A number as a float: a float, a one-element tensor, or an int.
pub(super) fn to_f64(v: &Value, pos: Pos) -> R<f64> {
    match v {
        Value::Float(f) => Ok(*f),
        Value::Tensor(t) if t.borrow().numel() == 1 => Ok(t.borrow().data[0].as_f64()),
        _ => to_int(v, pos).map(|i| i as f64),
    }
}

pub(super) fn to_int(v: &Value, pos: Pos) -> R<i64> {
    match v {
        Value::Instance(i) if i.class.is_int_enum() => to_int(&v.clone().plain(), pos),
        Value::Int(i) => Ok(*i),
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::Tensor(t) => {
            let t = t.borrow();
            if t.numel() != 1 || t.dtype.is_float() {
                return exc(pos, "only integer tensors of a single element can be converted to an index (TypeError)");
            }
            Ok(t.data[0].as_i64())
        }
        Value::Traced(..) => {
            exc(pos, "a value that depends on the indices used as a Python int (vmap refuses this too)")
        }
        Value::Unavailable(u) => unsup(pos, unavailable_msg(u)),
        other => exc(pos, format!("a {} where an integer is expected (TypeError)", other.type_name())),
    }
}

pub(super) fn tensor_of(v: &Value, pos: Pos) -> R<Tensor> {
    match v {
        Value::Tensor(t) => Ok(t.borrow().clone()),
        Value::Unavailable(u) => unsup(pos, unavailable_msg(u)),
        Value::Traced(..) => unsup(pos, "this operation on a traced index value is not supported"),
        Value::TracedVec(_) => unsup(pos, "this operation on a per-position vector is not supported"),
        Value::Lookup(l) => super::ops::too_large(l, pos),
        other => exc(pos, format!("expected a Tensor, got a {} (TypeError)", other.type_name())),
    }
}

/// A shape from `f(2, 3)`, `f((2, 3))` or `f([2, 3])`.
pub(super) fn shape_args(vals: &[Value], pos: Pos) -> R<Vec<usize>> {
    let dims: Vec<Value> = match vals {
        [Value::Tuple(t)] => t.as_ref().clone(),
        [Value::List(l)] => l.borrow().clone(),
        other => other.to_vec(),
    };
    let mut out = Vec::with_capacity(dims.len());
    for d in &dims {
        let v = to_int(d, pos)?;
        if v < 0 {
            return exc(pos, format!("negative dimension {v} (RuntimeError)"));
        }
        out.push(v as usize);
    }
    checked_numel(&out).or_else(|m| limit(pos, m))?;
    Ok(out)
}

pub(super) fn filled(dt: DType, shape: Vec<usize>, v: Sc) -> Tensor {
    let n = shape.iter().product();
    Tensor::new(dt, shape, vec![cast(v, dt); n])
}

pub(super) fn unavailable(what: String, pos: Pos) -> Value {
    Value::Unavailable(Rc::new(Unavailable {
        what: format!("line {}, column {}: {what}", pos.line, pos.col),
        aliases: Vec::new(),
    }))
}

pub(super) fn list_of(it: &mut Interp, v: &Value, pos: Pos) -> R<Vec<Value>> {
    it.iterate(v, pos)
}

//! The interpreter's runtime: its state and budgets ([`Interp`]), failures ([`Fail`]), the
//! value helpers every layer shares, and [`Eval`], through which the builtins call back into the
//! evaluator (`interp`) without naming it.

use std::collections::HashMap;
use std::rc::Rc;

use super::ast::{BinOp, Pos};
use super::tensor::Bin;
use super::trace::Graph;
use super::value::{Globals, Shared, Unavailable, Value};

/// Most statements and expressions one import may evaluate.
pub(super) const MAX_STEPS: u64 = 20_000_000;
/// Most tensor elements one import may compute, summed over all operations.
pub(super) const MAX_WORK: u64 = 400_000_000;
/// Deepest nesting of calls and expressions while running.
pub(super) const MAX_DEPTH: usize = 600;
/// Deepest Python call stack.
pub(super) const MAX_CALLS: usize = 100;
/// Most items in one list, tuple, dict or string.
pub(super) const MAX_ITEMS: usize = 1 << 22;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FailKind {
    /// Something hasseflow does not model; a module-level statement failing so is skipped.
    Unsupported,
    /// What Python (or torch) itself would raise.
    Exception,
    /// A resource limit, or a point the reader cannot pass (an exception a `try` may or may not
    /// catch): never skipped.
    Limit,
}

#[derive(Clone, Debug)]
pub(super) struct Fail {
    pub(super) kind: FailKind,
    pub(super) msg: String,
    pub(super) pos: Pos,
}

pub(super) type R<T> = Result<T, Fail>;

pub(super) fn unsup<T>(pos: Pos, msg: impl Into<String>) -> R<T> {
    Err(Fail { kind: FailKind::Unsupported, msg: msg.into(), pos })
}
pub(super) fn exc<T>(pos: Pos, msg: impl Into<String>) -> R<T> {
    Err(Fail { kind: FailKind::Exception, msg: msg.into(), pos })
}
pub(super) fn limit<T>(pos: Pos, msg: impl Into<String>) -> R<T> {
    Err(Fail { kind: FailKind::Limit, msg: msg.into(), pos })
}

pub(super) struct Interp {
    pub(super) graph: Graph,
    pub(super) steps: u64,
    pub(super) work: u64,
    pub(super) depth: usize,
    pub(super) calls: usize,
    /// Module-level statements skipped, with why.
    pub(super) skipped: Vec<(Pos, String)>,
    /// Modules imported, as written.
    pub(super) imports: Vec<String>,
    pub(super) preludes: HashMap<&'static str, Shared<Globals>>,
    /// Whether the prelude being run is a library (its statements are never skipped).
    pub(super) in_prelude: bool,
    /// Objects a skipped statement could have mutated: (address, the object kept alive, why).
    pub(super) tainted: Vec<(usize, Value, String)>,
    /// Views and the tensors whose memory they share.
    pub(super) views: super::memory::Registry,
    /// Sets and whether their order is modelled.
    pub(super) sets: super::memory::Sets,
}

impl Interp {
    pub(super) fn new() -> Interp {
        Interp {
            graph: Graph::new(),
            steps: 0,
            work: 0,
            depth: 0,
            calls: 0,
            skipped: Vec::new(),
            imports: Vec::new(),
            preludes: HashMap::new(),
            in_prelude: false,
            tainted: Vec::new(),
            views: super::memory::Registry::default(),
            sets: super::memory::Sets::default(),
        }
    }

    pub(super) fn step(&mut self, pos: Pos) -> R<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return limit(pos, format!("the text runs over {MAX_STEPS} steps (a loop or recursion too long)"));
        }
        Ok(())
    }
    /// Refuses a read of an object a skipped statement could have changed.
    pub(super) fn check_taint(&self, v: &Value, pos: Pos) -> R<()> {
        if self.tainted.is_empty() {
            return Ok(());
        }
        let mut ids: Vec<usize> = super::effects::identity(v).into_iter().collect();
        if let Value::Tensor(t) = v {
            // A view shares its base's memory: a change to either is a change to both.
            let base = self.views.base_of(t);
            ids.extend(super::effects::identity(&Value::Tensor(base)));
        }
        if let Some((_, _, why)) = self.tainted.iter().find(|t| ids.contains(&t.0)) {
            return unsup(pos, format!("this {} may have been changed by {why}", v.type_name()));
        }
        Ok(())
    }
    pub(super) fn charge(&mut self, pos: Pos, elements: usize) -> R<()> {
        self.work += elements as u64;
        if self.work > MAX_WORK {
            return limit(pos, format!("the text computes over {MAX_WORK} tensor elements"));
        }
        Ok(())
    }
}

/// The evaluator's entry points the builtins call back into; implemented for [`Interp`] by the
/// evaluator (`interp`).
pub(super) trait Eval {
    /// Python truthiness (`bool(v)`).
    fn truthy(&mut self, v: &Value, pos: Pos) -> R<bool>;
    /// The items of an iterable.
    fn iterate(&mut self, v: &Value, pos: Pos) -> R<Vec<Value>>;
    /// Calls a function value.
    fn call(&mut self, f: &Value, args: Vec<Value>, kwargs: Vec<(Rc<str>, Value)>, pos: Pos) -> R<Value>;
    /// `from module import name`.
    fn import_name(&mut self, module: &str, name: &str, pos: Pos) -> R<Value>;
}

pub(super) fn unavailable_msg(u: &Unavailable) -> String {
    format!("the value comes from {}", u.what)
}

pub(super) fn range_len(a: i64, b: i64, s: i64) -> i64 {
    if s > 0 && b > a {
        (b - a - 1) / s + 1
    } else if s < 0 && a > b {
        (a - b - 1) / (-s) + 1
    } else {
        0
    }
}

/// Python `==` for hashable-ish values (dict keys, `in`).
pub(super) fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::None, Value::None) => true,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Tuple(x), Value::Tuple(y)) => x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| py_eq(p, q)),
        (Value::Dtype(x), Value::Dtype(y)) => x == y,
        (Value::Int(i), Value::Float(f)) | (Value::Float(f), Value::Int(i)) => {
            int_float_cmp(*i, *f) == Some(std::cmp::Ordering::Equal)
        }
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// Python's exact comparison of an int with a float (no rounding of the int to a float); `None`
/// when the float is NaN.
pub(super) fn int_float_cmp(i: i64, f: f64) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() {
        return None;
    }
    if f >= TWO_63 {
        return Some(Ordering::Less);
    }
    if f < -TWO_63 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    Some(match i.cmp(&(t as i64)) {
        Ordering::Equal => {
            if f > t {
                Ordering::Less
            } else if f < t {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        }
        o => o,
    })
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

pub(super) fn dict_set(d: &mut Vec<(Value, Value)>, k: Value, v: Value, pos: Pos) -> R<()> {
    match &k {
        Value::List(_) | Value::Dict(_) => return exc(pos, format!("unhashable type: {} (TypeError)", k.type_name())),
        Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
        Value::Traced(..) | Value::Tensor(_) => return unsup(pos, "tensors as dict keys are not supported"),
        _ => {}
    }
    if let Some(slot) = d.iter_mut().find(|(x, _)| py_eq(x, &k)) {
        slot.1 = v;
    } else {
        if d.len() >= MAX_ITEMS {
            return limit(pos, "a dict over the item limit");
        }
        d.push((k, v));
    }
    Ok(())
}

/// Which tensor kernel an AST operator is.
pub(super) fn kernel_of(op: BinOp) -> Option<Bin> {
    Some(match op {
        BinOp::Add => Bin::Add,
        BinOp::Sub => Bin::Sub,
        BinOp::Mul => Bin::Mul,
        BinOp::Div => Bin::Div,
        BinOp::FloorDiv => Bin::FloorDiv,
        BinOp::Mod => Bin::Rem,
        BinOp::Pow => Bin::Pow,
        BinOp::BitAnd => Bin::And,
        BinOp::BitOr => Bin::Or,
        BinOp::BitXor => Bin::Xor,
        BinOp::Shl => Bin::Shl,
        BinOp::Shr => Bin::Shr,
        BinOp::MatMul => return None,
    })
}

//! The interpreter's runtime: its state and budgets ([`Interp`]), failures ([`Fail`]), the
//! value helpers every layer shares, and [`Eval`], through which the builtins call back into the
//! evaluator (`interp`) without naming it.

use std::collections::HashMap;
use std::rc::Rc;

use super::ast::{BinOp, Pos};
use super::tensor::{Bin, Tensor};
use super::trace::Graph;
pub(super) use super::value::PyDict;
use super::value::{Globals, Key, Shared, Unavailable, Value};

/// Most statements and expressions one import may evaluate.
pub(super) const MAX_STEPS: u64 = 8_000_000;
/// Most tensor elements one import may compute, summed over all operations.
pub(super) const MAX_WORK: u64 = 400_000_000;
/// Deepest nesting of calls and expressions while running.
pub(super) const MAX_DEPTH: usize = 600;
/// Deepest Python call stack.
pub(super) const MAX_CALLS: usize = 100;
/// Most items in one list, tuple, dict or string.
pub(super) const MAX_ITEMS: usize = 1 << 22;
/// Most bytes one import may allocate for values (lists, tuples, dicts, strings, tensors), summed
/// over the import: so also a bound on the memory live at any time. A tensor element counts as
/// the 16 B it is stored in, whatever its dtype; a list item as a [`Value`] (32 B).
pub(super) const MAX_BYTES: u64 = 1 << 30;
/// Deepest nesting of values that comparing, hashing or converting them walks (Python's own
/// recursion limit is 1000).
pub(super) const MAX_VALUE_DEPTH: usize = 1000;
/// Deepest chain of base classes.
pub(super) const MAX_CLASS_DEPTH: usize = 200;
/// Most classes one walk of a class's bases visits (a lattice of diamonds repeats them).
pub(super) const MAX_CLASS_WALK: usize = 10_000;

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
    /// What a `raise` of the text raised: a builtin exception class or a class of the text.
    pub(super) exc_type: Option<Value>,
}

pub(super) type R<T> = Result<T, Fail>;

pub(super) fn unsup<T>(pos: Pos, msg: impl Into<String>) -> R<T> {
    Err(Fail { kind: FailKind::Unsupported, msg: msg.into(), pos, exc_type: None })
}
pub(super) fn exc<T>(pos: Pos, msg: impl Into<String>) -> R<T> {
    Err(Fail { kind: FailKind::Exception, msg: msg.into(), pos, exc_type: None })
}
pub(super) fn limit<T>(pos: Pos, msg: impl Into<String>) -> R<T> {
    Err(Fail { kind: FailKind::Limit, msg: msg.into(), pos, exc_type: None })
}

pub(super) struct Interp {
    pub(super) graph: Graph,
    pub(super) steps: u64,
    pub(super) work: u64,
    /// Bytes allocated for values so far (see [`MAX_BYTES`]).
    pub(super) bytes: u64,
    pub(super) depth: usize,
    pub(super) calls: usize,
    /// Module-level statements skipped, with why.
    pub(super) skipped: Vec<(Pos, String)>,
    /// Modules imported, as written.
    pub(super) imports: Vec<String>,
    pub(super) preludes: HashMap<&'static str, Shared<Globals>>,
    /// While the text's call into a library prelude runs: that call's place, where what the
    /// prelude computes is placed (`Interp::call_closure`).
    pub(super) user_call: Option<Pos>,
    /// Whether the prelude being run is a library (its statements are never skipped).
    pub(super) in_prelude: bool,
    /// Objects a skipped statement could have mutated: (address, the object kept alive, why).
    pub(super) tainted: Vec<(usize, Value, String)>,
    /// Views and the tensors whose memory they share.
    pub(super) views: super::memory::Registry,
    /// Sets and whether their order is modelled.
    pub(super) sets: super::memory::Sets,
    /// The tuples that are torch's (values, indices) results.
    pub(super) pairs: super::memory::Pairs,
    /// The exceptions being handled (`except` bodies running), innermost last: a bare `raise`
    /// raises the last again.
    pub(super) handling: Vec<Fail>,
    /// Whether the text ran `from __future__ import annotations` (annotations are not evaluated).
    pub(super) future_annotations: bool,
    /// How many `try` bodies with `except` clauses are running: an import there whose success
    /// the reader cannot tell decides which path runs.
    pub(super) in_try: u32,
    /// The `random` module's generator and torch's default one.
    pub(super) rng: super::mt::Globals,
    /// Whether the text made a tensor by `torch.empty` (whose unwritten elements every read then
    /// checks for: see `unset`).
    pub(super) empties: bool,
    /// While `x[i] op= v` stores its result back: the view `x[i]` that the operator already
    /// updated in place (see `views::overlap`).
    pub(super) write_back: Option<Shared<Tensor>>,
}

impl Interp {
    pub(super) fn new() -> Interp {
        Interp {
            graph: Graph::new(),
            steps: 0,
            work: 0,
            bytes: 0,
            depth: 0,
            calls: 0,
            skipped: Vec::new(),
            imports: Vec::new(),
            preludes: HashMap::new(),
            user_call: None,
            in_prelude: false,
            tainted: Vec::new(),
            views: super::memory::Registry::default(),
            sets: super::memory::Sets::default(),
            pairs: super::memory::Pairs::default(),
            handling: Vec::new(),
            future_annotations: false,
            in_try: 0,
            rng: super::mt::Globals::default(),
            empties: false,
            write_back: None,
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
    /// Charges tensor elements computed: each is also stored (16 B, see [`MAX_BYTES`]).
    pub(super) fn charge(&mut self, pos: Pos, elements: usize) -> R<()> {
        self.work = self.work.saturating_add(elements as u64);
        if self.work > MAX_WORK {
            return limit(pos, format!("the text computes over {MAX_WORK} tensor elements"));
        }
        self.alloc(pos, elements.saturating_mul(std::mem::size_of::<super::tensor::Sc>()))
    }
    /// Charges work that is not tensor elements (items of a tuple `isinstance` walks, members
    /// an enum lookup compares) against the same budget, so a loop of them is bounded too.
    pub(super) fn charge_work(&mut self, pos: Pos, units: usize, what: &str) -> R<()> {
        self.work = self.work.saturating_add(units as u64);
        if self.work > MAX_WORK {
            return limit(pos, format!("the text does over {MAX_WORK} units of work ({what})"));
        }
        Ok(())
    }
    /// Charges bytes about to be allocated for a value, before allocating them.
    pub(super) fn alloc(&mut self, pos: Pos, bytes: usize) -> R<()> {
        self.bytes = self.bytes.saturating_add(bytes as u64);
        if self.bytes > MAX_BYTES {
            return limit(
                pos,
                format!("the text allocates over {MAX_BYTES} bytes of values (hasseflow's memory budget of 1 GiB)"),
            );
        }
        Ok(())
    }
    /// Charges `items` new list, tuple or dict slots.
    pub(super) fn alloc_items(&mut self, pos: Pos, items: usize) -> R<()> {
        self.alloc(pos, items.saturating_mul(std::mem::size_of::<Value>()))
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

/// Python `==` for hashable-ish values (dict keys, `in`); tuples nested over
/// [`MAX_VALUE_DEPTH`] compare unequal (hashing refuses them first, see [`key_of`]).
pub(super) fn py_eq(a: &Value, b: &Value) -> bool {
    py_eq_at(a, b, 0)
}

fn py_eq_at(a: &Value, b: &Value, depth: usize) -> bool {
    if a.is_member() || b.is_member() {
        return match (a.clone().plain(), b.clone().plain()) {
            (Value::Instance(x), Value::Instance(y)) => Rc::ptr_eq(&x, &y),
            (Value::Instance(_), _) | (_, Value::Instance(_)) => false,
            (x, y) => py_eq_at(&x, &y, depth),
        };
    }
    match (a, b) {
        (Value::Class(x), Value::Class(y)) => Rc::ptr_eq(x, y),
        (Value::Native(x), Value::Native(y)) if x.recv.is_none() && y.recv.is_none() => x.name == y.name,
        (Value::None, Value::None) => true,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Tuple(x), Value::Tuple(y)) => {
            depth < MAX_VALUE_DEPTH
                && x.len() == y.len()
                && x.iter().zip(y.iter()).all(|(p, q)| py_eq_at(p, q, depth + 1))
        }
        (Value::Dtype(x), Value::Dtype(y)) => x == y,
        // The reader keeps every tensor on one device (`.device.type` is "cpu"), so two devices
        // are the same device (`assert a.device == b.device`).
        (Value::Device, Value::Device) => true,
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

/// The key of `k`, refusing unhashable values and tuples nested over [`MAX_VALUE_DEPTH`].
pub(super) fn key_of(k: &Value, pos: Pos) -> R<Option<Key>> {
    fn walk(k: &Value, depth: usize, pos: Pos) -> R<Option<Key>> {
        Ok(Some(match k {
            Value::List(_) | Value::Dict(_) => {
                return exc(pos, format!("unhashable type: {} (TypeError)", k.type_name()));
            }
            Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
            Value::Traced(..) | Value::Tensor(_) => return unsup(pos, "tensors as dict keys are not supported"),
            Value::None => Key::None,
            Value::Bool(b) => Key::Int(i64::from(*b)),
            Value::Int(i) => Key::Int(*i),
            Value::Float(f) if f.is_nan() => return Ok(None),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Key::Int(*f as i64),
            Value::Float(f) => Key::Float(f.to_bits()),
            Value::Str(s) => Key::Str(s.clone()),
            Value::Dtype(d) => Key::Dtype(d.name()),
            Value::Instance(i) if i.class.is_int_enum() => match i.enum_value() {
                Some(Value::Int(v)) => Key::Int(v),
                _ => return Ok(None),
            },
            Value::Instance(i) if i.class.is_enum() => Key::Id(Rc::as_ptr(i) as usize),
            Value::Tuple(items) => {
                if depth >= MAX_VALUE_DEPTH {
                    return unsup(
                        pos,
                        format!("a tuple nested over {MAX_VALUE_DEPTH} levels as a key is not modelled"),
                    );
                }
                let mut out = Vec::with_capacity(items.len());
                for x in items.iter() {
                    match walk(x, depth + 1, pos)? {
                        Some(key) => out.push(key),
                        None => return Ok(None),
                    }
                }
                Key::Tuple(out)
            }
            _ => return Ok(None),
        }))
    }
    walk(k, 0, pos)
}

impl PyDict {
    /// The value at `k`, if present.
    pub(super) fn get(&self, k: &Value, pos: Pos) -> R<Option<Value>> {
        Ok(key_of(k, pos)?.and_then(|key| self.index.get(&key)).map(|&i| self.items[i].1.clone()))
    }
    /// Every key and value, leaving the dict empty.
    pub(super) fn take_all(&mut self) -> Vec<Value> {
        self.index.clear();
        self.items.drain(..).flat_map(|(k, v)| [k, v]).collect()
    }
    /// Whether `k` is present.
    pub(super) fn contains(&self, k: &Value, pos: Pos) -> R<bool> {
        Ok(key_of(k, pos)?.is_some_and(|key| self.index.contains_key(&key)))
    }
    /// Removes `k` (`del d[k]`); whether it was present.
    pub(super) fn remove(&mut self, k: &Value, pos: Pos) -> R<bool> {
        let Some(i) = key_of(k, pos)?.and_then(|key| self.index.remove(&key)) else {
            return Ok(false);
        };
        self.items.remove(i);
        for j in self.index.values_mut() {
            if *j > i {
                *j -= 1;
            }
        }
        Ok(true)
    }
}

/// `d[k] = v`.
pub(super) fn dict_set(d: &mut PyDict, k: Value, v: Value, pos: Pos) -> R<()> {
    let key = key_of(&k, pos)?;
    if let Some(&i) = key.as_ref().and_then(|key| d.index.get(key)) {
        d.items[i].1 = v;
        return Ok(());
    }
    if d.items.len() >= MAX_ITEMS {
        return limit(pos, "a dict over the item limit");
    }
    if let Some(key) = key {
        d.index.insert(key, d.items.len());
    }
    d.items.push((k, v));
    Ok(())
}

/// The distinct values of `items`, first occurrences in order (a set's items).
pub(super) fn distinct(items: Vec<Value>, pos: Pos) -> R<Vec<Value>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(items.len());
    for v in items {
        if matches!(v, Value::Tensor(_) | Value::Traced(..)) {
            out.push(v);
            continue;
        }
        match key_of(&v, pos)? {
            Some(key) => {
                if seen.insert(key) {
                    out.push(v);
                }
            }
            None => out.push(v),
        }
    }
    Ok(out)
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

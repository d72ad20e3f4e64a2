//! Python builtins, attribute and item access, and the torch / functools / math functions mask
//! code uses, each with the semantics of the real one.

use std::rc::Rc;

pub(super) use super::args::{Args, filled, list_of, shape_args, tensor_of, to_f64, to_int, unavailable};
use super::ast::Pos;
use super::ops::{Elem, elementwise, push};
use super::rt::{
    Eval, Fail, FailKind, Interp, MAX_ITEMS, PyDict, R, dict_set, exc, int_float_cmp, limit, py_eq, range_len,
    unavailable_msg, unsup,
};
use super::tensor::{Bin, Cmp, DType, Sc, Tensor, Un, cast, checked_numel};
use super::tensor_ops::{self, along, cat, dim_of, reshape, scalar_into, scalar_of, slice_indices, tensor_from};
use super::tensor_tail;
use super::trace::{Op, Table};
use super::value::{ClassObj, Native, Partial, Shared, Value, shared};

const PY_BUILTINS: [&str; 40] = [
    "staticmethod",
    "classmethod",
    "property",
    "isinstance",
    "object",
    "print",
    "len",
    "range",
    "abs",
    "min",
    "max",
    "int",
    "float",
    "bool",
    "str",
    "list",
    "tuple",
    "dict",
    "set",
    "sum",
    "enumerate",
    "zip",
    "sorted",
    "reversed",
    "round",
    "divmod",
    "pow",
    "any",
    "all",
    "callable",
    "map",
    "filter",
    "getattr",
    "hasattr",
    "setattr",
    "super",
    "slice",
    "frozenset",
    "ValueError",
    "NotImplementedError",
];

/// A Python builtin by name.
pub(super) fn builtin(name: &str) -> Option<Value> {
    match name {
        "__name__" => Some(Value::Str("hasseflow_mask_module".into())),
        "__file__" => Some(Value::Str("mask_mod.py".into())),
        "__doc__" => Some(Value::None),
        _ if PY_BUILTINS.contains(&name)
            || name == "type"
            || super::types::is_exception_name(name)
            || matches!(
                name,
                "TypeError" | "RuntimeError" | "AssertionError" | "Exception" | "KeyError" | "IndexError"
            ) =>
        {
            Some(Value::native(&format!("builtins.{name}")))
        }
        _ => None,
    }
}

/// The torch functions this module implements, besides [`ELEMENTWISE`]'s.
const TORCH_FNS: [&str; 50] = [
    "isin",
    "arange",
    "zeros",
    "ones",
    "full",
    "tensor",
    "as_tensor",
    "zeros_like",
    "ones_like",
    "full_like",
    "repeat_interleave",
    "cumsum",
    "cat",
    "concat",
    "concatenate",
    "stack",
    "diff",
    "where",
    "absolute",
    "min",
    "max",
    "any",
    "all",
    "sum",
    "argmax",
    "argmin",
    "amax",
    "amin",
    "searchsorted",
    "bucketize",
    "set_default_device",
    "manual_seed",
    "set_default_dtype",
    "compile",
    "no_grad",
    "inference_mode",
    "device",
    "get_default_dtype",
    "is_tensor",
    "numel",
    "Size",
    "empty",
    "empty_like",
    "permute",
    "transpose",
    "t",
    "randint",
    "rand",
    "randn",
    "randperm",
];

const MODULES: [&str; 22] = [
    "hasseflow",
    "enum",
    "dataclasses",
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.attention",
    "torch.nn.attention.flex_attention",
    "torch.cuda",
    "torch.distributed",
    "torch.jit",
    "abc",
    "functools",
    "math",
    "typing",
    "torch.backends",
    "torch._dynamo",
    "torch.compiler",
    "torch.fx",
    "torch._inductor",
    "torch._inductor.config",
    "warnings",
];

/// Whether a dotted module path is one the reader models (or a library it has a prelude for).
pub(super) fn is_known_module(path: &str) -> bool {
    MODULES.contains(&path) || super::library::prelude_for(path).is_some()
}

/// Whether a dotted name is a function this module implements.
pub(super) fn is_known(full: &str) -> bool {
    if let Some(f) = full.strip_prefix("torch.")
        && (TORCH_FNS.contains(&f) || ELEMENTWISE.contains(&f) || tensor_tail::TAIL_FNS.contains(&f))
    {
        return true;
    }
    if super::random::is_known(full) {
        return true;
    }
    matches!(
        full,
        "torch.nn.functional.pad"
            | "hasseflow.block_counts"
            | "hasseflow.unsupported"
            | "torch.nn.functional.one_hot"
            | "torch.cuda.is_available"
            | "torch.cuda.device_count"
            | "torch.distributed.is_available"
            | "torch.distributed.is_initialized"
            | "torch.distributed.get_rank"
            | "torch.distributed.get_world_size"
            | "torch.jit.script"
            | "torch.compiler.disable"
            | "torch._dynamo.disable"
            | "torch.fx.wrap"
            | "warnings.warn"
            | "functools.partial"
            | "dataclasses.dataclass"
            | "dataclasses.field"
            | "typing.NamedTuple"
            | "enum.Enum"
            | "enum.IntEnum"
            | "enum.auto"
            | "enum.unique"
            | "functools.reduce"
            | "abc.ABC"
            | "abc.abstractmethod"
            | "itertools.accumulate"
            | "functools.lru_cache"
            | "functools.cache"
            | "functools.cached_property"
            | "functools.wraps"
            | "math.ceil"
            | "math.floor"
            | "math.sqrt"
            | "math.log"
            | "math.log2"
            | "math.exp"
            | "math.gcd"
            | "math.lcm"
            | "math.isqrt"
            | "math.prod"
            | "math.comb"
            | "math.isclose"
    )
}

fn py_str(v: &Value) -> String {
    match v {
        Value::Instance(i) if i.class.is_enum() => {
            super::enums::to_str(i).unwrap_or_else(|| format!("<{}>", i.class.name))
        }
        Value::None => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => {
            if f.fract() == 0.0 && f.abs() < 1e16 {
                format!("{f:.1}")
            } else {
                format!("{f}")
            }
        }
        Value::Str(s) => s.to_string(),
        Value::Dtype(d) => d.name().into(),
        other => format!("<{}>", other.type_name()),
    }
}

fn identity_decorator() -> Value {
    Value::native("hasseflow.identity")
}

/// `o.name = v` (an assignment, `setattr`): an instance's or class's attribute, a function's name.
pub(super) fn set_attr(o: &Value, name: &Rc<str>, v: Value, pos: Pos) -> R<()> {
    let attrs = match (o, &**name) {
        (Value::Func(c), "__name__" | "__qualname__") => {
            if let Value::Str(s) = v {
                *c.name.borrow_mut() = s;
            }
            return Ok(());
        }
        (Value::Func(_), "__doc__") => return unsup(pos, "assigning a function's `__doc__` is not modelled"),
        // A compiler's setting (`torch._inductor.config.X = v`) changes how torch runs, not what.
        (Value::Module(m), _) if m.ends_with("config") && m.starts_with("torch._") => return Ok(()),
        (Value::Instance(i), _) => &i.attrs,
        (Value::Class(c), _) => &c.attrs,
        _ => return unsup(pos, format!("assigning the attribute `{name}` of a {} is not supported", o.type_name())),
    };
    let mut attrs = attrs.borrow_mut();
    match attrs.iter_mut().find(|(k, _)| k == name) {
        Some(slot) => slot.1 = v,
        None => attrs.push((name.clone(), v)),
    }
    Ok(())
}

/// `super(class, obj)`: a proxy whose attributes are looked up in the classes after `class` in the
/// order of `obj`'s class (`obj` may be a class, in a classmethod).
pub(super) fn super_of(class: &Rc<ClassObj>, obj: Value, pos: Pos) -> R<Value> {
    let of = match &obj {
        Value::Instance(i) => i.class.clone(),
        Value::Class(c) => c.clone(),
        _ => return exc(pos, "super(type, obj): obj must be an instance or subtype of type (TypeError)"),
    };
    if !of.is_subclass_of(class) {
        return exc(pos, "super(type, obj): obj must be an instance or subtype of type (TypeError)");
    }
    Ok(Value::method("builtins.super", Value::Tuple(Rc::new(vec![Value::Class(class.clone()), obj]))))
}

/// `functools.cached_property` read on `obj`: the getter's value, computed once and kept in the
/// instance's attributes (its `__dict__`), which a later read finds first.
fn cached_property(it: &mut Interp, obj: &Value, getter: &Value, name: &str, pos: Pos) -> R<Value> {
    let v = it.call(getter, vec![obj.clone()], Vec::new(), pos)?;
    if let Value::Instance(i) = obj {
        i.attrs.borrow_mut().push((name.into(), v.clone()));
    }
    Ok(v)
}

/// `super(...).name`: found in the classes after the proxy's class, in the order of the object's
/// class, and bound to the object as `obj.name` would be. The order is the chain of single bases;
/// several bases (whose order is C3's) or a builtin base (an enum, an exception) are not modelled.
fn super_attr(it: &mut Interp, n: &Native, name: &str, pos: Pos) -> R<Value> {
    let Some(Value::Tuple(t)) = &n.recv else { return unsup(pos, "a super object without its class") };
    let (Value::Class(start), obj) = (&t[0], &t[1]) else { return unsup(pos, "a super object without its class") };
    let of = match obj {
        Value::Instance(i) => i.class.clone(),
        Value::Class(c) => c.clone(),
        _ => return unsup(pos, "a super object of neither an instance nor a class"),
    };
    let mut class = Some(of.clone());
    let mut after = false;
    while let Some(c) = class {
        if c.bases.len() > 1 || c.native.is_some() {
            return unsup(
                pos,
                format!("super() in the class `{}`, of several or builtin bases, is not modelled", c.name),
            );
        }
        let own = c.attrs.borrow().iter().find(|(k, _)| &**k == name).map(|(_, v)| v.clone());
        if let (true, Some(v)) = (after, own) {
            return Ok(match v {
                Value::Func(_) => Value::bound(v, obj.clone()),
                Value::Wrapped(w) => match w.0 {
                    "classmethod" => Value::bound(w.1.clone(), Value::Class(of.clone())),
                    "property" => return it.call(&w.1.clone(), vec![obj.clone()], Vec::new(), pos),
                    "cached_property" => return cached_property(it, obj, &w.1, name, pos),
                    _ => w.1.clone(),
                },
                v => v,
            });
        }
        after |= Rc::ptr_eq(&c, start);
        class = c.bases.first().cloned();
    }
    if name == "__init__" {
        return Ok(Value::native("builtins.object_init"));
    }
    exc(pos, format!("`super` object has no attribute `{name}` (AttributeError)"))
}

/// `o.name`.
pub(super) fn getattr(it: &mut Interp, o: &Value, name: &str, pos: Pos) -> R<Value> {
    Ok(match o {
        Value::Module(path) => {
            let full = format!("{path}.{name}");
            if path.starts_with("torch") || &**path == "math" {
                match name {
                    "inf" => return Ok(Value::Float(f64::INFINITY)),
                    "nan" => return Ok(Value::Float(f64::NAN)),
                    "pi" => return Ok(Value::Float(std::f64::consts::PI)),
                    "e" => return Ok(Value::Float(std::f64::consts::E)),
                    _ => {}
                }
            }
            if &**path == "torch" {
                if name == "default_generator" {
                    return Ok(Value::Rng(it.rng.torch.clone()));
                }
                if name == "Tensor" {
                    return Ok(Value::native("torch.Tensor"));
                }
                if let Some(d) = DType::from_name(name) {
                    return Ok(Value::Dtype(d));
                }
                if matches!(name, "float16" | "half" | "bfloat16" | "complex64" | "uint16" | "uint32" | "uint64") {
                    return Ok(unavailable(format!("the dtype torch.{name} is not supported"), pos));
                }
            }
            if full == "torch.nn.Module" {
                return it.import_name("torch.nn.modules.module", "Module", pos);
            }
            if is_known(&full) {
                Value::native(&full)
            } else if MODULES.contains(&full.as_str())
                || super::library::prelude_for(&full).is_some()
                || full == "torch.random"
            {
                Value::Module(full.into())
            } else if super::library::prelude_for(path).is_some() {
                // `import attn_gym.masks as m; m.causal_mask`.
                return it.import_name(path, name, pos);
            } else {
                unavailable(format!("`{full}` is not supported"), pos)
            }
        }
        Value::Tensor(t) => {
            let tb = t.borrow();
            match name {
                "shape" => it.pairs.size(tb.shape.iter().copied()),
                "dtype" => Value::Dtype(tb.dtype),
                "device" => Value::Device,
                "ndim" => Value::Int(tb.shape.len() as i64),
                "is_cuda" => Value::Bool(false),
                // Views: `.T` reverses every dimension, `.mT` swaps the last two.
                "T" | "mT" => {
                    let rank = tb.shape.len() as i64;
                    drop(tb);
                    if rank == 0 {
                        return Ok(o.clone());
                    }
                    if name == "T" {
                        let order = (0..rank).rev().map(Value::Int).collect();
                        return call_method(it, "permute", o.clone(), order, Vec::new(), pos);
                    }
                    if rank < 2 {
                        return exc(
                            pos,
                            format!(
                                "tensor.mT is only supported on matrices or batches of matrices. Got {rank}-D tensor. (RuntimeError)"
                            ),
                        );
                    }
                    return call_method(
                        it,
                        "transpose",
                        o.clone(),
                        vec![Value::Int(-2), Value::Int(-1)],
                        Vec::new(),
                        pos,
                    );
                }
                _ => Value::method(&format!("tensor.{name}"), o.clone()),
            }
        }
        Value::Rng(g) => return super::random::attr(g, o, name, pos),
        Value::TracedVec(v) => match super::vector::attr(v, name) {
            Some(x) => x,
            None => Value::method(&format!("tensor.{name}"), o.clone()),
        },
        Value::Traced(_, d) => match name {
            "shape" => it.pairs.size(std::iter::empty()),
            "dtype" => Value::Dtype(*d),
            "device" => Value::Device,
            "ndim" => Value::Int(0),
            _ => Value::method(&format!("tensor.{name}"), o.clone()),
        },
        Value::Func(c) => match name {
            "__name__" | "__qualname__" => Value::Str(c.name.borrow().clone()),
            "__doc__" => super::docstring(&c.def.body),
            _ => return exc(pos, format!("a function has no attribute `{name}` (AttributeError)")),
        },
        Value::Partial(p) => match name {
            "func" => p.func.clone(),
            "args" => Value::Tuple(Rc::new(p.args.clone())),
            _ => return exc(pos, format!("a partial has no attribute `{name}` (AttributeError)")),
        },
        Value::Native(n) if &*n.name == "builtins.super" => return super_attr(it, n, name, pos),
        Value::Native(n) if name == "__name__" => Value::Str(n.name.rsplit('.').next().unwrap_or("").into()),
        Value::Class(c) => match name {
            "__name__" | "__qualname__" => Value::Str(c.name.clone()),
            "__members__" if c.is_enum() => super::enums::members_dict(it, c, pos)?,
            _ => match c.lookup(name) {
                Some(Value::Wrapped(w)) => match w.0 {
                    "classmethod" => Value::bound(w.1.clone(), o.clone()),
                    "default_factory" => {
                        return exc(pos, format!("class `{}` has no attribute `{name}` (AttributeError)", c.name));
                    }
                    _ => w.1.clone(),
                },
                Some(v) => v,
                None if c.is_enum() => {
                    return unsup(pos, format!("the attribute `{name}` of the enum `{}` is not modelled", c.name));
                }
                None => return exc(pos, format!("class `{}` has no attribute `{name}` (AttributeError)", c.name)),
            },
        },
        Value::Instance(i) => {
            if let Some((_, v)) = i.attrs.borrow().iter().find(|(k, _)| &**k == name) {
                return Ok(v.clone());
            }
            match i.class.lookup(name) {
                Some(Value::Func(f)) => Value::bound(Value::Func(f), o.clone()),
                Some(Value::Wrapped(w)) => match w.0 {
                    "classmethod" => Value::bound(w.1.clone(), Value::Class(i.class.clone())),
                    "property" => return it.call(&w.1.clone(), vec![o.clone()], Vec::new(), pos),
                    "cached_property" => return cached_property(it, o, &w.1, name, pos),
                    "default_factory" => {
                        return exc(
                            pos,
                            format!("`{}` object has no attribute `{name}` (AttributeError)", i.class.name),
                        );
                    }
                    _ => w.1.clone(),
                },
                Some(v) => v,
                None if i.class.is_enum() => {
                    return unsup(
                        pos,
                        format!("the attribute `{name}` of a member of the enum `{}` is not modelled", i.class.name),
                    );
                }
                None => {
                    return exc(pos, format!("`{}` object has no attribute `{name}` (AttributeError)", i.class.name));
                }
            }
        }
        Value::List(_) | Value::Dict(_) | Value::Str(_) => {
            Value::method(&format!("{}.{name}", o.type_name()), o.clone())
        }
        Value::Dtype(d) => match name {
            "is_floating_point" => Value::Bool(d.is_float()),
            _ => return unsup(pos, format!("the dtype attribute `{name}` is not supported")),
        },
        Value::Device => match name {
            "type" => Value::Str("cpu".into()),
            _ => return unsup(pos, format!("the device attribute `{name}` is not supported")),
        },
        Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
        Value::Lookup(l) => return super::ops::too_large(l, pos),
        Value::Tuple(t) if name == "numel" && it.pairs.is_size(t) => Value::method("size.numel", o.clone()),
        // A tuple's only attributes that are not dunders are `count` and `index`.
        Value::Tuple(t) if !name.starts_with("__") && !matches!(name, "count" | "index" | "values" | "indices") => {
            let kind = if it.pairs.is_size(t) { "torch.Size" } else { "tuple" };
            return exc(pos, format!("`{kind}` object has no attribute `{name}` (AttributeError)"));
        }
        Value::Tuple(t) if matches!(name, "values" | "indices") => {
            // torch's `sort`, `topk`, `max(dim)`... return a named (values, indices) pair.
            if !it.pairs.is_pair(t) {
                return exc(pos, format!("`tuple` object has no attribute `{name}` (AttributeError)"));
            }
            t[usize::from(name == "indices")].clone()
        }
        other => return unsup(pos, format!("the attribute `{name}` of a {} is not supported", other.type_name())),
    })
}

/// `o[i]`.
pub(super) fn getitem(it: &mut Interp, o: &Value, i: Value, pos: Pos) -> R<Value> {
    let i = i.plain();
    super::unset::check(it, &i, pos)?;
    if let Value::Unavailable(u) = &i {
        return unsup(pos, unavailable_msg(u));
    }
    match o {
        Value::Tensor(cell) => super::views::getitem(it, cell, i, pos),
        Value::List(_) | Value::Tuple(_) if matches!(i, Value::Int(_) | Value::Bool(_)) => {
            let k = to_int(&i, pos)?;
            let item = |items: &[Value]| {
                let n = items.len() as i64;
                let j = if k < 0 { k + n } else { k };
                (0..n).contains(&j).then(|| items[j as usize].clone()).ok_or(n)
            };
            let found = match o {
                Value::List(l) => item(&l.borrow()),
                Value::Tuple(t) => item(t),
                _ => Err(0),
            };
            found.or_else(|n| {
                exc(pos, format!("index {k} out of range for a {} of {n} items (IndexError)", o.type_name()))
            })
        }
        Value::TracedVec(v) => super::vector::getitem(it, v, i, pos),
        Value::Lookup(l) => super::vector::index_lookup(it, l, i, pos),
        Value::Class(c) if c.is_enum() => super::enums::by_name(it, c, &i, pos),
        Value::List(_) | Value::Tuple(_) | Value::Str(_) | Value::Range(..) => {
            let items: Vec<Value> = match o {
                Value::List(l) => l.borrow().clone(),
                Value::Tuple(t) => t.as_ref().clone(),
                Value::Str(s) => s.chars().map(|c| Value::Str(c.to_string().into())).collect(),
                Value::Range(a, b, s) => {
                    let n = range_len(*a, *b, *s);
                    if let Value::Int(k) = &i {
                        let k = if *k < 0 { k + n } else { *k };
                        if k < 0 || k >= n {
                            return exc(pos, "range object index out of range (IndexError)");
                        }
                        return Ok(Value::Int(a + k * s));
                    }
                    it.iterate(o, pos)?
                }
                _ => Vec::new(),
            };
            match &i {
                Value::Slice(s) => {
                    let st = |v: &Value| -> R<Option<i64>> {
                        match v {
                            Value::None => Ok(None),
                            other => Ok(Some(to_int(other, pos)?)),
                        }
                    };
                    let (a, b, c) = (st(&s[0])?, st(&s[1])?, st(&s[2])?);
                    let sel: Vec<Value> = if c.unwrap_or(1) < 0 {
                        let mut v = items.clone();
                        v.reverse();
                        if a.is_some() || b.is_some() || c != Some(-1) {
                            return unsup(pos, "negative slice steps with bounds are not supported");
                        }
                        v
                    } else {
                        slice_indices(a, b, c, items.len(), pos)?.into_iter().map(|k| items[k].clone()).collect()
                    };
                    Ok(match o {
                        Value::List(_) => Value::List(shared(sel)),
                        Value::Str(_) => Value::Str(sel.iter().map(py_str).collect::<String>().into()),
                        _ => Value::Tuple(Rc::new(sel)),
                    })
                }
                Value::Traced(..) => exc(pos, "a list indexed by a traced index (vmap refuses this too: use a tensor)"),
                _ => {
                    let k = to_int(&i, pos)?;
                    let n = items.len() as i64;
                    let j = if k < 0 { k + n } else { k };
                    if j < 0 || j >= n {
                        return exc(
                            pos,
                            format!("index {k} out of range for a {} of {n} items (IndexError)", o.type_name()),
                        );
                    }
                    Ok(items[j as usize].clone())
                }
            }
        }
        Value::Dict(d) => {
            let found = d.borrow().get(&i, pos)?;
            found.map_or_else(|| exc(pos, format!("key {} not found (KeyError)", py_str(&i))), Ok)
        }
        Value::Traced(..) => exc(pos, "indexing a 0-d index tensor (IndexError)"),
        Value::Unavailable(u) => unsup(pos, unavailable_msg(u)),
        Value::Class(_) => {
            // `tuple[str, int]`, `Callable[..., bool]`, `ClassVar[int]`: a generic alias, kept inert.
            Ok(unavailable(
                "a subscripted type (`X[...]`), kept as an inert value: using it is not modelled".into(),
                pos,
            ))
        }
        Value::Native(n) if n.recv.is_none() => {
            // `tuple[str, int]`, `Callable[..., bool]`, `ClassVar[int]`: a generic alias, kept inert.
            Ok(unavailable(
                "a subscripted type (`X[...]`), kept as an inert value: using it is not modelled".into(),
                pos,
            ))
        }
        Value::Instance(inst) if !inst.class.is_enum() => match inst.class.lookup("__getitem__") {
            // A class of the text's own with `__getitem__` (a shape-annotation helper `Int['b n']`).
            Some(f) => it.call(&f, vec![o.clone(), i], Vec::new(), pos),
            None => exc(pos, format!("'{}' object is not subscriptable (TypeError)", inst.class.name)),
        },
        other => exc(pos, format!("a {} is not subscriptable (TypeError)", other.type_name())),
    }
}

/// `o[i] = v`.
pub(super) fn setitem(it: &mut Interp, o: &Value, i: Value, v: Value, pos: Pos) -> R<()> {
    // The index decides where (the value is moved, unwritten elements and all).
    super::unset::check(it, &i, pos)?;
    match o {
        Value::Tensor(t) => {
            super::views::overlap(it, t, Some(&i), &v, pos)?;
            tensor_tail::put_dtype(t.borrow().dtype, &i, &v, true, pos)?;
            // In place, unless the index or the value may read the tensor itself (then on a copy,
            // so that no borrow overlaps): a per-position loop stays linear.
            if mentions(&i, t, 3) || mentions(&v, t, 3) {
                let mut tb = t.borrow().clone();
                it.alloc(pos, tb.bytes())?;
                tensor_ops::setitem(it, &mut tb, i, &v, pos)?;
                *t.borrow_mut() = tb;
            } else {
                tensor_ops::setitem(it, &mut t.borrow_mut(), i, &v, pos)?;
            }
            super::views::written(it, t, pos)
        }
        Value::List(l) => {
            let k = to_int(&i, pos)?;
            let n = l.borrow().len() as i64;
            let j = if k < 0 { k + n } else { k };
            if j < 0 || j >= n {
                return exc(pos, "list assignment index out of range (IndexError)");
            }
            l.borrow_mut()[j as usize] = v;
            Ok(())
        }
        Value::Dict(d) => dict_set(&mut d.borrow_mut(), i, v, pos),
        Value::Unavailable(u) => unsup(pos, unavailable_msg(u)),
        other => exc(pos, format!("a {} does not support item assignment (TypeError)", other.type_name())),
    }
}

/// Whether `v` is, or may hold within `depth` levels of lists and tuples, the tensor `t`
/// (deeper containers count as holding it).
fn mentions(v: &Value, t: &Shared<Tensor>, depth: usize) -> bool {
    let within = |items: &[Value]| depth == 0 || items.iter().any(|x| mentions(x, t, depth - 1));
    match v {
        Value::Tensor(u) => Rc::ptr_eq(u, t),
        Value::Tuple(items) => within(items),
        Value::List(l) => within(&l.borrow()),
        _ => false,
    }
}

/// torch functions take a tensor first: a Python number there is a `TypeError`.
fn tensor_arg(v: &Value, a: &Args) -> R<Value> {
    match v {
        Value::Tensor(_) | Value::Traced(..) | Value::TracedVec(_) => Ok(v.clone()),
        Value::Lookup(l) => super::ops::too_large(l, a.at),
        Value::Unavailable(u) => unsup(a.at, unavailable_msg(u)),
        other => {
            exc(a.at, format!("{}(): argument 'input' must be Tensor, not {} (TypeError)", a.name, other.type_name()))
        }
    }
}

fn binop_fn(it: &mut Interp, kind: Elem, a: &Args) -> R<Value> {
    let x = tensor_arg(&a.need(0, "input")?, a)?;
    let y = a.need(1, "other")?;
    elementwise(it, kind, &[x, y], a.at)
}

/// The most distinct test values `torch.isin` compares an index with (one comparison each in the
/// traced program).
const ISIN_MOST: usize = 4096;

/// `torch.isin(elements, test_elements, *, assume_unique, invert)`: whether each element equals
/// one of the test values (a tensor or a number; a list is torch's TypeError), as `==` compares
/// them. On a traced index, an OR of one comparison per distinct test value.
fn isin(it: &mut Interp, a: &Args) -> R<Value> {
    let pos = a.at;
    let x = a.need(0, "elements")?;
    let test = a.need(1, "test_elements")?;
    // `assume_unique` only lets torch skip its own deduplication: the answer is the same.
    let _ = a.kw("assume_unique");
    let invert = match a.kw("invert") {
        None => false,
        Some(v) => it.truthy(&v, pos)?,
    };
    let scalar = |v: &Value| matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_));
    let tensor_like = |v: &Value| matches!(v, Value::Tensor(_) | Value::Traced(..) | Value::TracedVec(_));
    if let Some(Value::Unavailable(u)) = [&x, &test].into_iter().find(|v| matches!(v, Value::Unavailable(_))) {
        return unsup(pos, unavailable_msg(u));
    }
    if !(tensor_like(&x) || scalar(&x)) || !(tensor_like(&test) || scalar(&test)) || (scalar(&x) && scalar(&test)) {
        return exc(
            pos,
            "isin() received an invalid combination of arguments: give tensors, or a tensor and a number (TypeError)",
        );
    }
    let values = match &test {
        Value::Tensor(t) => t.borrow().clone(),
        Value::Traced(..) | Value::TracedVec(_) | Value::Lookup(_) => {
            return unsup(pos, "torch.isin with test values that depend on the indices is not supported");
        }
        number => tensor_from(number, None, pos)?,
    };
    let bool_input = |v: &Value| match v {
        Value::Bool(_) => true,
        Value::Tensor(t) => t.borrow().dtype.is_bool(),
        Value::Traced(_, d) => d.is_bool(),
        _ => false,
    };
    if bool_input(&x) || values.dtype.is_bool() {
        return exc(pos, "Unsupported input type encountered for isin(): Bool (NotImplementedError)");
    }
    // Distinct test values in their first order: each compared once.
    let mut distinct: Vec<Sc> = Vec::new();
    for &v in &values.data {
        if !distinct.contains(&v) {
            if distinct.len() == ISIN_MOST {
                return unsup(
                    pos,
                    format!("torch.isin with more than {ISIN_MOST} distinct test values is not supported"),
                );
            }
            distinct.push(v);
        }
    }
    let x = if scalar(&x) { Value::tensor(tensor_from(&x, None, pos)?) } else { x };
    let mut found: Option<Value> = None;
    for v in distinct {
        let v = Value::tensor(Tensor::new(values.dtype, Vec::new(), vec![v]));
        let eq = elementwise(it, Elem::Cmp(Cmp::Eq), &[x.clone(), v], pos)?;
        found = Some(match found {
            None => eq,
            Some(f) => elementwise(it, Elem::LogicalOr, &[f, eq], pos)?,
        });
    }
    let found = match found {
        Some(f) => f,
        // No test value: false everywhere, in the elements' shape (`x == x` XOR itself).
        None => {
            let same = elementwise(it, Elem::Cmp(Cmp::Eq), &[x.clone(), x], pos)?;
            elementwise(it, Elem::LogicalXor, &[same.clone(), same], pos)?
        }
    };
    if invert { elementwise(it, Elem::LogicalNot, &[found], pos) } else { Ok(found) }
}

/// A reduction with its `dtype=` and `keepdim=` keywords: torch casts the input to the dtype and
/// sums in it; `keepdim=True` keeps the reduced dimension, of size 1.
fn reduce_typed(it: &mut Interp, kind: &str, x: Value, dim: Option<Value>, a: &Args) -> R<Value> {
    let given = dim.is_some();
    let dim = match dim {
        None | Some(Value::None) => None,
        Some(d) => Some(to_int(&d, a.at)?),
    };
    let keep = match a.kw("keepdim") {
        // torch's `sum` has no form with `keepdim` and no `dim` (`dim=None` is one).
        Some(_) if kind == "sum" && !given => {
            return exc(a.at, "sum() received an invalid combination of arguments: keepdim without dim (TypeError)");
        }
        None | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some(dim),
        Some(_) => return exc(a.at, "keepdim must be a bool (TypeError)"),
    };
    let ndim = match (&x, keep) {
        (_, None) | (Value::Traced(..), _) => 0,
        (Value::Tensor(t), _) => t.borrow().shape.len(),
        _ => return unsup(a.at, "`keepdim=True` over a per-position vector is not modelled"),
    };
    let r = match a.dtype()? {
        None => reduce_all(it, kind, &x, dim, a.at)?,
        Some(d) if kind == "sum" => {
            let x = elementwise(it, Elem::Cast(d), &[x], a.at)?;
            let r = reduce_all(it, kind, &x, dim, a.at)?;
            elementwise(it, Elem::Cast(d), &[r], a.at)?
        }
        Some(_) => return unsup(a.at, format!("`dtype=` of {kind} is not modelled")),
    };
    match (keep, r) {
        // Kept: the reduced dimension (every one without `dim`) of size 1; a 0-d input stays 0-d.
        (Some(dim), Value::Tensor(t)) if ndim > 0 => {
            let mut t = t.borrow().clone();
            match dim {
                Some(d) => t.shape.insert(dim_of(d, ndim, a.at)?, 1),
                None => t.shape = vec![1; ndim],
            }
            Ok(Value::tensor(t))
        }
        (_, r) => Ok(r),
    }
}

/// `torch.max(x)`, `torch.max(x, other)` (elementwise, `other` a tensor) and `torch.max(x, dim)`
/// / `x.min(dim=d)`: the pair (values, indices) along `dim`, a tuple that answers `.values` and
/// `.indices`.
fn min_max(it: &mut Interp, kind: &str, x: Value, other: Option<Value>, a: &Args) -> R<Value> {
    let dim = match other.or_else(|| a.kw("dim")) {
        Some(o @ (Value::Tensor(_) | Value::Traced(..))) => {
            return elementwise(it, Elem::Bin(if kind == "min" { Bin::Min } else { Bin::Max }), &[x, o], a.at);
        }
        None => return reduce_all(it, kind, &x, None, a.at),
        Some(d) => Some(Value::Int(to_int(&d, a.at)?)),
    };
    if let Value::TracedVec(_) = x {
        return unsup(a.at, "max or min along a dimension of a per-position vector is not supported");
    }
    let values = reduce_typed(it, kind, x.clone(), dim.clone(), a)?;
    let indices = reduce_typed(it, if kind == "max" { "max_index" } else { "min_index" }, x, dim, a)?;
    Ok(it.pairs.pair(values, indices))
}

fn reduce_all(it: &mut Interp, kind: &str, v: &Value, dim: Option<i64>, pos: Pos) -> R<Value> {
    match v {
        Value::TracedVec(t) => super::vector::reduce(it, kind, t, dim, pos),
        Value::Traced(n, d) => match kind {
            "any" | "all" => elementwise(it, Elem::Cast(DType::Bool), &[Value::Traced(*n, *d)], pos),
            "sum" => {
                let out = if d.is_float() { *d } else { DType::I64 };
                elementwise(it, Elem::Cast(out), &[Value::Traced(*n, *d)], pos)
            }
            // The one element's index.
            "argmax" | "argmin" | "max_index" | "min_index" => {
                Ok(Value::tensor(Tensor::new(DType::I64, Vec::new(), vec![Sc::I(0)])))
            }
            _ => Ok(Value::Traced(*n, *d)),
        },
        _ => {
            let t = tensor_of(v, pos)?;
            it.charge(pos, t.numel())?;
            if let Some(d) = dim {
                let d = dim_of(d, t.shape.len(), pos)?;
                if t.shape.is_empty() {
                    return reduce_all(it, kind, v, None, pos);
                }
                let len = t.shape[d];
                let outer: usize = t.shape[..d].iter().product();
                let inner: usize = t.shape[d + 1..].iter().product();
                let mut shape = t.shape.clone();
                shape.remove(d);
                let mut data = Vec::with_capacity(outer * inner);
                let mut dt = t.dtype;
                for o in 0..outer {
                    for s in 0..inner {
                        let lane: Vec<Sc> = (0..len).map(|k| t.data[o * len * inner + k * inner + s]).collect();
                        let (v, d2) = reduce_lane(kind, t.dtype, &lane, pos)?;
                        dt = d2;
                        data.push(v);
                    }
                }
                return Ok(Value::tensor(Tensor::new(dt, shape, data)));
            }
            let (v, dt) = reduce_lane(kind, t.dtype, &t.data, pos)?;
            Ok(Value::tensor(Tensor::new(dt, Vec::new(), vec![v])))
        }
    }
}

fn reduce_lane(kind: &str, dt: DType, lane: &[Sc], pos: Pos) -> R<(Sc, DType)> {
    Ok(match kind {
        "any" => (Sc::I(i64::from(lane.iter().any(|v| v.truthy()))), DType::Bool),
        "all" => (Sc::I(i64::from(lane.iter().all(|v| v.truthy()))), DType::Bool),
        "sum" => {
            if dt.is_float() {
                (Sc::F(dt.round(lane.iter().map(|v| v.as_f64()).sum())), dt)
            } else {
                (Sc::I(lane.iter().fold(0i64, |a, v| a.wrapping_add(v.as_i64()))), DType::I64)
            }
        }
        // `max_index`: the indices of `max(dim)`, which (unlike `argmax`) takes bools.
        "max" | "min" | "amax" | "amin" | "argmax" | "argmin" | "max_index" | "min_index" => {
            if lane.is_empty() {
                return exc(pos, "a reduction of an empty tensor or dimension (RuntimeError)");
            }
            let index = kind.starts_with("arg") || kind.ends_with("_index");
            if kind.starts_with("arg") && dt.is_bool() {
                return exc(pos, "argmax()/argmin(): does not support bool input (NotImplementedError)");
            }
            let pick_max = kind.contains("max");
            // The first best (torch's index of a tie), a NaN the best of all (the first one).
            let (mut best, mut at) = (lane[0], 0);
            for (i, &v) in lane.iter().enumerate().skip(1) {
                let better = match (v, best) {
                    (Sc::I(a), Sc::I(b)) => {
                        if pick_max {
                            a > b
                        } else {
                            a < b
                        }
                    }
                    _ => {
                        let (v, b) = (v.as_f64(), best.as_f64());
                        !b.is_nan() && (v.is_nan() || if pick_max { v > b } else { v < b })
                    }
                };
                if better {
                    (best, at) = (v, i);
                }
            }
            if index { (Sc::I(at as i64), DType::I64) } else { (best, dt) }
        }
        _ => return unsup(pos, format!("the reduction `{kind}` is not supported")),
    })
}

fn searchsorted(it: &mut Interp, sorted: &Value, x: &Value, right: bool, pos: Pos) -> R<Value> {
    let t = tensor_of(sorted, pos)?;
    if t.shape.len() != 1 {
        return unsup(pos, "searchsorted over a tensor that is not 1-d is not supported");
    }
    if t.data.windows(2).any(|w| match (w[0], w[1]) {
        (Sc::I(a), Sc::I(b)) => a > b,
        (a, b) => a.as_f64() > b.as_f64(),
    }) {
        return unsup(pos, "searchsorted over a tensor that is not sorted (torch's result is unspecified)");
    }
    let dt = DType::promote(
        t.dtype,
        match x {
            Value::Traced(_, d) => *d,
            Value::Tensor(v) => v.borrow().dtype,
            Value::Float(_) => DType::F64,
            _ => DType::I64,
        },
    );
    let mut tc = t.clone();
    tc.data = tc.data.iter().map(|&v| cast(v, dt)).collect();
    tc.dtype = dt;
    let table = Rc::new(Table::new(tc));
    match x {
        Value::Traced(n, d) => {
            let xid = if *d == dt { *n } else { push(it, Op::Cast(*n), dt, pos)? };
            let id = push(it, Op::Search(table, right, xid), DType::I64, pos)?;
            Ok(Value::Traced(id, DType::I64))
        }
        _ => {
            let (vals, shape) = match x {
                Value::Tensor(v) => {
                    let v = v.borrow();
                    (v.data.iter().map(|&s| cast(s, dt)).collect::<Vec<_>>(), v.shape.clone())
                }
                other => (vec![cast(scalar_of(other, pos)?.0, dt)], Vec::new()),
            };
            let data: Vec<Sc> = vals.iter().map(|&v| super::trace::search_value(&table, right, v)).collect();
            Ok(Value::tensor(Tensor::new(DType::I64, shape, data)))
        }
    }
}

/// `functools.reduce(function, iterable[, initial])` (`keep` false: the last value) and
/// `itertools.accumulate(iterable[, func], *, initial)` (`keep`: every value, a list as `zip` and
/// `enumerate` give here; without a function, `+`).
fn fold(
    it: &mut Interp,
    f: Option<&Value>,
    items: Vec<Value>,
    initial: Option<Value>,
    keep: bool,
    pos: Pos,
) -> R<Value> {
    let mut iter = items.into_iter();
    let Some(mut acc) = initial.or_else(|| iter.next()) else {
        return if keep {
            Ok(Value::List(shared(Vec::new())))
        } else {
            exc(pos, "reduce() of empty iterable with no initial value (TypeError)")
        };
    };
    let mut out = Vec::new();
    if keep {
        it.alloc(pos, (iter.len() + 1) * std::mem::size_of::<Value>())?;
    }
    for x in iter {
        if keep {
            out.push(acc.clone());
        }
        acc = match f {
            Some(f) => it.call(f, vec![acc, x], Vec::new(), pos)?,
            None => super::ops::binary(it, super::ast::BinOp::Add, acc, x, pos)?,
        };
    }
    if !keep {
        return Ok(acc);
    }
    out.push(acc);
    Ok(Value::List(shared(out)))
}

/// Calls a method of a value (`tensor.NAME`, `list.NAME`, ...).
fn call_method(
    it: &mut Interp,
    name: &str,
    recv: Value,
    args: Vec<Value>,
    kw: Vec<(Rc<str>, Value)>,
    pos: Pos,
) -> R<Value> {
    let n = Native { name: format!("tensor.{name}").into(), recv: Some(recv) };
    call_native(it, &Rc::new(n), args, kw, pos)
}

/// Calls a built-in function.
pub(super) fn call_native(
    it: &mut Interp,
    n: &Rc<Native>,
    args: Vec<Value>,
    kwargs: Vec<(Rc<str>, Value)>,
    pos: Pos,
) -> R<Value> {
    let a = Args::new(args, kwargs, pos, n.name.clone());
    let used = a.used.clone();
    let probe = Args { pos: Vec::new(), kw: a.kw.clone(), at: pos, name: n.name.clone(), used };
    let r = call_native_args(it, n, a)?;
    if let Some(k) = probe.unread() {
        return unsup(pos, format!("the keyword argument `{k}=` of `{}` is not modelled", probe.name));
    }
    Ok(r)
}

fn call_native_args(it: &mut Interp, n: &Rc<Native>, mut a: Args) -> R<Value> {
    let pos = a.at;
    let name: &str = &n.name;
    // An in-place elementwise method reads its operands once their overlap is checked (torch's
    // error whatever they hold), in the method.
    if n.recv.is_none() || !in_place_elementwise(name.split_once('.').map_or(name, |(_, m)| m)) {
        super::unset::check_call(it, n, &a.pos, &a.kw, pos)?;
    }
    // An `IntEnum` member is an int to torch, `math` and the numeric builtins (containers and
    // `isinstance`/`type` keep the member itself).
    let numeric = match &n.recv {
        Some(r) => matches!(r, Value::Tensor(_) | Value::Traced(..) | Value::TracedVec(_)),
        None => {
            name.starts_with("torch.")
                || name.starts_with("math.")
                || matches!(
                    name,
                    "builtins.abs"
                        | "builtins.int"
                        | "builtins.float"
                        | "builtins.round"
                        | "builtins.divmod"
                        | "builtins.pow"
                        | "builtins.range"
                        | "builtins.bool"
                        | "builtins.slice"
                )
        }
    };
    if numeric {
        a.pos = std::mem::take(&mut a.pos).into_iter().map(Value::plain).collect();
        a.kw = std::mem::take(&mut a.kw).into_iter().map(|(k, v)| (k, v.plain())).collect();
    }
    if let Some(Value::Rng(g)) = &n.recv {
        return super::random::method(it, g, name, a);
    }
    if let Some(recv) = &n.recv {
        return method(it, name, recv, a);
    }
    if let Some(b) = name.strip_prefix("builtins.") {
        return py_builtin(it, b, a);
    }
    if let Some(f) = name.strip_prefix("torch.nn.functional.") {
        return match tensor_tail::functional(it, f, &a)? {
            Some(v) => Ok(v),
            None => unsup(pos, format!("`{name}` is not supported")),
        };
    }
    if let Some(f) = name.strip_prefix("random.") {
        return super::random::random_fn(it, f, a);
    }
    if name == "warnings.warn" {
        // A message on stderr (or an exception under `-W error`, which the mask's user does not run).
        a.use_all();
        return Ok(Value::None);
    }
    if let Some(f) = name.strip_prefix("functools.") {
        return match f {
            "partial" => {
                let func = a.need(0, "func")?;
                if !func.is_callable() {
                    return exc(pos, "the first argument of partial must be callable (TypeError)");
                }
                a.use_all();
                // A partial of a partial is flattened into one, as CPython's `partial` does (so a
                // chain of them neither nests calls nor recursion).
                let (func, mut args, mut kwargs) = match &func {
                    Value::Partial(p) => (p.func.clone(), p.args.clone(), p.kwargs.clone()),
                    _ => (func, Vec::new(), Vec::new()),
                };
                args.extend(a.pos[1..].iter().cloned());
                for (k, v) in &a.kw {
                    kwargs.retain(|(x, _)| x != k);
                    kwargs.push((k.clone(), v.clone()));
                }
                if args.len() + kwargs.len() > MAX_ITEMS {
                    return limit(pos, "a partial over the item limit");
                }
                it.alloc(pos, (args.len() + kwargs.len()) * std::mem::size_of::<Value>())?;
                Ok(Value::Partial(Rc::new(Partial { func, args, kwargs, method: false })))
            }
            "reduce" => {
                let f = a.need(0, "function")?;
                let items = list_of(it, &a.need(1, "iterable")?, pos)?;
                fold(it, Some(&f), items, a.get(2, "initial"), false, pos)
            }
            "cached_property" => Ok(Value::Wrapped(Rc::new(("cached_property", a.need(0, "func")?)))),
            "lru_cache" | "cache" | "wraps" => {
                // Caching and wrapping change no value: their keywords are inert.
                a.use_all();
                match a.pos.first() {
                    Some(f) if f.is_callable() && name != "functools.wraps" => Ok(f.clone()),
                    _ => Ok(identity_decorator()),
                }
            }
            _ => unsup(pos, format!("`{name}` is not supported")),
        };
    }
    if name == "itertools.accumulate" {
        if a.pos.len() > 2 {
            let n = a.pos.len();
            return exc(pos, format!("accumulate() takes at most 2 positional arguments ({n} given) (TypeError)"));
        }
        let items = list_of(it, &a.need(0, "iterable")?, pos)?;
        let func = a.get(1, "func").filter(|f| !matches!(f, Value::None));
        let initial = a.kw("initial").filter(|v| !matches!(v, Value::None));
        return fold(it, func.as_ref(), items, initial, true, pos);
    }
    if name == "typing.NamedTuple" {
        return unsup(pos, "the functional form of NamedTuple is not supported (use the class form)");
    }
    if name == "abc.abstractmethod" {
        // Marked for its class (`__abstractmethods__`), which unwraps it.
        return Ok(Value::Wrapped(Rc::new(("abstractmethod", a.need(0, "funcobj")?))));
    }
    if let Some(f) = name.strip_prefix("enum.") {
        return match (f, a.pos.first()) {
            ("auto", _) if a.pos.is_empty() && a.kw.is_empty() => Ok(Value::native("enum.auto()")),
            ("Enum" | "IntEnum", Some(Value::Str(_))) => super::enums::functional(it, f, &a, pos),
            ("unique", Some(Value::Class(c))) if c.is_enum() => {
                let attrs = c.attrs.borrow();
                let alias = attrs.iter().find(|(k, v)| {
                    matches!(v, Value::Instance(i) if Rc::ptr_eq(&i.class, c)
                        && !matches!(i.attr("_name_"), Some(Value::Str(n)) if n == *k))
                });
                match alias {
                    Some((k, _)) => {
                        exc(pos, format!("duplicate values found in the enum `{}`: {k} (ValueError)", c.name))
                    }
                    None => Ok(Value::Class(c.clone())),
                }
            }
            _ => unsup(
                pos,
                format!("`{name}` is not modelled (only `Enum` and `IntEnum` classes, `auto()` and `@unique`)"),
            ),
        };
    }
    if let Some(f) = name.strip_prefix("dataclasses.") {
        return match f {
            "dataclass" => {
                // `frozen=`, `eq=`, `order=`...: comparisons of instances are not modelled anyway.
                a.use_all();
                match a.pos.first() {
                    Some(Value::Class(c)) => {
                        c.fields.set(true);
                        Ok(Value::Class(c.clone()))
                    }
                    _ => Ok(Value::native("dataclasses.dataclass")),
                }
            }
            "field" => match (a.kw("default"), a.kw("default_factory")) {
                (Some(d), _) => Ok(d),
                (None, Some(f)) => Ok(Value::Wrapped(Rc::new(("default_factory", f)))),
                (None, None) => unsup(pos, "dataclasses.field without a default is not supported"),
            },
            _ => unsup(pos, format!("`{name}` is not supported")),
        };
    }
    if name == "hasseflow.block_counts" {
        return super::blockmask::block_counts(it, &a);
    }
    if name == "hasseflow.identity" {
        return Ok(a.pos.first().cloned().unwrap_or(Value::None));
    }
    if name == "hasseflow.unsupported" {
        // A prelude's refusal of what it does not model (never an exception the text can catch).
        let Some(Value::Str(what)) = a.pos.first() else { return unsup(pos, "hasseflow.unsupported(str)") };
        return unsup(pos, format!("{what} is not modelled"));
    }
    if let Some(f) = name.strip_prefix("math.") {
        let x = || a.need(0, "x");
        return Ok(match f {
            "ceil" => Value::Int(to_f64(&x()?, pos)?.ceil() as i64),
            "floor" => Value::Int(to_f64(&x()?, pos)?.floor() as i64),
            "sqrt" => Value::Float(to_f64(&x()?, pos)?.sqrt()),
            "log" => {
                let v = to_f64(&x()?, pos)?.ln();
                match a.get(1, "base") {
                    Some(b) => Value::Float(v / to_f64(&b, pos)?.ln()),
                    None => Value::Float(v),
                }
            }
            "log2" => Value::Float(to_f64(&x()?, pos)?.log2()),
            "exp" => Value::Float(to_f64(&x()?, pos)?.exp()),
            "gcd" | "lcm" => {
                let (mut p, mut q) = (to_int(&a.need(0, "a")?, pos)?.abs(), to_int(&a.need(1, "b")?, pos)?.abs());
                let (p0, q0) = (p, q);
                while q != 0 {
                    (p, q) = (q, p % q);
                }
                if f == "gcd" {
                    Value::Int(p)
                } else if p == 0 {
                    Value::Int(0)
                } else {
                    Value::Int(p0 / p * q0)
                }
            }
            "isqrt" => {
                let v = to_int(&x()?, pos)?;
                if v < 0 {
                    return exc(pos, "isqrt() argument must be nonnegative (ValueError)");
                }
                let mut r = (v as f64).sqrt() as i64;
                while r * r > v {
                    r -= 1;
                }
                while (r + 1) * (r + 1) <= v {
                    r += 1;
                }
                Value::Int(r)
            }
            "prod" => {
                let items = list_of(it, &x()?, pos)?;
                let mut acc = Value::Int(1);
                for v in items {
                    acc = super::ops::binary(it, super::ast::BinOp::Mul, acc, v, pos)?;
                }
                acc
            }
            _ => return unsup(pos, format!("`{name}` is not supported")),
        });
    }
    if let Some(f) = name.strip_prefix("torch.") {
        return torch_fn(it, f, a);
    }
    unsup(pos, format!("`{name}` is not supported"))
}

fn torch_fn(it: &mut Interp, f: &str, a: Args) -> R<Value> {
    let pos = a.at;
    if let Some(v) = tensor_tail::torch_fn(it, f, &a)? {
        return Ok(v);
    }
    if let Some(v) = super::random::torch_fn(it, f, &a)? {
        return Ok(v);
    }
    if matches!(f, "permute" | "transpose" | "t") {
        // The method of the first argument (a view of it).
        a.use_all();
        let mut args = a.pos.clone();
        let input = if args.is_empty() { a.need(0, "input")? } else { args.remove(0) };
        let kw = a.kw.iter().filter(|(k, _)| &**k != "input").cloned().collect();
        return call_method(it, f, input, args, kw, pos);
    }
    let elem1 = |it: &mut Interp, k: Elem, a: &Args| -> R<Value> {
        elementwise(it, k, &[tensor_arg(&a.need(0, "input")?, a)?], pos)
    };
    Ok(match f {
        "set_default_device" => Value::None,
        "compile" | "no_grad" | "inference_mode" => {
            // Compilation and autograd modes change no value: their keywords are inert.
            a.use_all();
            match a.pos.first() {
                Some(v) if v.is_callable() => v.clone(),
                _ => identity_decorator(),
            }
        }
        "device" => Value::Device,
        "get_default_dtype" => Value::Dtype(DType::F32),
        "is_tensor" => Value::Bool(matches!(a.need(0, "obj")?, Value::Tensor(_) | Value::Traced(..))),
        "numel" => Value::Int(tensor_of(&a.need(0, "input")?, pos)?.numel() as i64),
        "Size" => {
            let dims = match a.get(0, "sizes") {
                None => Vec::new(),
                Some(v) => list_of(it, &v, pos)?,
            };
            let dims = dims.iter().map(|d| to_int(d, pos)).collect::<R<Vec<i64>>>()?;
            if dims.iter().any(|&d| d < 0) {
                return unsup(pos, "a torch.Size with a negative dimension is not modelled");
            }
            it.pairs.size(dims.into_iter().map(|d| d as usize))
        }
        "cuda.is_available" => Value::Bool(false),
        "cuda.device_count" => Value::Int(0),
        // One process, no process group (as the mask is read, and as torch's `create_mask` runs).
        "distributed.is_available" => Value::Bool(true),
        "distributed.is_initialized" => Value::Bool(false),
        "distributed.get_rank" | "distributed.get_world_size" => {
            return exc(
                pos,
                "Default process group has not been initialized, please make sure to call init_process_group. (ValueError)",
            );
        }
        // Compilers' and tracers' hints: the function itself, as eager torch runs it (called with
        // options only, a decorator that returns it).
        "jit.script" | "compiler.disable" | "_dynamo.disable" | "fx.wrap" => {
            a.use_all();
            a.pos.first().cloned().unwrap_or_else(identity_decorator)
        }
        "arange" => {
            let nums: Vec<Value> = a.pos.clone();
            let get = |k: usize, kw: &str| a.kw(kw).or_else(|| nums.get(k).cloned());
            let (start, end, step) = match nums.len() {
                0 => {
                    (a.kw("start").unwrap_or(Value::Int(0)), a.need(99, "end")?, a.kw("step").unwrap_or(Value::Int(1)))
                }
                1 => (Value::Int(0), nums[0].clone(), a.kw("step").unwrap_or(Value::Int(1))),
                _ => (nums[0].clone(), nums[1].clone(), get(2, "step").unwrap_or(Value::Int(1))),
            };
            let all_int = [&start, &end, &step].iter().all(|v| {
                matches!(v, Value::Int(_) | Value::Bool(_))
                    || matches!(v, Value::Tensor(t) if !t.borrow().dtype.is_float())
            });
            let dt = a.dtype()?.unwrap_or(if all_int { DType::I64 } else { DType::F32 });
            if all_int {
                let (s, e, st) = (to_int(&start, pos)?, to_int(&end, pos)?, to_int(&step, pos)?);
                if st == 0 {
                    return exc(pos, "arange: step must be nonzero (RuntimeError)");
                }
                let n = range_len(s, e, st);
                checked_numel(&[n.max(0) as usize]).or_else(|m| limit(pos, m))?;
                it.charge(pos, n.max(0) as usize)?;
                Value::tensor(Tensor::new(
                    dt,
                    vec![n.max(0) as usize],
                    (0..n).map(|i| cast(Sc::I(s + i * st), dt)).collect(),
                ))
            } else {
                let (s, e, st) = (to_f64(&start, pos)?, to_f64(&end, pos)?, to_f64(&step, pos)?);
                if st == 0.0 {
                    return exc(pos, "arange: step must be nonzero (RuntimeError)");
                }
                let n = ((e - s) / st).ceil().max(0.0);
                if n > super::tensor::MAX_ELEMENTS as f64 {
                    return limit(pos, "an arange over the element limit");
                }
                let n = n as usize;
                it.charge(pos, n)?;
                Value::tensor(Tensor::new(dt, vec![n], (0..n).map(|i| cast(Sc::F(s + i as f64 * st), dt)).collect()))
            }
        }
        "zeros" | "ones" | "full" | "empty" => {
            let (shape_vals, fill) = if f == "full" {
                (vec![a.need(0, "size")?], Some(a.need(1, "fill_value")?))
            } else {
                (if a.pos.is_empty() { vec![a.need(0, "size")?] } else { a.pos.clone() }, None)
            };
            let shape = shape_args(&shape_vals, pos)?;
            let (v, inferred) = match &fill {
                Some(x) => scalar_of(x, pos)?,
                None => (super::unset::fill(it, f), DType::F32),
            };
            let dt = a.dtype()?.unwrap_or(if fill.is_some() { inferred } else { DType::F32 });
            if fill.is_some() {
                tensor_ops::held(dt, v, pos)?;
            }
            it.charge(pos, shape.iter().product())?;
            Value::tensor(filled(dt, shape, v))
        }
        "zeros_like" | "ones_like" | "full_like" | "empty_like" => {
            let input = a.need(0, "input")?;
            let t = match &input {
                // Inside the mask: a constant of the index's dtype (as a batched tensor of that value).
                Value::Traced(_, d) => Tensor::new(*d, Vec::new(), vec![Sc::I(0)]),
                other => tensor_of(other, pos)?,
            };
            let dt = a.dtype()?.unwrap_or(t.dtype);
            let v = match f {
                "full_like" => scalar_into(&a.need(1, "fill_value")?, dt, pos)?,
                _ => super::unset::fill(it, f),
            };
            Value::tensor(filled(dt, t.shape.clone(), v))
        }
        // The legacy constructor: float32 from a list or tuple of numbers; from sizes it would be
        // uninitialised.
        "Tensor" | "tensor" | "as_tensor" => {
            let data = a.need(0, "data")?;
            if f == "Tensor" && !matches!(data, Value::List(_) | Value::Tuple(_)) {
                return unsup(
                    pos,
                    "torch.Tensor of sizes or of a tensor is not modelled (use torch.zeros or torch.tensor)",
                );
            }
            if f == "as_tensor"
                && let Value::Tensor(t) = &data
                && a.dtype()?.is_none_or(|d| d == t.borrow().dtype)
            {
                return Ok(data);
            }
            if let Value::Traced(..) | Value::TracedVec(_) = data {
                if f == "tensor" {
                    return exc(pos, "torch.tensor of a traced index value (vmap refuses this too)");
                }
                // `as_tensor` of a tensor is that tensor, in the dtype asked for (as under vmap).
                return match a.dtype()? {
                    Some(d) => elementwise(it, Elem::Cast(d), &[data], pos),
                    None => Ok(data),
                };
            }
            let dt = if f == "Tensor" { Some(DType::F32) } else { a.dtype()? };
            let t = tensor_from(&data, dt, pos)?;
            it.charge(pos, t.numel())?;
            Value::tensor(t)
        }
        "repeat_interleave" => {
            let input = a.need(0, "input")?;
            let reps = a.get(1, "repeats");
            repeat_interleave(it, &input, reps, a.int(2, "dim")?, a.kw("output_size"), pos)?
        }
        "cumsum" => {
            let t = tensor_of(&a.need(0, "input")?, pos)?;
            let d = a.int(1, "dim")?.ok_or_else(|| Fail {
                kind: FailKind::Exception,
                msg: "cumsum() missing `dim` (TypeError)".into(),
                pos,
                exc_type: None,
            })?;
            cumsum(it, &t, d, a.dtype()?, pos)?
        }
        "cat" | "concat" | "concatenate" => {
            let items = list_of(it, &a.need(0, "tensors")?, pos)?;
            let ts = items.iter().map(|v| tensor_of(v, pos)).collect::<R<Vec<_>>>()?;
            let t = cat(&ts, a.int(1, "dim")?.unwrap_or(0), pos)?;
            it.charge(pos, t.numel())?;
            Value::tensor(t)
        }
        "stack" => {
            let items = list_of(it, &a.need(0, "tensors")?, pos)?;
            let ts = items.iter().map(|v| tensor_of(v, pos)).collect::<R<Vec<_>>>()?;
            let Some(first) = ts.first() else { return exc(pos, "stack expects a non-empty list (RuntimeError)") };
            let d = a.int(1, "dim")?.unwrap_or(0);
            let nd = first.shape.len() + 1;
            let d = dim_of(d, nd, pos)?;
            let mut unsq = Vec::new();
            for t in &ts {
                if t.shape != first.shape {
                    return exc(pos, "stack expects each tensor to be equal size (RuntimeError)");
                }
                let mut s = t.shape.clone();
                s.insert(d, 1);
                unsq.push(Tensor::new(t.dtype, s, t.data.clone()));
            }
            let t = cat(&unsq, d as i64, pos)?;
            it.charge(pos, t.numel())?;
            Value::tensor(t)
        }
        "where" => {
            if a.pos.len() == 1 && a.kw.is_empty() {
                let nz = Args::new(a.pos.clone(), vec![("as_tuple".into(), Value::Bool(true))], pos, a.name.clone());
                return Ok(tensor_tail::torch_fn(it, "nonzero", &nz)?.unwrap_or(Value::None));
            }
            elementwise(it, Elem::Where, &[a.need(0, "condition")?, a.need(1, "input")?, a.need(2, "other")?], pos)?
        }
        "abs" | "absolute" => elem1(it, Elem::Un(Un::Abs), &a)?,
        "floor" => elem1(it, Elem::Un(Un::Floor), &a)?,
        "ceil" => elem1(it, Elem::Un(Un::Ceil), &a)?,
        "trunc" => elem1(it, Elem::Un(Un::Trunc), &a)?,
        "round" => elem1(it, Elem::Un(Un::Round), &a)?,
        "sign" => elem1(it, Elem::Un(Un::Sign), &a)?,
        "neg" => elem1(it, Elem::Un(Un::Neg), &a)?,
        "logical_not" => elem1(it, Elem::LogicalNot, &a)?,
        "bitwise_not" => elem1(it, Elem::Un(Un::Invert), &a)?,
        "clamp" | "clip" => clamp(it, a.need(0, "input")?, a.get(1, "min"), a.get(2, "max"), pos)?,
        "clamp_min" => clamp(it, a.need(0, "input")?, Some(a.need(1, "min")?), None, pos)?,
        "clamp_max" => clamp(it, a.need(0, "input")?, None, Some(a.need(1, "max")?), pos)?,
        "minimum" | "maximum" => {
            let (x, y) = (a.need(0, "input")?, a.need(1, "other")?);
            for v in [&x, &y] {
                if !matches!(v, Value::Tensor(_) | Value::Traced(..)) {
                    return exc(
                        pos,
                        format!("torch.{f}(): argument must be a Tensor, not a {} (TypeError)", v.type_name()),
                    );
                }
            }
            elementwise(it, Elem::Bin(if f == "minimum" { Bin::Min } else { Bin::Max }), &[x, y], pos)?
        }
        "min" | "max" => min_max(it, f, a.need(0, "input")?, a.get(1, "other"), &a)?,
        "isin" => isin(it, &a)?,
        "logical_and" => binop_fn(it, Elem::LogicalAnd, &a)?,
        "logical_or" => binop_fn(it, Elem::LogicalOr, &a)?,
        "logical_xor" => binop_fn(it, Elem::LogicalXor, &a)?,
        "bitwise_and" => binop_fn(it, Elem::Bin(Bin::And), &a)?,
        "bitwise_or" => binop_fn(it, Elem::Bin(Bin::Or), &a)?,
        "bitwise_xor" => binop_fn(it, Elem::Bin(Bin::Xor), &a)?,
        "bitwise_left_shift" | "bitwise_right_shift" => {
            // `<<` and `>>` by name; torch takes a Python number first too.
            let op = Elem::Bin(if f == "bitwise_left_shift" { Bin::Shl } else { Bin::Shr });
            let (x, y) = (a.need(0, "input")?, a.need(1, "other")?);
            if !matches!(y, Value::Tensor(_) | Value::Traced(..)) {
                tensor_arg(&x, &a)?;
            }
            elementwise(it, op, &[x, y], pos)?
        }
        "eq" => binop_fn(it, Elem::Cmp(Cmp::Eq), &a)?,
        "ne" | "not_equal" => binop_fn(it, Elem::Cmp(Cmp::Ne), &a)?,
        "lt" | "less" => binop_fn(it, Elem::Cmp(Cmp::Lt), &a)?,
        "le" | "less_equal" => binop_fn(it, Elem::Cmp(Cmp::Le), &a)?,
        "gt" | "greater" => binop_fn(it, Elem::Cmp(Cmp::Gt), &a)?,
        "ge" | "greater_equal" => binop_fn(it, Elem::Cmp(Cmp::Ge), &a)?,
        "remainder" => binop_fn(it, Elem::Bin(Bin::Rem), &a)?,
        "pow" => {
            // torch.pow(self: Number, exponent: Tensor) is an overload of its own.
            let (x, y) = (a.need(0, "input")?, a.need(1, "exponent")?);
            if matches!(x, Value::Int(_) | Value::Float(_) | Value::Bool(_))
                && matches!(y, Value::Tensor(_) | Value::Traced(..))
            {
                elementwise(it, Elem::Bin(Bin::Pow), &[x, y], pos)?
            } else {
                binop_fn(it, Elem::Bin(Bin::Pow), &a)?
            }
        }
        "tril" | "triu" => {
            let t = tensor_of(&a.need(0, "input")?, pos)?;
            // The last two dimensions: a batch of matrices.
            let nd = t.shape.len();
            if nd < 2 {
                return exc(pos, format!("{f}: input tensor must have at least 2 dimensions (RuntimeError)"));
            }
            let d = a.int(1, "diagonal")?.unwrap_or(0);
            let (r, c) = (t.shape[nd - 2], t.shape[nd - 1]);
            it.charge(pos, t.numel())?;
            let zero = cast(Sc::I(0), t.dtype);
            // Each cell's row and column in its matrix (no cell when a dimension is 0).
            let data = (0..t.numel())
                .map(|i| {
                    let (row, col) = (((i / c) % r) as i64, (i % c) as i64);
                    let keep = if f == "tril" { col - row <= d } else { col - row >= d };
                    if keep { t.data[i] } else { zero }
                })
                .collect();
            Value::tensor(Tensor::new(t.dtype, t.shape.clone(), data))
        }
        "fmod" => binop_fn(it, Elem::Bin(Bin::Fmod), &a)?,
        "floor_divide" => binop_fn(it, Elem::Bin(Bin::FloorDiv), &a)?,
        "true_divide" => binop_fn(it, Elem::Bin(Bin::Div), &a)?,
        "add" | "sub" | "mul" => {
            let mut y = a.need(1, "other")?;
            if let Some(alpha) = a.kw("alpha") {
                // `other` is scaled in the operands' promoted dtype (alpha takes no part in it),
                // which must hold alpha; in a bool result a nonzero alpha keeps `other` as it is.
                let x = a.need(0, "input")?;
                let (Value::Int(i), Some(cx), Some(cy)) =
                    (&alpha, super::vector::class_of(&x), super::vector::class_of(&y))
                else {
                    return unsup(pos, "an alpha= other than a Python int is not modelled");
                };
                let dt = super::tensor::result_type(&[cx, cy]);
                if f == "mul" {
                    return exc(pos, "mul() got an unexpected keyword argument 'alpha' (TypeError)");
                }
                if f == "sub" && (cx.0.is_bool() || cy.0.is_bool()) {
                    return exc(pos, super::ops::SUB_BOOL);
                }
                tensor_ops::held(dt, Sc::I(*i), pos)?;
                let alpha = if dt.is_bool() { Value::Bool(*i != 0) } else { Value::Int(*i) };
                y = elementwise(it, Elem::Cast(dt), &[y], pos)?;
                y = super::ops::binary(it, super::ast::BinOp::Mul, y, alpha, pos)?;
            }
            let k = match f {
                "add" => Bin::Add,
                "sub" => Bin::Sub,
                _ => Bin::Mul,
            };
            elementwise(it, Elem::Bin(k), &[a.need(0, "input")?, y], pos)?
        }
        "div" => {
            let k = match a.kw("rounding_mode") {
                None | Some(Value::None) => Bin::Div,
                Some(Value::Str(s)) if &*s == "floor" => Bin::FloorDiv,
                Some(Value::Str(s)) if &*s == "trunc" => Bin::TruncDiv,
                _ => return exc(pos, "div expected rounding_mode to be one of None, 'trunc', or 'floor' (ValueError)"),
            };
            binop_fn(it, Elem::Bin(k), &a)?
        }
        "any" | "all" | "sum" | "amax" | "amin" | "argmax" | "argmin" => {
            let x = a.need(0, "input")?;
            reduce_typed(it, f, x, a.get(1, "dim"), &a)?
        }
        "searchsorted" | "bucketize" => {
            // bucketize: (input, boundaries), no `side=`; searchsorted: (sorted_sequence, input).
            let bucketize = f == "bucketize";
            let (table, input) = if bucketize {
                (a.need(1, "boundaries")?, a.need(0, "input")?)
            } else {
                (a.need(0, "sorted_sequence")?, a.need(1, "input")?)
            };
            let right = matches!(a.kw("right"), Some(Value::Bool(true)))
                || !bucketize && matches!(a.kw("side"), Some(Value::Str(s)) if &*s == "right");
            let r = searchsorted(it, &table, &input, right, pos)?;
            match a.kw("out_int32") {
                Some(Value::Bool(true)) => elementwise(it, Elem::Cast(DType::I32), &[r], pos)?,
                None | Some(Value::Bool(false)) => r,
                Some(_) => return unsup(pos, "out_int32 that is not True or False is not modelled"),
            }
        }
        "set_default_dtype" => {
            return match a.need(0, "d")? {
                Value::Dtype(DType::F32) => Ok(Value::None),
                _ => limit(
                    pos,
                    "torch.set_default_dtype to a dtype other than torch.float32 is not modelled (it changes every \
                     later float the module makes)",
                ),
            };
        }
        _ => return unsup(pos, format!("`torch.{f}` is not supported")),
    })
}

fn clamp(it: &mut Interp, x: Value, lo: Option<Value>, hi: Option<Value>, pos: Pos) -> R<Value> {
    let lo = lo.filter(|v| !matches!(v, Value::None));
    let hi = hi.filter(|v| !matches!(v, Value::None));
    if lo.is_none() && hi.is_none() {
        return exc(pos, "clamp: at least one of `min` or `max` must not be None (RuntimeError)");
    }
    // Torch's overloads take two numbers or two tensors, not one of each.
    let number = |b: &Option<Value>| matches!(b, Some(Value::Int(_) | Value::Float(_) | Value::Bool(_)));
    if lo.is_some() && hi.is_some() && number(&lo) != number(&hi) {
        return exc(pos, "clamp() received an invalid combination of arguments: a number and a tensor (TypeError)");
    }
    // torch compares an integer bound of a narrower integer tensor with its dtype's range (a min
    // below it changes nothing, a min above it is its RuntimeError): not modelled.
    if let Value::Tensor(t) = &x
        && [&lo, &hi].iter().any(
            |b| matches!(b, Some(Value::Int(v)) if !t.borrow().dtype.is_float() && t.borrow().dtype.wrap(*v) != *v),
        )
    {
        return unsup(pos, "a clamp bound outside the integer tensor's range is not modelled");
    }
    // torch promotes the input with both bounds first, then applies max and min in that dtype.
    let mut v = x;
    if let Some(l) = lo {
        v = elementwise(it, Elem::Bin(Bin::Max), &[v, l], pos)?;
    }
    if let Some(h) = hi {
        v = elementwise(it, Elem::Bin(Bin::Min), &[v, h], pos)?;
    }
    Ok(v)
}

fn cumsum(it: &mut Interp, t: &Tensor, dim: i64, dtype: Option<DType>, pos: Pos) -> R<Value> {
    let d = dim_of(dim, t.shape.len(), pos)?;
    let dt = dtype.unwrap_or(if t.dtype.is_float() { t.dtype } else { DType::I64 });
    let mut src = t.clone();
    src.data = src.data.iter().map(|&v| cast(v, dt)).collect();
    src.dtype = dt;
    it.charge(pos, t.numel())?;
    let out = along(&src, d, |lane| {
        let mut acc = if dt.is_float() { Sc::F(0.0) } else { Sc::I(0) };
        for v in lane.iter_mut() {
            acc = match (acc, *v) {
                (Sc::I(a), Sc::I(b)) => Sc::I(dt.wrap(a.wrapping_add(b))),
                (a, b) => Sc::F(dt.round(a.as_f64() + b.as_f64())),
            };
            *v = acc;
        }
    });
    Ok(Value::tensor(out))
}

/// `repeat_interleave(..., output_size=k)`: the result's length along the repeated dimension must
/// be `k`, else torch raises.
fn output_size_agrees(out: Value, dim: Option<i64>, output_size: Option<Value>, pos: Pos) -> R<Value> {
    let Some(k) = output_size.filter(|v| !matches!(v, Value::None)) else { return Ok(out) };
    let k = to_int(&k, pos)?;
    let got = match &out {
        Value::Tensor(t) => {
            let t = t.borrow();
            let d = dim_of(dim.unwrap_or(0), t.shape.len(), pos)?;
            t.shape.get(d).copied().unwrap_or(1) as i64
        }
        _ => return unsup(pos, "`output_size=` of this repeat_interleave is not modelled"),
    };
    if got != k {
        return exc(pos, "repeat_interleave: allocated size does not match required size (RuntimeError)");
    }
    Ok(out)
}

/// `repeat_interleave(input, repeats, dim, output_size=)`, the function and the method.
fn repeat_interleave(
    it: &mut Interp,
    input: &Value,
    reps: Option<Value>,
    dim: Option<i64>,
    output_size: Option<Value>,
    pos: Pos,
) -> R<Value> {
    let out = repeat_interleave_of(it, input, reps, dim, pos)?;
    output_size_agrees(out, dim, output_size, pos)
}

fn repeat_interleave_of(it: &mut Interp, input: &Value, reps: Option<Value>, dim: Option<i64>, pos: Pos) -> R<Value> {
    let t = tensor_of(input, pos)?;
    let Some(reps) = reps else {
        // repeat_interleave(repeats): arange(len) repeated.
        let counts: Vec<i64> = t.data.iter().map(|v| v.as_i64()).collect();
        let idx = Tensor::new(DType::I64, vec![counts.len()], (0..counts.len() as i64).map(Sc::I).collect());
        return repeat_along(it, &idx, 0, &counts, pos);
    };
    // A single repeat (an int, or a tensor of one element) serves every slice.
    let (single, each): (Option<i64>, Vec<i64>) = match &reps {
        Value::Int(k) => (Some(*k), Vec::new()),
        Value::Tensor(r) => {
            let r = r.borrow();
            if r.shape.len() > 1 {
                return exc(pos, "repeat_interleave: repeats must be 0-dim or 1-dim tensor (RuntimeError)");
            }
            if r.numel() == 1 {
                (Some(r.data[0].as_i64()), Vec::new())
            } else {
                (None, r.data.iter().map(|v| v.as_i64()).collect())
            }
        }
        Value::List(_) | Value::Tuple(_) => {
            (None, tensor_from(&reps, Some(DType::I64), pos)?.data.iter().map(|v| v.as_i64()).collect())
        }
        other => {
            return exc(pos, format!("repeats must be an int or a tensor, not a {} (TypeError)", other.type_name()));
        }
    };
    // No `dim`: the input flattened; a 0-d input is one element.
    let (base, d) = match dim {
        None => (Tensor::new(t.dtype, vec![t.numel()], t.data.clone()), 0),
        Some(k) if t.shape.is_empty() => return tensor_ops::no_dims(k, pos),
        Some(k) => {
            let d = dim_of(k, t.shape.len(), pos)?;
            (t, d)
        }
    };
    let counts = match single {
        Some(k) => vec![k; base.shape[d]],
        None => each,
    };
    repeat_along(it, &base, d, &counts, pos)
}

/// Each slice `i` of `t` along `d` repeated `counts[i]` times.
fn repeat_along(it: &mut Interp, t: &Tensor, d: usize, counts: &[i64], pos: Pos) -> R<Value> {
    if counts.len() != t.shape[d] {
        return exc(
            pos,
            format!(
                "repeats must have the same size as input along dim ({} vs {}) (RuntimeError)",
                counts.len(),
                t.shape[d]
            ),
        );
    }
    if counts.iter().any(|&c| c < 0) {
        return exc(pos, "repeats can not be negative (RuntimeError)");
    }
    let Some(total) = counts.iter().try_fold(0i64, |a, &c| a.checked_add(c)) else {
        return limit(pos, "repeat_interleave: the repeats add up past 64 bits");
    };
    let outer: usize = t.shape[..d].iter().product();
    let inner: usize = t.shape[d + 1..].iter().product();
    let mut shape = t.shape.clone();
    shape[d] = usize::try_from(total).unwrap_or(usize::MAX);
    checked_numel(&shape).or_else(|m| limit(pos, m))?;
    it.charge(pos, shape.iter().product())?;
    let len = t.shape[d];
    let mut data = Vec::with_capacity(shape.iter().product());
    for o in 0..outer {
        for (i, &c) in counts.iter().enumerate() {
            let at = (o * len + i) * inner;
            for _ in 0..c {
                data.extend_from_slice(&t.data[at..at + inner]);
            }
        }
    }
    Ok(Value::tensor(Tensor::new(t.dtype, shape, data)))
}

/// A Python builtin; those whose result does not depend on the order of what they iterate may
/// iterate a set whose order is not modelled.
fn py_builtin(it: &mut Interp, b: &str, a: Args) -> R<Value> {
    // With a key, ties keep the order of iteration: not order-free.
    let order_free = matches!(b, "any" | "all" | "len")
        || (matches!(b, "sorted" | "min" | "max") && a.kw.iter().all(|(k, _)| &**k == "reverse"));
    it.sets.order_free += u32::from(order_free);
    let r = py_builtin_inner(it, b, a);
    it.sets.order_free -= u32::from(order_free);
    r
}

fn py_builtin_inner(it: &mut Interp, b: &str, a: Args) -> R<Value> {
    let pos = a.at;
    Ok(match b {
        "print" => Value::None,
        "staticmethod" | "classmethod" | "property" => {
            let f = a.need(0, "function")?;
            let kind: &'static str = match b {
                "staticmethod" => "staticmethod",
                "classmethod" => "classmethod",
                _ => "property",
            };
            Value::Wrapped(Rc::new((kind, f)))
        }
        "object" => return unsup(pos, "instances of `object` are not supported"),
        "type" => match a.pos.as_slice() {
            [v] if a.kw.is_empty() => super::types::type_of(it, v, pos)?,
            _ => return unsup(pos, "`type` with other than one argument (a new class) is not modelled"),
        },
        "isinstance" => {
            let (v, t) = (a.need(0, "obj")?, a.need(1, "class_or_tuple")?);
            if let Value::Unavailable(u) = &v {
                return unsup(pos, unavailable_msg(u));
            }
            let mut visited = 0;
            let r = super::types::isinstance(it, &v, &t, 0, &mut visited);
            // A visit costs about four tensor elements' time.
            it.charge_work(pos, visited.saturating_mul(4), "types isinstance compared")?;
            match r {
                Some(r) => Value::Bool(r),
                None => {
                    return unsup(
                        pos,
                        format!(
                            "isinstance against a {} that is not a type hasseflow models (or a tuple of them nested \
                             under {} deep): not modelled",
                            t.type_name(),
                            super::rt::MAX_VALUE_DEPTH
                        ),
                    );
                }
            }
        }
        e if super::types::is_exception_name(e) => super::types::builtin_exception(e, a.pos.clone()),
        "len" => match a.need(0, "obj")? {
            Value::Str(s) => Value::Int(s.chars().count() as i64),
            Value::List(l) => Value::Int(l.borrow().len() as i64),
            Value::Tuple(t) => Value::Int(t.len() as i64),
            Value::Dict(d) => Value::Int(d.borrow().len() as i64),
            Value::Range(x, y, s) => Value::Int(range_len(x, y, s)),
            Value::Class(c) if c.is_enum() => Value::Int(c.members.borrow().len() as i64),
            Value::Tensor(t) => {
                let t = t.borrow();
                match t.shape.first() {
                    Some(&d) => Value::Int(d as i64),
                    None => return exc(pos, "len() of a 0-d tensor (TypeError)"),
                }
            }
            Value::Traced(..) => return exc(pos, "len() of a 0-d index tensor (TypeError)"),
            Value::Unavailable(u) => return unsup(pos, unavailable_msg(&u)),
            other => return exc(pos, format!("a {} has no len() (TypeError)", other.type_name())),
        },
        "range" => {
            let ints = a.pos.iter().map(|v| to_int(v, pos)).collect::<R<Vec<_>>>()?;
            let (s, e, st) = match ints.as_slice() {
                [e] => (0, *e, 1),
                [s, e] => (*s, *e, 1),
                [s, e, st] => (*s, *e, *st),
                _ => return exc(pos, "range expects 1 to 3 arguments (TypeError)"),
            };
            if st == 0 {
                return exc(pos, "range() arg 3 must not be zero (ValueError)");
            }
            Value::Range(s, e, st)
        }
        "abs" => match a.need(0, "x")? {
            Value::Int(i) => Value::Int(i.checked_abs().ok_or_else(|| Fail {
                kind: FailKind::Unsupported,
                msg: "an integer over 64 bits".into(),
                pos,
                exc_type: None,
            })?),
            Value::Bool(x) => Value::Int(i64::from(x)),
            Value::Float(f) => Value::Float(f.abs()),
            v @ (Value::Tensor(_) | Value::Traced(..)) => elementwise(it, Elem::Un(Un::Abs), &[v], pos)?,
            Value::Unavailable(u) => return unsup(pos, unavailable_msg(&u)),
            other => return exc(pos, format!("bad operand type for abs(): {} (TypeError)", other.type_name())),
        },
        "min" | "max" => {
            let items = if a.pos.len() == 1 { list_of(it, &a.pos[0], pos)? } else { a.pos.clone() };
            if items.is_empty() {
                return match a.kw("default") {
                    Some(d) => Ok(d),
                    None => exc(pos, format!("{b}() arg is an empty sequence (ValueError)")),
                };
            }
            let key = a.kw("key");
            let mut best = items[0].clone();
            let mut best_k = match &key {
                Some(k) => it.call(k, vec![best.clone()], Vec::new(), pos)?,
                None => best.clone(),
            };
            for v in items.into_iter().skip(1) {
                let k = match &key {
                    Some(kf) => it.call(kf, vec![v.clone()], Vec::new(), pos)?,
                    None => v.clone(),
                };
                let c = super::ops::compare(it, if b == "min" { Cmp::Lt } else { Cmp::Gt }, &k, &best_k, pos)?;
                if it.truthy(&c, pos)? {
                    best = v;
                    best_k = k;
                }
            }
            best
        }
        "int" => match a.get(0, "x") {
            None => Value::Int(0),
            Some(Value::Float(f)) => {
                if !f.is_finite() {
                    return exc(pos, "cannot convert an infinite or NaN float to an integer (ValueError)");
                }
                if f.abs() >= 9.2e18 {
                    return unsup(pos, "an integer over 64 bits");
                }
                Value::Int(f.trunc() as i64)
            }
            Some(Value::Str(s)) => {
                let base = match a.get(1, "base") {
                    None => 10,
                    Some(b) => to_int(&b, pos)?,
                };
                match parse_int(&s, base) {
                    Some(Some(v)) => Value::Int(v),
                    Some(None) => {
                        return unsup(pos, "an integer over 64 bits (hasseflow models Python integers up to 64 bits)");
                    }
                    None if base != 0 && !(2..=36).contains(&base) => {
                        return exc(pos, "int() base must be >= 2 and <= 36, or 0 (ValueError)");
                    }
                    None => {
                        return exc(
                            pos,
                            format!(
                                "invalid literal for int() with base {base}: '{}' (ValueError)",
                                super::lex::short(&s)
                            ),
                        );
                    }
                }
            }
            Some(_) if a.get(1, "base").is_some() => {
                return exc(pos, "int() can't convert non-string with explicit base (TypeError)");
            }
            Some(Value::Tensor(t)) if t.borrow().numel() == 1 => Value::Int(t.borrow().data[0].as_i64()),
            Some(v) => Value::Int(to_int(&v, pos)?),
        },
        "float" => match a.get(0, "x") {
            None => Value::Float(0.0),
            Some(Value::Str(s)) => match s.trim() {
                "inf" | "+inf" | "infinity" => Value::Float(f64::INFINITY),
                "-inf" | "-infinity" => Value::Float(f64::NEG_INFINITY),
                t => match t.parse::<f64>() {
                    Ok(v) => Value::Float(v),
                    Err(_) => return exc(pos, "could not convert string to float (ValueError)"),
                },
            },
            Some(v) => Value::Float(to_f64(&v, pos)?),
        },
        "bool" => match a.get(0, "x") {
            None => Value::Bool(false),
            Some(v) => Value::Bool(it.truthy(&v, pos)?),
        },
        "str" => match a.get(0, "object") {
            Some(Value::Instance(i))
                if i.class.native.as_deref().and_then(super::types::exception_parent).is_some() =>
            {
                let one = |x: &Value| match x {
                    Value::Str(_) | Value::Int(_) | Value::Bool(_) | Value::None => Some(py_str(x)),
                    _ => None,
                };
                match super::types::exception_str(&i, one) {
                    Some(s) => Value::Str(s.into()),
                    None => return unsup(pos, format!("`str()` of this `{}` object is not modelled", i.class.name)),
                }
            }
            Some(Value::Unavailable(u)) => return unsup(pos, unavailable_msg(&u)),
            Some(
                o @ (Value::List(_)
                | Value::Tuple(_)
                | Value::Dict(_)
                | Value::Tensor(_)
                | Value::Traced(..)
                | Value::TracedVec(_)
                | Value::Instance(_)
                | Value::Class(_)
                | Value::Func(_)
                | Value::Native(_)
                | Value::Partial(_)),
            ) if !o.is_member() => return unsup(pos, format!("`str()` of a {} is not modelled", o.type_name())),
            o => Value::Str(py_str(&o.unwrap_or(Value::Str("".into()))).into()),
        },
        "list" | "tuple" | "set" | "frozenset" => {
            let src = a.get(0, "iterable");
            let is_set = matches!(b, "set" | "frozenset");
            it.sets.order_free += u32::from(is_set);
            let items = match &src {
                Some(v) => list_of(it, v, pos),
                None => Ok(Vec::new()),
            };
            it.sets.order_free -= u32::from(is_set);
            let items = items?;
            match b {
                "tuple" => Value::Tuple(Rc::new(items)),
                "list" => Value::List(shared(items)),
                _ => super::pyset::make(it, items, src.as_ref(), false, pos)?,
            }
        }
        "dict" => {
            let mut out = PyDict::default();
            if let Some(src) = a.pos.first() {
                match src {
                    Value::Dict(d) => out = d.borrow().clone(),
                    other => {
                        for pair in list_of(it, other, pos)? {
                            let kv = list_of(it, &pair, pos)?;
                            if kv.len() != 2 {
                                return exc(pos, "dict() items must be pairs (ValueError)");
                            }
                            dict_set(&mut out, kv[0].clone(), kv[1].clone(), pos)?;
                        }
                    }
                }
            }
            a.use_all();
            for (k, v) in &a.kw {
                dict_set(&mut out, Value::Str(k.clone()), v.clone(), pos)?;
            }
            Value::Dict(shared(out))
        }
        "sum" => {
            let items = list_of(it, &a.need(0, "iterable")?, pos)?;
            let mut acc = a.get(1, "start").unwrap_or(Value::Int(0));
            for v in items {
                acc = super::ops::binary(it, super::ast::BinOp::Add, acc, v, pos)?;
            }
            acc
        }
        "enumerate" => {
            let items = list_of(it, &a.need(0, "iterable")?, pos)?;
            let start = a.int(1, "start")?.unwrap_or(0);
            Value::List(shared(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| Value::Tuple(Rc::new(vec![Value::Int(start + i as i64), v])))
                    .collect(),
            ))
        }
        "zip" => {
            let lists = a.pos.iter().map(|v| list_of(it, v, pos)).collect::<R<Vec<_>>>()?;
            let n = lists.iter().map(Vec::len).min().unwrap_or(0);
            Value::List(shared(
                (0..n).map(|i| Value::Tuple(Rc::new(lists.iter().map(|l| l[i].clone()).collect()))).collect(),
            ))
        }
        "sorted" | "reversed" => {
            let mut items = list_of(it, &a.need(0, "iterable")?, pos)?;
            if b == "reversed" {
                items.reverse();
            } else {
                // Python's order: ints exactly (not as floats: 2**53 + 1 > 2**53), an int and a
                // float exactly, and stable both ways (`reverse=True` keeps equal elements in their
                // order). NaN has no order CPython's sort keeps to a rule: refused.
                // Strings by code point (Rust's order of UTF-8 bytes); a str among numbers is
                // Python's TypeError (some comparison of the two kinds is bound to happen).
                #[derive(Clone)]
                enum Key {
                    I(i64),
                    F(f64),
                    S(Rc<str>),
                }
                let mut err = None;
                let mut keyed: Vec<(Key, Value)> = Vec::new();
                for v in items.drain(..) {
                    match &v {
                        Value::Str(x) => keyed.push((Key::S(x.clone()), v)),
                        Value::Int(i) => keyed.push((Key::I(*i), v)),
                        Value::Float(f) if f.is_nan() => err = Some("NaN"),
                        Value::Float(f) => keyed.push((Key::F(*f), v)),
                        Value::Bool(x) => keyed.push((Key::I(i64::from(*x)), v)),
                        Value::Instance(_) => match v.clone().plain() {
                            Value::Int(x) => keyed.push((Key::I(x), v)),
                            _ => err = Some(v.type_name()),
                        },
                        _ => err = Some(v.type_name()),
                    }
                }
                if let Some(t) = err {
                    return unsup(pos, format!("sorted() of {t} values is not supported"));
                }
                let strs = keyed.iter().filter(|(k, _)| matches!(k, Key::S(_))).count();
                if strs > 0 && strs < keyed.len() {
                    return exc(pos, "'<' not supported between instances of 'str' and a number (TypeError)");
                }
                let order = |x: &Key, y: &Key| {
                    use std::cmp::Ordering::Equal;
                    match (x, y) {
                        (Key::S(a), Key::S(b)) => a.cmp(b),
                        (&Key::I(a), &Key::I(b)) => a.cmp(&b),
                        (&Key::F(a), &Key::F(b)) => a.partial_cmp(&b).unwrap_or(Equal),
                        (&Key::I(a), &Key::F(b)) => int_float_cmp(a, b).unwrap_or(Equal),
                        (&Key::F(a), &Key::I(b)) => int_float_cmp(b, a).map_or(Equal, std::cmp::Ordering::reverse),
                        _ => Equal,
                    }
                };
                // The reader's one sort (each closure given to `sort_by` is a sort of its own in
                // the binary).
                let reverse = matches!(a.kw("reverse"), Some(Value::Bool(true)));
                let cmp = |x: usize, y: usize| {
                    if reverse { order(&keyed[y].0, &keyed[x].0) } else { order(&keyed[x].0, &keyed[y].0) }
                };
                items =
                    tensor_tail::sorted_positions(keyed.len(), &cmp).into_iter().map(|i| keyed[i].1.clone()).collect();
            }
            Value::List(shared(items))
        }
        "round" => {
            let x = a.need(0, "number")?;
            let nd = a.int(1, "ndigits")?;
            match (x, nd) {
                (Value::Int(i), Some(d)) if d < 0 => Value::Int(round_int(i, d)),
                (Value::Int(i), _) => Value::Int(i),
                (Value::Bool(v), _) => Value::Int(i64::from(v)),
                (Value::Float(f), None) => {
                    let r = f.round();
                    let r = if (f - f.trunc()).abs() == 0.5 { 2.0 * (f / 2.0).round() } else { r };
                    if !r.is_finite() || r.abs() >= 9.2e18 {
                        return exc(pos, "cannot convert float to integer (OverflowError)");
                    }
                    Value::Int(r as i64)
                }
                (Value::Float(f), Some(d)) => match round_float(f, d) {
                    Some(r) => Value::Float(r),
                    None => {
                        return unsup(
                            pos,
                            "round() of a float to digits where it lies on a decimal tie is not modelled (CPython \
                             rounds its exact binary value)",
                        );
                    }
                },
                (v @ (Value::Tensor(_) | Value::Traced(..)), _) => elementwise(it, Elem::Un(Un::Round), &[v], pos)?,
                (other, _) => return exc(pos, format!("round() of a {} (TypeError)", other.type_name())),
            }
        }
        "divmod" => {
            let (x, y) = (a.need(0, "a")?, a.need(1, "b")?);
            let q = super::ops::binary(it, super::ast::BinOp::FloorDiv, x.clone(), y.clone(), pos)?;
            let r = super::ops::binary(it, super::ast::BinOp::Mod, x, y, pos)?;
            Value::Tuple(Rc::new(vec![q, r]))
        }
        "pow" => match a.get(2, "mod") {
            None | Some(Value::None) => {
                super::ops::binary(it, super::ast::BinOp::Pow, a.need(0, "base")?, a.need(1, "exp")?, pos)?
            }
            Some(m) => {
                let (Some(x), Some(e), Some(m)) = (py_int(&a.need(0, "base")?), py_int(&a.need(1, "exp")?), py_int(&m))
                else {
                    return exc(pos, "pow() 3rd argument not allowed unless all arguments are integers (TypeError)");
                };
                if m == 0 {
                    return exc(pos, "pow() 3rd argument cannot be 0 (ValueError)");
                }
                if e < 0 {
                    return unsup(
                        pos,
                        "pow() with a negative exponent and a modulus (a modular inverse) is not modelled",
                    );
                }
                let m = i128::from(m);
                let (mut r, mut b, mut e) = (1i128.rem_euclid(m.abs()), i128::from(x).rem_euclid(m.abs()), e);
                while e > 0 {
                    if e & 1 == 1 {
                        r = r * b % m.abs();
                    }
                    b = b * b % m.abs();
                    e >>= 1;
                }
                // Python's result has the modulus's sign.
                Value::Int((if m < 0 && r != 0 { r + m } else { r }) as i64)
            }
        },
        "any" | "all" => {
            let items = list_of(it, &a.need(0, "iterable")?, pos)?;
            let mut r = b == "all";
            for v in items {
                if it.truthy(&v, pos)? != (b == "all") {
                    r = !r;
                    break;
                }
            }
            Value::Bool(r)
        }
        "callable" => Value::Bool(a.need(0, "obj")?.is_callable()),
        "map" | "filter" => {
            let f = a.need(0, "function")?;
            let items = list_of(it, &a.need(1, "iterable")?, pos)?;
            let mut out = Vec::new();
            for v in items {
                let r = it.call(&f, vec![v.clone()], Vec::new(), pos)?;
                if b == "map" {
                    out.push(r);
                } else if it.truthy(&r, pos)? {
                    out.push(v);
                }
            }
            Value::List(shared(out))
        }
        "getattr" => {
            let o = a.need(0, "object")?;
            let Value::Str(n) = a.need(1, "name")? else {
                return exc(pos, "getattr(): attribute name must be a string (TypeError)");
            };
            match (getattr(it, &o, &n, pos), a.get(2, "default")) {
                (Ok(v), _) => v,
                (Err(e), Some(d)) => attribute_error(e, pos).map(|()| d)?,
                (Err(e), None) => return Err(e),
            }
        }
        "setattr" => {
            let o = a.need(0, "obj")?;
            let Value::Str(n) = a.need(1, "name")? else {
                return exc(pos, "setattr(): attribute name must be string (TypeError)");
            };
            set_attr(&o, &n, a.need(2, "value")?, pos)?;
            Value::None
        }
        "super" => match a.pos.as_slice() {
            [Value::Class(c), obj] => super_of(c, obj.clone(), pos)?,
            [] => return unsup(pos, "super() without arguments outside a method is not modelled"),
            _ => return unsup(pos, "super() of other arguments than a class and its instance is not modelled"),
        },
        // `object.__init__`, what `super().__init__()` finds past a class's own bases.
        "object_init" => {
            if !a.pos.is_empty() {
                return exc(
                    pos,
                    "object.__init__() takes exactly one argument (the instance to initialize) (TypeError)",
                );
            }
            Value::None
        }
        "hasattr" => {
            let o = a.need(0, "obj")?;
            let Value::Str(n) = a.need(1, "name")? else {
                return exc(pos, "hasattr(): attribute name must be string (TypeError)");
            };
            match getattr(it, &o, &n, pos) {
                Ok(_) => Value::Bool(true),
                Err(e) => attribute_error(e, pos).map(|()| Value::Bool(false))?,
            }
        }
        "slice" => {
            let v: Vec<Value> = a.pos.clone();
            match v.len() {
                1 => Value::Slice(Rc::new([Value::None, v[0].clone(), Value::None])),
                2 => Value::Slice(Rc::new([v[0].clone(), v[1].clone(), Value::None])),
                3 => Value::Slice(Rc::new([v[0].clone(), v[1].clone(), v[2].clone()])),
                _ => return exc(pos, "slice expects 1 to 3 arguments (TypeError)"),
            }
        }
        _ => return unsup(pos, format!("the builtin `{b}` is not supported")),
    })
}

/// `Ok` when `e` is an `AttributeError` (which `getattr` with a default and `hasattr` catch), else
/// `e` itself (other exceptions propagate), or a refusal where the type of what was raised is not
/// known.
fn attribute_error(e: Fail, pos: Pos) -> R<()> {
    match super::types::is_attribute_error(&e) {
        Some(true) => Ok(()),
        Some(false) => Err(e),
        None => unsup(pos, format!("not known to be an AttributeError, or not: {}", e.msg)),
    }
}

/// Tensor methods that return their receiver when nothing changes (same dtype, already there).
const SELF_WHEN_SAME: [&str; 13] = [
    "to",
    "type",
    "long",
    "int",
    "short",
    "bool",
    "float",
    "double",
    "byte",
    "cpu",
    "cuda",
    "contiguous",
    "requires_grad_",
];

/// A method call, with torch's aliasing: a view method's result shares its receiver's memory
/// ([`super::views`]), and a method that changes nothing returns the receiver itself.
fn method(it: &mut Interp, name: &str, recv: &Value, a: Args) -> R<Value> {
    let m = name.split_once('.').map_or(name, |(_, m)| m);
    let Value::Tensor(cell) = recv else { return method_plain(it, name, recv, a) };
    if name.starts_with("tensor.") && SELF_WHEN_SAME.contains(&m) {
        if m == "contiguous" && !super::views::need_contiguous(it, cell, "contiguous", a.at)? {
            return method_plain(it, name, recv, a);
        }
        let dt = cell.borrow().dtype;
        let r = method_plain(it, name, recv, a)?;
        return Ok(match &r {
            Value::Tensor(t) if t.borrow().dtype == dt => recv.clone(),
            _ => r,
        });
    }
    if !name.starts_with("tensor.")
        || !matches!(
            m,
            "view" | "reshape" | "flatten" | "unsqueeze" | "squeeze" | "t" | "transpose" | "permute" | "detach"
        )
    {
        return method_plain(it, name, recv, a);
    }
    let pos = a.at;
    let copy = Args { pos: a.pos.clone(), kw: a.kw.clone(), at: pos, name: a.name.clone(), used: a.used.clone() };
    let src = cell.borrow().clone();
    let r = if m == "detach" { Value::tensor(src.clone()) } else { method_plain(it, name, recv, a)? };
    let contiguous = super::views::need_contiguous(it, cell, m, pos)?;
    if matches!(m, "view" | "reshape" | "flatten") && !contiguous {
        // By the strides: a view where torch can make one; else `view` raises and `reshape` or
        // `flatten` copies.
        let Value::Tensor(out) = &r else { return Ok(r) };
        let shape = out.borrow().shape.clone();
        match super::views::viewable(it, cell, &shape) {
            Some(true) => {}
            Some(false) if m == "view" => {
                return exc(
                    pos,
                    "view size is not compatible with input tensor's size and stride (at least one dimension \
                     spans across two contiguous subspaces); use .reshape(...) instead (RuntimeError)",
                );
            }
            Some(false) => return Ok(r),
            None => {
                // torch decides by strides hasseflow does not keep: a write through either is refused.
                super::views::register(it, cell, &r, None);
                return Ok(r);
            }
        }
    }
    let map = if m == "detach" {
        Some((0..src.numel()).collect())
    } else {
        super::views::positions(it, &src, |it, io| method_plain(it, name, &Value::tensor(io), copy), pos)?
    };
    super::views::register(it, cell, &r, map);
    Ok(r)
}

/// `t` with its dimensions in `order` (dimension `k` of the result is `order[k]` of `t`), copied.
fn permuted(t: &Tensor, order: &[usize]) -> Tensor {
    let shape: Vec<usize> = order.iter().map(|&d| t.shape[d]).collect();
    let strides = t.strides();
    let mut data = Vec::with_capacity(t.data.len());
    let mut idx = vec![0; shape.len()];
    for _ in 0..t.data.len() {
        data.push(t.data[idx.iter().zip(order).map(|(&i, &d)| i * strides[d]).sum::<usize>()]);
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Tensor::new(t.dtype, shape, data)
}

fn method_plain(it: &mut Interp, name: &str, recv: &Value, a: Args) -> R<Value> {
    let pos = a.at;
    let (kind, m) = name.split_once('.').unwrap_or(("", name));
    match (kind, recv) {
        ("size", Value::Tuple(t)) => {
            // `torch.Size.numel()`: the product of the dimensions.
            let mut n: i64 = 1;
            for d in t.iter() {
                let Some(m) = n.checked_mul(to_int(d, pos)?) else {
                    return unsup(pos, "a torch.Size whose product is over 64 bits");
                };
                n = m;
            }
            return Ok(Value::Int(n));
        }
        ("list", Value::List(l)) => {
            return Ok(match m {
                "append" => {
                    if l.borrow().len() >= MAX_ITEMS {
                        return limit(pos, "a list over the item limit");
                    }
                    it.alloc_items(pos, 1)?;
                    l.borrow_mut().push(a.need(0, "object")?);
                    Value::None
                }
                "extend" => {
                    let items = list_of(it, &a.need(0, "iterable")?, pos)?;
                    if l.borrow().len() + items.len() > MAX_ITEMS {
                        return limit(pos, "a list over the item limit");
                    }
                    it.alloc_items(pos, items.len())?;
                    l.borrow_mut().extend(items);
                    Value::None
                }
                "insert" => {
                    let i = to_int(&a.need(0, "index")?, pos)?;
                    let v = a.need(1, "object")?;
                    let n = l.borrow().len() as i64;
                    if n as usize >= MAX_ITEMS {
                        return limit(pos, "a list over the item limit");
                    }
                    it.alloc_items(pos, 1)?;
                    let j = if i < 0 { (i + n).max(0) } else { i.min(n) };
                    l.borrow_mut().insert(j as usize, v);
                    Value::None
                }
                "pop" => {
                    let n = l.borrow().len() as i64;
                    let i = a.int(0, "index")?.unwrap_or(-1);
                    let j = if i < 0 { i + n } else { i };
                    if j < 0 || j >= n {
                        return exc(pos, "pop index out of range (IndexError)");
                    }
                    l.borrow_mut().remove(j as usize)
                }
                "copy" => Value::List(shared(l.borrow().clone())),
                "reverse" => {
                    l.borrow_mut().reverse();
                    Value::None
                }
                "index" | "count" => {
                    let x = a.need(0, "value")?;
                    let items = l.borrow().clone();
                    if m == "count" {
                        if a.pos.len() > 1 {
                            return exc(
                                pos,
                                format!("list.count() takes exactly one argument ({} given) (TypeError)", a.pos.len()),
                            );
                        }
                        Value::Int(items.iter().filter(|v| py_eq(v, &x)).count() as i64)
                    } else {
                        if a.pos.len() > 3 {
                            return exc(
                                pos,
                                format!("index expected at most 3 arguments, got {} (TypeError)", a.pos.len()),
                            );
                        }
                        // `list.index(x, start, stop)`: the bounds as a slice clamps them.
                        let len = items.len() as i64;
                        let bound = |i: usize, dflt: i64| -> R<i64> {
                            let v = match a.pos.get(i) {
                                Some(v) => to_int(v, pos)?,
                                None => dflt,
                            };
                            Ok(if v < 0 { (v + len).max(0) } else { v.min(len) })
                        };
                        let (lo, hi) = (bound(1, 0)?, bound(2, len)?);
                        let found = (lo..hi.max(lo)).find(|&i| py_eq(&items[i as usize], &x));
                        match found {
                            Some(p) => Value::Int(p),
                            None => return exc(pos, "value is not in list (ValueError)"),
                        }
                    }
                }
                _ => return unsup(pos, format!("the list method `{m}` is not supported")),
            });
        }
        ("dict", Value::Dict(d)) => {
            return Ok(match m {
                "get" => {
                    let k = a.need(0, "key")?;
                    let found = d.borrow().get(&k, pos)?;
                    found.unwrap_or_else(|| a.get(1, "default").unwrap_or(Value::None))
                }
                "keys" => Value::List(shared(d.borrow().iter().map(|(k, _)| k.clone()).collect())),
                "values" => Value::List(shared(d.borrow().iter().map(|(_, v)| v.clone()).collect())),
                "items" => Value::List(shared(
                    d.borrow().iter().map(|(k, v)| Value::Tuple(Rc::new(vec![k.clone(), v.clone()]))).collect(),
                )),
                "update" => {
                    let src = match a.pos.first() {
                        Some(Value::Dict(s)) => s.borrow().to_vec(),
                        _ => Vec::new(),
                    };
                    let mut db = d.borrow_mut();
                    for (k, v) in src {
                        dict_set(&mut db, k, v, pos)?;
                    }
                    a.use_all();
                    for (k, v) in &a.kw {
                        dict_set(&mut db, Value::Str(k.clone()), v.clone(), pos)?;
                    }
                    Value::None
                }
                "setdefault" => {
                    let k = a.need(0, "key")?;
                    let found = d.borrow().get(&k, pos)?;
                    match found {
                        Some(v) => v,
                        None => {
                            let v = a.get(1, "default").unwrap_or(Value::None);
                            dict_set(&mut d.borrow_mut(), k, v.clone(), pos)?;
                            v
                        }
                    }
                }
                "copy" => Value::Dict(shared(d.borrow().clone())),
                _ => return unsup(pos, format!("the dict method `{m}` is not supported")),
            });
        }
        ("str", Value::Str(s)) => {
            return Ok(match m {
                // ASCII alone: Unicode's case tables cost the mask_mod reader's module 13 KB
                // gzipped, for the names and modes mask code spells in ASCII.
                "upper" | "lower" if !s.is_ascii() => {
                    return unsup(pos, format!("str.{m}() of a string that is not ASCII is not modelled"));
                }
                "upper" => Value::Str(s.to_ascii_uppercase().into()),
                "lower" => Value::Str(s.to_ascii_lowercase().into()),
                "startswith" | "endswith" => {
                    let Value::Str(p) = a.need(0, "prefix")? else { return unsup(pos, "startswith of a non-string") };
                    Value::Bool(if m == "startswith" { s.starts_with(&*p) } else { s.ends_with(&*p) })
                }
                "join" => {
                    let items = list_of(it, &a.need(0, "iterable")?, pos)?;
                    let parts: Vec<String> = items.iter().map(py_str).collect();
                    let len = parts.iter().map(String::len).sum::<usize>() + s.len() * parts.len();
                    if len > MAX_ITEMS {
                        return limit(pos, "a string over the size limit");
                    }
                    it.alloc(pos, len)?;
                    Value::Str(parts.join(s).into())
                }
                _ => return unsup(pos, format!("the str method `{m}` is not supported")),
            });
        }
        _ => {}
    }
    // Tensor methods (concrete or traced).
    if let Value::TracedVec(v) = recv
        && let Some(r) = super::vector::method(it, m, v, a.int(0, "dim").ok().flatten(), pos)?
    {
        return Ok(r);
    }
    if let Some(v) = tensor_tail::method(it, m, recv, &a)? {
        return Ok(v);
    }
    let mut with_self = vec![recv.clone()];
    with_self.extend(a.pos.iter().cloned());
    let a2 = Args { pos: with_self, kw: a.kw.clone(), at: pos, name: a.name.clone(), used: a.used.clone() };
    let traced = matches!(recv, Value::Traced(..));
    let cast_to = |it: &mut Interp, d: DType| elementwise(it, Elem::Cast(d), std::slice::from_ref(recv), pos);
    Ok(match m {
        "to" | "type" => {
            let mut target = a.kw("dtype");
            if matches!(a.kw("copy"), Some(Value::Bool(true))) {
                return unsup(pos, "`.to(copy=True)` is not modelled");
            }
            for v in &a.pos {
                match v {
                    Value::Dtype(_) => target = Some(v.clone()),
                    Value::Tensor(o) if m == "to" => target = Some(Value::Dtype(o.borrow().dtype)),
                    Value::Traced(_, d) if m == "to" => target = Some(Value::Dtype(*d)),
                    Value::Str(_) | Value::Device | Value::None | Value::Bool(_) if m == "to" => {}
                    other => {
                        return unsup(
                            pos,
                            format!("`.{m}(...)` with a {} argument is not modelled", other.type_name()),
                        );
                    }
                }
            }
            match target {
                Some(Value::Dtype(d)) => cast_to(it, d)?,
                _ => recv.clone(),
            }
        }
        "cuda" | "cpu" | "contiguous" | "detach" | "clone" | "requires_grad_" | "pin_memory" => {
            if let Value::Tensor(t) = recv { Value::tensor(t.borrow().clone()) } else { recv.clone() }
        }
        "long" => cast_to(it, DType::I64)?,
        "int" => cast_to(it, DType::I32)?,
        "short" => cast_to(it, DType::I16)?,
        "bool" => cast_to(it, DType::Bool)?,
        "float" => cast_to(it, DType::F32)?,
        "double" => cast_to(it, DType::F64)?,
        "byte" => cast_to(it, DType::U8)?,
        "new_ones" | "new_zeros" | "new_full" | "new_tensor" | "new_empty" => {
            let dt = a.dtype()?.unwrap_or(match recv {
                Value::Traced(_, d) => *d,
                Value::Tensor(t) => t.borrow().dtype,
                _ => DType::I64,
            });
            if m == "new_tensor" {
                return Ok(Value::tensor(tensor_from(&a.need(0, "data")?, Some(dt), pos)?));
            }
            let size = a.get(0, "size").unwrap_or(Value::Tuple(Rc::new(Vec::new())));
            let shape = shape_args(std::slice::from_ref(&size), pos)?;
            let v = match m {
                "new_full" => scalar_into(&a.need(1, "fill_value")?, dt, pos)?,
                _ => super::unset::fill(it, m),
            };
            Value::tensor(filled(dt, shape, v))
        }
        _ if ELEMENTWISE[..39].contains(&m) => torch_fn(it, m, a2)?,
        "tril" | "triu" if !traced => torch_fn(it, m, a2)?,
        "clamp" | "clip" => clamp(it, recv.clone(), a.get(0, "min"), a.get(1, "max"), pos)?,
        "clamp_min" => clamp(it, recv.clone(), a.get(0, "min"), None, pos)?,
        "clamp_max" => clamp(it, recv.clone(), None, a.get(0, "max"), pos)?,
        "where" => elementwise(it, Elem::Where, &[a.need(0, "condition")?, recv.clone(), a.need(1, "other")?], pos)?,
        "any" | "all" | "sum" | "amax" | "amin" | "argmax" | "argmin" => {
            reduce_typed(it, m, recv.clone(), a.get(0, "dim"), &a)?
        }
        "max" | "min" => min_max(it, m, recv.clone(), a.get(0, "other"), &a)?,
        _ if traced => match m {
            "item" | "tolist" => {
                return exc(pos, format!("`.{m}()` of a value that depends on the indices (vmap refuses this too)"));
            }
            "dim" => Value::Int(0),
            "numel" => Value::Int(1),
            "size" => it.pairs.size(std::iter::empty()),
            "view" | "reshape" | "squeeze" => recv.clone(),
            "unsqueeze" => super::vector::unsqueeze_scalar(recv, a.int(0, "dim")?, pos)?,
            _ => return unsup(pos, format!("`.{m}()` of a traced index value is not supported")),
        },
        _ => {
            let t = tensor_of(recv, pos)?;
            let Value::Tensor(cell) = recv else { return unsup(pos, "a tensor method of a non-tensor") };
            match m {
                "item" => {
                    if t.numel() != 1 {
                        return exc(
                            pos,
                            "a Tensor with more than one element cannot be converted to a Scalar (RuntimeError)",
                        );
                    }
                    scalar_value(t.dtype, t.data[0])
                }
                "tolist" => to_list(&t),
                "dim" | "ndimension" => Value::Int(t.shape.len() as i64),
                "numel" | "nelement" => Value::Int(t.numel() as i64),
                "size" => match a.int(0, "dim")? {
                    Some(d) if t.shape.is_empty() => return tensor_ops::no_dims(d, pos),
                    Some(d) => Value::Int(t.shape[dim_of(d, t.shape.len(), pos)?] as i64),
                    None => it.pairs.size(t.shape.iter().copied()),
                },
                "view" | "reshape" => {
                    let dims: Vec<Value> = match a.pos.as_slice() {
                        [Value::Tuple(tp)] => tp.as_ref().clone(),
                        [Value::List(l)] => l.borrow().clone(),
                        [Value::Dtype(_)] => return unsup(pos, "view as another dtype is not supported"),
                        other => other.to_vec(),
                    };
                    let dims = dims.iter().map(|v| to_int(v, pos)).collect::<R<Vec<_>>>()?;
                    Value::tensor(reshape(&t, &dims, pos)?)
                }
                "flatten" => {
                    let r = t.shape.len().max(1);
                    let lo = dim_of(a.int(0, "start_dim")?.unwrap_or(0), r, pos)?;
                    let hi = dim_of(a.int(1, "end_dim")?.unwrap_or(-1), r, pos)?;
                    if lo > hi {
                        return exc(
                            pos,
                            "flatten() has invalid args: start_dim cannot come after end_dim (RuntimeError)",
                        );
                    }
                    if t.shape.is_empty() {
                        return Ok(Value::tensor(reshape(&t, &[1], pos)?));
                    }
                    let mut dims: Vec<i64> = t.shape[..lo].iter().map(|&d| d as i64).collect();
                    dims.push(t.shape[lo..=hi].iter().product::<usize>() as i64);
                    dims.extend(t.shape[hi + 1..].iter().map(|&d| d as i64));
                    Value::tensor(reshape(&t, &dims, pos)?)
                }
                "unsqueeze" => {
                    let d = a.int(0, "dim")?.unwrap_or(0);
                    let d = dim_of(d, t.shape.len() + 1, pos)?;
                    let mut s = t.shape.clone();
                    s.insert(d, 1);
                    checked_numel(&s).or_else(|m| unsup(pos, m))?;
                    Value::tensor(Tensor::new(t.dtype, s, t.data.clone()))
                }
                "squeeze" => {
                    // `dim`: none (every dimension of length 1), an int, or a tuple or list of them.
                    let given = match a.get(0, "dim") {
                        None => (0..t.shape.len() as i64).map(Value::Int).collect(),
                        Some(Value::None) => {
                            return exc(pos, "squeeze(): dim must be an int or a tuple of ints (TypeError)");
                        }
                        Some(Value::Tuple(l)) => l.to_vec(),
                        Some(Value::List(l)) => l.borrow().clone(),
                        Some(d) => vec![d],
                    };
                    let mut dims = Vec::new();
                    for d in &given {
                        let k = dim_of(to_int(d, pos)?, t.shape.len(), pos)?;
                        if dims.contains(&k) {
                            return unsup(pos, "squeeze with a repeated dimension is not modelled");
                        }
                        dims.push(k);
                    }
                    let s: Vec<usize> = t
                        .shape
                        .iter()
                        .enumerate()
                        .filter(|&(k, &x)| !dims.contains(&k) || x != 1)
                        .map(|(_, &x)| x)
                        .collect();
                    Value::tensor(Tensor::new(t.dtype, s, t.data.clone()))
                }
                "t" | "transpose" | "permute" => {
                    let rank = t.shape.len();
                    let mut order: Vec<usize> = (0..rank).collect();
                    if m == "permute" {
                        let dims = match &a.pos[..] {
                            [] => vec![a.need(0, "dims")?],
                            many => many.to_vec(),
                        };
                        let dims = match &dims[..] {
                            [one @ (Value::List(_) | Value::Tuple(_))] => list_of(it, one, pos)?,
                            _ => dims,
                        };
                        let mut seen = vec![false; rank];
                        if dims.len() != rank {
                            return exc(
                                pos,
                                "permute: the order's length is not the tensor's dimension (RuntimeError)",
                            );
                        }
                        for (k, d) in dims.iter().enumerate() {
                            let d = dim_of(to_int(d, pos)?, rank, pos)?;
                            if std::mem::replace(&mut seen[d], true) {
                                return exc(pos, "permute: repeated dim in the order (RuntimeError)");
                            }
                            order[k] = d;
                        }
                    } else if m == "t" {
                        if rank > 2 {
                            return exc(
                                pos,
                                format!(
                                    "t() expects a tensor with <= 2 dimensions, but self is {rank}D (RuntimeError)"
                                ),
                            );
                        }
                        order.reverse();
                    } else {
                        let d0 = dim_of(a.need(0, "dim0").and_then(|v| to_int(&v, pos))?, rank.max(1), pos)?;
                        let d1 = dim_of(a.need(1, "dim1").and_then(|v| to_int(&v, pos))?, rank.max(1), pos)?;
                        if rank > 0 {
                            order.swap(d0, d1);
                        }
                    }
                    Value::tensor(permuted(&t, &order))
                }
                "cumsum" => cumsum(it, &t, a.int(0, "dim")?.unwrap_or(0), a.dtype()?, pos)?,
                "repeat_interleave" => {
                    repeat_interleave(it, recv, a.get(0, "repeats"), a.int(1, "dim")?, a.kw("output_size"), pos)?
                }
                "fill_" | "zero_" => {
                    let dt = t.dtype;
                    let v = if m == "zero_" {
                        Sc::I(0)
                    } else {
                        // A Python number is checked against the dtype; a tensor's element wraps.
                        let v = a.need(0, "value")?;
                        let s = scalar_of(&v, pos)?.0;
                        if matches!(v, Value::Tensor(_)) { s } else { tensor_ops::held(dt, s, pos)? }
                    };
                    let mut tb = cell.borrow_mut();
                    for x in tb.data.iter_mut() {
                        *x = cast(v, dt);
                    }
                    drop(tb);
                    super::views::written(it, cell, pos)?;
                    recv.clone()
                }
                "fill_diagonal_" => {
                    // Torch's rule: positions `k · step` of the row-major data, `step` the sum of
                    // the strides; `min(dims)` of them, or while inside the data when a tall 2-d
                    // tensor wraps.
                    let v = scalar_into(&a.need(0, "fill_value")?, t.dtype, pos)?;
                    let wrap = match a.get(1, "wrap") {
                        None => false,
                        Some(w) => it.truthy(&w, pos)?,
                    };
                    let shape = &t.shape;
                    if shape.len() < 2 {
                        return exc(pos, "dimensions must larger than 1 (RuntimeError)");
                    }
                    if shape.iter().any(|&d| d != shape[0]) && shape.len() > 2 {
                        return exc(pos, "all dimensions of input must be of equal length (RuntimeError)");
                    }
                    let (mut step, mut stride) = (0, 1);
                    for &d in shape.iter().rev() {
                        step += stride;
                        stride *= d;
                    }
                    let numel = t.numel();
                    let smallest = shape.iter().copied().min().unwrap_or(0);
                    let count =
                        if wrap && shape.len() == 2 && shape[0] > shape[1] { numel.div_ceil(step) } else { smallest };
                    let mut tb = cell.borrow_mut();
                    let dt = tb.dtype;
                    for k in 0..count {
                        tb.data[k * step] = cast(v, dt);
                    }
                    drop(tb);
                    super::views::written(it, cell, pos)?;
                    recv.clone()
                }
                "masked_fill" | "masked_fill_" => {
                    let mask = a.need(0, "mask")?;
                    let v = a.need(1, "value")?;
                    // A number is checked against the tensor's dtype (not the promoted one); a
                    // tensor of values is torch's error.
                    if let Value::Tensor(s) = &v
                        && !s.borrow().shape.is_empty()
                    {
                        return exc(pos, "masked_fill only supports a 0-dimensional value tensor (RuntimeError)");
                    }
                    if let Ok((s, _)) = scalar_of(&v, pos) {
                        tensor_ops::held(t.dtype, s, pos)?;
                    }
                    let r = elementwise(it, Elem::Where, &[mask, v, recv.clone()], pos)?;
                    let r = elementwise(it, Elem::Cast(t.dtype), &[r], pos)?;
                    if m == "masked_fill_" {
                        super::views::write_in_place(it, cell, &r, pos)?;
                        recv.clone()
                    } else {
                        r
                    }
                }
                "copy_" => {
                    // `src` broadcast to this tensor's shape, in its dtype, written through its views.
                    let src = a.need(0, "src")?;
                    if let Value::Tensor(src_cell) = &src
                        && Rc::ptr_eq(&it.views.base_of(src_cell), &it.views.base_of(cell))
                    {
                        return unsup(pos, "copy_ between tensors that share memory is not modelled");
                    }
                    let from = tensor_of(&elementwise(it, Elem::Cast(t.dtype), std::slice::from_ref(&src), pos)?, pos)?;
                    if super::tensor::broadcast(&from.shape, &t.shape).ok().as_ref() != Some(&t.shape) {
                        let (to, from) = (&t.shape, &from.shape);
                        return exc(
                            pos,
                            format!("copy_: the shape {from:?} does not broadcast to {to:?} (RuntimeError)"),
                        );
                    }
                    let sizes: Vec<i64> = t.shape.iter().map(|&d| d as i64).collect();
                    cell.borrow_mut().data = tensor_tail::expand(&from, &sizes, pos)?.data;
                    super::views::written(it, cell, pos)?;
                    recv.clone()
                }
                _ if in_place_elementwise(m) => {
                    // Computed out of place, then written as `+=` writes.
                    for v in a.pos.iter().chain(a.kw.iter().map(|(_, v)| v)) {
                        super::views::overlap(it, cell, None, v, pos)?;
                    }
                    let r = method_plain(it, &name[..name.len() - 1], recv, a)?;
                    super::views::write_in_place(it, cell, &r, pos)?;
                    recv.clone()
                }
                "numpy" => return unsup(pos, "`.numpy()` is not supported"),
                "expand" | "expand_as" | "repeat" => return unsup(pos, format!("`.{m}()` is not supported")),
                _ => return unsup(pos, format!("the tensor method `.{m}()` is not supported")),
            }
        }
    })
}

/// Whether a tensor method is the in-place form of an elementwise one (`add_`): its overlap with
/// its operands is torch's error before any of their elements is read.
fn in_place_elementwise(m: &str) -> bool {
    m.strip_suffix('_').is_some_and(|b| ELEMENTWISE[2..].contains(&b))
}

/// Elementwise torch functions (`torch.add`, ...), all of them implemented here; as tensor methods,
/// `ELEMENTWISE[..39]` are the functions of the same name, and `ELEMENTWISE[2..]` have in-place
/// forms (`x.add_(y)`, written as `x += y`).
const ELEMENTWISE: [&str; 45] = [
    "minimum",
    "maximum",
    "add",
    "sub",
    "mul",
    "div",
    "true_divide",
    "floor_divide",
    "remainder",
    "fmod",
    "pow",
    "neg",
    "abs",
    "sign",
    "floor",
    "ceil",
    "trunc",
    "round",
    "logical_not",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "greater",
    "less",
    "greater_equal",
    "less_equal",
    "not_equal",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "tril",
    "triu",
];

fn py_int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// `round(i, d)` for an int and negative `d`: to a multiple of 10^-d, ties to even.
fn round_int(i: i64, d: i64) -> i64 {
    if d < -18 {
        return 0;
    }
    let p = 10i128.pow((-d) as u32);
    let x = i128::from(i);
    let (q, r) = (x.div_euclid(p), x.rem_euclid(p));
    let q = match (2 * r).cmp(&p) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
    };
    (q * p).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// `round(f, d)` as CPython gives it (the exact binary value rounded to `d` decimal digits), or
/// `None` where the value is too close to a decimal tie for the formatted rounding to be sure.
fn round_float(f: f64, d: i64) -> Option<f64> {
    if !f.is_finite() || d > 300 {
        return Some(f);
    }
    if d < 0 {
        if d < -308 {
            return Some(0.0 * f);
        }
        let p = 10f64.powi((-d) as i32);
        let y = f / p;
        if ((y - y.trunc()).abs() - 0.5).abs() < 1e-9 {
            return None;
        }
        return Some(y.round() * p);
    }
    let y = f * 10f64.powi(d as i32);
    if ((y - y.trunc()).abs() - 0.5).abs() < 1e-9 * y.abs().max(1.0) {
        return None;
    }
    format!("{f:.*}", d as usize).parse().ok()
}

/// `int(s, base)`: CPython's syntax (sign, surrounding spaces, `_` between digits, a `0x`/`0o`/`0b`
/// prefix matching the base or chosen by base 0).
fn parse_int(s: &str, base: i64) -> Option<Option<i64>> {
    let t = s.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let lower = t.to_ascii_lowercase();
    let prefixed = |p: &str| lower.starts_with(p);
    let (radix, digits) = match base {
        0 if prefixed("0x") => (16, &t[2..]),
        0 if prefixed("0o") => (8, &t[2..]),
        0 if prefixed("0b") => (2, &t[2..]),
        0 => {
            // Base 0 refuses leading zeros on a nonzero decimal.
            if t.len() > 1 && t.starts_with('0') && !t.trim_start_matches(['0', '_']).is_empty() {
                return None;
            }
            (10, t)
        }
        16 if prefixed("0x") => (16, &t[2..]),
        8 if prefixed("0o") => (8, &t[2..]),
        2 if prefixed("0b") => (2, &t[2..]),
        b if (2..=36).contains(&b) => (b as u32, t),
        _ => return None,
    };
    let digits = digits.strip_prefix('_').filter(|_| digits.len() < t.len()).unwrap_or(digits);
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') || digits.contains("__") {
        return None;
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if !clean.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    // Valid digits: over 64 bits is a value hasseflow does not model, not an error.
    let v = i128::from_str_radix(clean.trim_start_matches('0'), radix)
        .or_else(|_| if clean.trim_start_matches('0').is_empty() { Ok(0) } else { Err(()) });
    Some(v.ok().and_then(|v| i64::try_from(if neg { -v } else { v }).ok()))
}

pub(super) fn scalar_value(dt: DType, v: Sc) -> Value {
    match v {
        Sc::I(x) if dt.is_bool() => Value::Bool(x != 0),
        Sc::I(x) => Value::Int(x),
        Sc::F(x) => Value::Float(x),
    }
}

pub(super) fn to_list(t: &Tensor) -> Value {
    if t.shape.is_empty() {
        return scalar_value(t.dtype, t.data[0]);
    }
    let inner: usize = t.shape[1..].iter().product();
    let items = (0..t.shape[0])
        .map(|i| to_list(&Tensor::new(t.dtype, t.shape[1..].to_vec(), t.data[i * inner..(i + 1) * inner].to_vec())))
        .collect();
    Value::List(shared(items))
}

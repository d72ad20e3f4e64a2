//! Types as values: the builtin `type(x)`, `isinstance(x, T)`, and CPython's hierarchy of
//! builtin exceptions, by which an `except` clause matches what its `try` raised.

use std::rc::Rc;

use super::ast::Pos;
use super::rt::{Fail, FailKind, Interp, MAX_VALUE_DEPTH, R, unavailable_msg, unsup};
use super::value::{ClassObj, Instance, Value};

/// CPython's builtin exceptions that mask code raises or catches, each with its base.
const EXCEPTIONS: [(&str, &str); 37] = [
    ("BaseException", ""),
    ("Exception", "BaseException"),
    ("ArithmeticError", "Exception"),
    ("ZeroDivisionError", "ArithmeticError"),
    ("OverflowError", "ArithmeticError"),
    ("FloatingPointError", "ArithmeticError"),
    ("AssertionError", "Exception"),
    ("AttributeError", "Exception"),
    ("BufferError", "Exception"),
    ("EOFError", "Exception"),
    ("ImportError", "Exception"),
    ("ModuleNotFoundError", "ImportError"),
    ("LookupError", "Exception"),
    ("IndexError", "LookupError"),
    ("KeyError", "LookupError"),
    ("MemoryError", "Exception"),
    ("NameError", "Exception"),
    ("UnboundLocalError", "NameError"),
    ("OSError", "Exception"),
    ("FileNotFoundError", "OSError"),
    ("ReferenceError", "Exception"),
    ("RuntimeError", "Exception"),
    ("NotImplementedError", "RuntimeError"),
    ("RecursionError", "RuntimeError"),
    ("StopIteration", "Exception"),
    ("SyntaxError", "Exception"),
    ("SystemError", "Exception"),
    ("TypeError", "Exception"),
    ("ValueError", "Exception"),
    ("UnicodeError", "ValueError"),
    ("UnicodeDecodeError", "UnicodeError"),
    ("UnicodeEncodeError", "UnicodeError"),
    ("Warning", "Exception"),
    ("UserWarning", "Warning"),
    ("DeprecationWarning", "Warning"),
    ("KeyboardInterrupt", "BaseException"),
    ("SystemExit", "BaseException"),
];

/// The base of a builtin exception class (`builtins.KeyError` → `LookupError`); `""` for
/// `BaseException`; `None` for anything else.
pub(super) fn exception_parent(full: &str) -> Option<&'static str> {
    let name = full.strip_prefix("builtins.")?;
    EXCEPTIONS.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// Whether a builtin exception name is one of CPython's.
pub(super) fn is_exception_name(name: &str) -> bool {
    EXCEPTIONS.iter().any(|(n, _)| *n == name)
}

/// Whether the builtin exception `sub` (a bare name) is `sup` or derives from it.
pub(super) fn exception_is(sub: &str, sup: &str) -> bool {
    let mut cur = sub;
    for _ in 0..EXCEPTIONS.len() {
        if cur == sup {
            return true;
        }
        match EXCEPTIONS.iter().find(|(n, _)| *n == cur) {
            Some((_, p)) if !p.is_empty() => cur = p,
            _ => return false,
        }
    }
    false
}

/// Whether the class derives from the builtin `full` (`enum.Enum`, `builtins.ValueError`).
fn class_derives(c: &ClassObj, full: &str) -> bool {
    match (c.native.as_deref(), full) {
        (Some(n), _) if n == full => true,
        (Some("enum.IntEnum"), "enum.Enum" | "builtins.int") => true,
        (Some(n), _) => match (n.strip_prefix("builtins."), full.strip_prefix("builtins.")) {
            (Some(a), Some(b)) => exception_is(a, b),
            _ => false,
        },
        (None, _) => false,
    }
}

/// `type(x)`.
pub(super) fn type_of(it: &Interp, v: &Value, pos: Pos) -> R<Value> {
    let name = match v {
        Value::Instance(i) if is_builtin_exception_class(&i.class) => {
            return Ok(Value::native(i.class.native.as_deref().unwrap_or("")));
        }
        Value::Instance(i) => return Ok(Value::Class(i.class.clone())),
        Value::Class(c) if c.is_enum() => return unsup(pos, "the type of an enum class (`EnumType`) is not modelled"),
        Value::Class(_) => "builtins.type",
        Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
        Value::None => "builtins.NoneType",
        Value::Bool(_) => "builtins.bool",
        Value::Int(_) => "builtins.int",
        Value::Float(_) => "builtins.float",
        Value::Str(_) => "builtins.str",
        Value::Tuple(_) => "builtins.tuple",
        Value::List(_) if it.sets.is_set(v) => return unsup(pos, "the type of a set is not modelled"),
        Value::List(_) => "builtins.list",
        Value::Dict(_) => "builtins.dict",
        Value::Range(..) => "builtins.range",
        Value::Slice(_) => "builtins.slice",
        Value::Tensor(_) | Value::Traced(..) | Value::TracedVec(_) | Value::Lookup(_) => "torch.Tensor",
        other => return unsup(pos, format!("the type of a {} is not modelled", other.type_name())),
    };
    Ok(Value::native(name))
}

/// `isinstance(v, t)`; `None` where `t` is not a type this reader models.
pub(super) fn isinstance(it: &Interp, v: &Value, t: &Value, depth: usize, visited: &mut usize) -> Option<bool> {
    *visited += 1;
    Some(match t {
        Value::Tuple(ts) => {
            if depth >= MAX_VALUE_DEPTH {
                return None;
            }
            let mut any = false;
            for x in ts.iter() {
                any |= isinstance(it, v, x, depth + 1, visited)?;
            }
            any
        }
        Value::Class(c) => matches!(v, Value::Instance(i) if i.class.is_subclass_of(c)),
        Value::Native(n) if n.recv.is_none() => {
            if let Value::Instance(i) = v {
                return Some(&*n.name == "builtins.object" || class_derives(&i.class, &n.name));
            }
            match &*n.name {
                "builtins.int" => matches!(v, Value::Int(_) | Value::Bool(_)),
                "builtins.bool" => matches!(v, Value::Bool(_)),
                "builtins.float" => matches!(v, Value::Float(_)),
                "builtins.str" => matches!(v, Value::Str(_)),
                "builtins.list" => matches!(v, Value::List(_)) && !it.sets.is_set(v),
                "builtins.set" => it.sets.is_set(v),
                "builtins.tuple" => matches!(v, Value::Tuple(_)),
                "builtins.dict" => matches!(v, Value::Dict(_)),
                "builtins.range" => matches!(v, Value::Range(..)),
                "builtins.slice" => matches!(v, Value::Slice(_)),
                "builtins.NoneType" => matches!(v, Value::None),
                "builtins.type" => matches!(v, Value::Class(c) if !c.is_enum()),
                "builtins.object" => true,
                "torch.Tensor" => {
                    matches!(v, Value::Tensor(_) | Value::Traced(..) | Value::TracedVec(_) | Value::Lookup(_))
                }
                // No value this reader makes is an enum member or an exception, but a class of the
                // text's instances are handled above.
                "enum.Enum" | "enum.IntEnum" => false,
                name if exception_parent(name).is_some() => false,
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The class a value names as an `except` clause's type: a builtin exception's name, or a class
/// of the text deriving from one.
pub(super) enum ExcClass {
    Builtin(&'static str),
    Class(Rc<ClassObj>),
}

/// The exception types an `except` clause names (a class or a tuple of them: CPython takes no
/// nested tuple there); `None` when one of them is not an exception class this reader knows.
pub(super) fn handler_types(t: &Value, depth: usize, out: &mut Vec<ExcClass>) -> Option<()> {
    match t {
        Value::Tuple(ts) if depth == 0 => {
            for x in ts.iter() {
                handler_types(x, depth + 1, out)?;
            }
        }
        Value::Native(n) if n.recv.is_none() => {
            let name = n.name.strip_prefix("builtins.")?;
            let (known, _) = EXCEPTIONS.iter().find(|(k, _)| *k == name)?;
            out.push(ExcClass::Builtin(known));
        }
        Value::Class(c) if c.native.as_deref().and_then(exception_parent).is_some() => {
            out.push(ExcClass::Class(c.clone()));
        }
        _ => return None,
    }
    Some(())
}

/// Whether `t`, named by an `except` clause, is certainly no exception class (nor a tuple of
/// them): CPython raises `TypeError` there.
pub(super) fn not_exception_class(t: &Value, top: bool) -> bool {
    let mut probe = Vec::new();
    match t {
        Value::Tuple(ts) if top => {
            ts.iter().any(|x| not_exception_class(x, false))
                && ts.iter().all(|x| not_exception_class(x, false) || handler_types(x, 1, &mut probe).is_some())
        }
        Value::Tuple(_)
        | Value::None
        | Value::Bool(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::Str(_)
        | Value::List(_)
        | Value::Dict(_)
        | Value::Range(..)
        | Value::Instance(_) => true,
        Value::Class(c) => c.native.as_deref().and_then(exception_parent).is_none(),
        Value::Native(n) => n.recv.is_none() && n.name.starts_with("builtins.") && exception_parent(&n.name).is_none(),
        _ => false,
    }
}

/// Whether a raised exception (a builtin's name, or the text's class) is caught by `h`.
pub(super) fn catches(h: &ExcClass, raised: &ExcClass) -> bool {
    match (h, raised) {
        (ExcClass::Builtin(b), ExcClass::Builtin(r)) => exception_is(r, b),
        (ExcClass::Builtin(b), ExcClass::Class(c)) => class_derives(c, &format!("builtins.{b}")),
        (ExcClass::Class(h), ExcClass::Class(c)) => c.is_subclass_of(h),
        (ExcClass::Class(_), ExcClass::Builtin(_)) => false,
    }
}

/// An instance of a builtin exception class (`ValueError("...")`), with its `args`.
pub(super) fn builtin_exception(name: &str, args: Vec<Value>) -> Value {
    let class = Rc::new(ClassObj {
        name: name.into(),
        attrs: std::cell::RefCell::new(Vec::new()),
        bases: Vec::new(),
        annotated: Vec::new(),
        fields: std::cell::Cell::new(false),
        native: Some(format!("builtins.{name}").into()),
        members: std::cell::RefCell::new(Vec::new()),
    });
    Value::Instance(Rc::new(Instance {
        class,
        attrs: std::cell::RefCell::new(vec![("args".into(), Value::Tuple(Rc::new(args)))]),
    }))
}

/// Whether a class is one `builtin_exception` made (the builtin class itself, not the text's).
pub(super) fn is_builtin_exception_class(c: &ClassObj) -> bool {
    c.bases.is_empty()
        && c.attrs.borrow().is_empty()
        && c.native.as_deref().and_then(|n| n.strip_prefix("builtins.")) == Some(&*c.name)
}

/// `str(e)` of an exception object, as `BaseException.__str__` gives it: '' for no arguments,
/// `str(arg)` for one; `None` where the reader does not model it (several arguments, or a class
/// of the text with its own `__str__`).
pub(super) fn exception_str(i: &super::value::Instance, one: impl Fn(&Value) -> Option<String>) -> Option<String> {
    if i.class.lookup("__str__").is_some() {
        return None;
    }
    match i.attr("args") {
        Some(Value::Tuple(a)) => match a.as_slice() {
            [] => Some(String::new()),
            [x] => one(x),
            _ => None,
        },
        _ => None,
    }
}

/// The type of what a failure raised, if the reader knows it: a `raise` of the text, or one of
/// the reader's own exceptions, whose message ends with the Python exception it is (`(KeyError)`).
pub(super) fn raised_type(f: &Fail) -> Option<ExcClass> {
    if let Some(v) = &f.exc_type {
        let class = match v {
            Value::Instance(i) => class_of_exception(i),
            v => v.clone(),
        };
        let mut t = Vec::new();
        handler_types(&class, 0, &mut t)?;
        return t.pop();
    }
    if f.msg.starts_with("the text raises") {
        return None;
    }
    if f.msg == "AssertionError" || f.msg.starts_with("AssertionError: ") {
        return Some(ExcClass::Builtin("AssertionError"));
    }
    let inner = f.msg.strip_suffix(')')?;
    let name = &inner[inner.rfind('(')? + 1..];
    match exception_parent(&format!("builtins.{name}")) {
        Some(_) => {
            let mut t = Vec::new();
            handler_types(&Value::native(&format!("builtins.{name}")), 0, &mut t)?;
            t.pop()
        }
        None => None,
    }
}

/// Whether a failure is an `AttributeError` (what `getattr` with a default and `hasattr` catch):
/// `None` where the reader cannot tell the type of what was raised.
pub(super) fn is_attribute_error(f: &Fail) -> Option<bool> {
    if f.kind != FailKind::Exception {
        return Some(false);
    }
    Some(catches(&ExcClass::Builtin("AttributeError"), &raised_type(f)?))
}

/// The class of a raised exception object: the builtin class, or the text's own.
fn class_of_exception(i: &Rc<super::value::Instance>) -> Value {
    if is_builtin_exception_class(&i.class) {
        Value::native(i.class.native.as_deref().unwrap_or(""))
    } else {
        Value::Class(i.class.clone())
    }
}

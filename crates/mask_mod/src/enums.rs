//! `enum.Enum` and `enum.IntEnum` classes of the text, as CPython 3.11 builds them: the members
//! of a class body, aliases, `auto()`, lookups by value (`Cls(v)`) and by name (`Cls['NAME']`).

use std::collections::HashMap;
use std::rc::Rc;

use super::args::Args;
use super::ast::Pos;
use super::rt::{Interp, PyDict, R, dict_set, exc, key_of, py_eq, unsup};
use super::value::{ClassObj, Instance, Key, Value};

/// Turns the plain attributes of an enum class body into its members, in definition order; an
/// attribute whose value equals an earlier member's is an alias of it.
pub(super) fn make_members(it: &mut Interp, class: &Rc<ClassObj>, pos: Pos) -> R<()> {
    let int = class.is_int_enum();
    let attrs = class.attrs.borrow().clone();
    for special in ["__new__", "__init__", "_missing_", "_ignore_", "_generate_next_value_", "__init_subclass__"] {
        if attrs.iter().any(|(k, _)| &**k == special) {
            return unsup(pos, format!("an enum that defines `{special}` is not modelled"));
        }
    }
    let mut out: Vec<(Rc<str>, Value)> = Vec::with_capacity(attrs.len());
    let mut members: Vec<Value> = Vec::new();
    let mut by_value: HashMap<Key, Value> = HashMap::new();
    let mut last_values: Vec<Value> = Vec::new();
    for (name, v) in attrs {
        let dunder = name.len() > 4 && name.starts_with("__") && name.ends_with("__");
        let sunder = name.len() > 2 && name.starts_with('_') && name.ends_with('_') && !name.starts_with("__");
        let descriptor = matches!(v, Value::Func(_) | Value::Wrapped(_));
        if dunder || sunder || descriptor {
            out.push((name, v));
            continue;
        }
        if name.starts_with("__") {
            return unsup(pos, format!("the private name `{name}` in an enum is not modelled"));
        }
        let v = match v {
            Value::Native(n) if &*n.name == "enum.auto()" => auto_value(&last_values, &name, pos)?,
            other => other,
        };
        let value_ok = match &v {
            Value::Int(_) => true,
            Value::Bool(_) | Value::Str(_) | Value::None | Value::Tuple(_) => !int,
            Value::Float(f) => !int && !f.is_nan(),
            _ => false,
        };
        if !value_ok {
            return unsup(
                pos,
                format!("the member `{name}` of the enum `{}` has a {} value: not modelled", class.name, v.type_name()),
            );
        }
        last_values.push(v.clone());
        let key = match key_of(&v, pos)? {
            Some(k) => k,
            None => return unsup(pos, format!("the value of the member `{name}` is not modelled")),
        };
        if let Some(m) = by_value.get(&key) {
            out.push((name, m.clone()));
            continue;
        }
        it.alloc_items(pos, 4)?;
        let member = Value::Instance(Rc::new(Instance {
            class: class.clone(),
            attrs: std::cell::RefCell::new(vec![
                ("_name_".into(), Value::Str(name.clone())),
                ("_value_".into(), v.clone()),
                ("name".into(), Value::Str(name.clone())),
                ("value".into(), v),
            ]),
        }));
        by_value.insert(key, member.clone());
        members.push(member.clone());
        out.push((name, member));
    }
    *class.attrs.borrow_mut() = out;
    *class.members.borrow_mut() = members;
    Ok(())
}

/// `auto()`: 1 for the first member, else the last value plus one (CPython 3.11, when the values
/// so far are ints in increasing order; other cases are not modelled).
fn auto_value(last: &[Value], name: &str, pos: Pos) -> R<Value> {
    let ints: Option<Vec<i64>> = last.iter().map(|v| if let Value::Int(i) = v { Some(*i) } else { None }).collect();
    match ints.as_deref() {
        Some([]) => Ok(Value::Int(1)),
        Some(xs) if xs.last() == xs.iter().max() => match xs[xs.len() - 1].checked_add(1) {
            Some(n) => Ok(Value::Int(n)),
            None => unsup(pos, "an integer result over 64 bits (hasseflow models Python integers up to 64 bits)"),
        },
        _ => unsup(pos, format!("`auto()` for `{name}` after values that are not increasing ints is not modelled")),
    }
}

/// `Cls(value)`: the member with that value.
pub(super) fn by_value(it: &mut Interp, class: &Rc<ClassObj>, args: &[Value], pos: Pos) -> R<Value> {
    let [v] = args else {
        return unsup(pos, format!("calling the enum `{}` with other than one argument is not modelled", class.name));
    };
    if let Value::Instance(i) = v
        && Rc::ptr_eq(&i.class, class)
    {
        return Ok(v.clone());
    }
    if let Value::Unavailable(u) = v {
        return unsup(pos, super::rt::unavailable_msg(u));
    }
    if !matches!(v, Value::Int(_) | Value::Bool(_) | Value::Float(_) | Value::Str(_) | Value::None | Value::Tuple(_)) {
        return unsup(pos, format!("looking up the enum `{}` by a {} is not modelled", class.name, v.type_name()));
    }
    let members = class.members.borrow().clone();
    it.charge_work(pos, members.len(), "enum members looked up")?;
    for m in members {
        if let Value::Instance(i) = &m
            && i.enum_value().is_some_and(|x| py_eq(&x, v))
        {
            return Ok(m);
        }
    }
    exc(pos, format!("the value is not a valid {} (ValueError)", class.name))
}

/// `Cls['NAME']`: the member (or alias) of that name.
pub(super) fn by_name(it: &mut Interp, class: &Rc<ClassObj>, key: &Value, pos: Pos) -> R<Value> {
    let Value::Str(name) = key else {
        return unsup(pos, format!("indexing the enum `{}` by a {} is not modelled", class.name, key.type_name()));
    };
    it.charge_work(pos, class.attrs.borrow().len(), "enum members looked up")?;
    let found = class.attrs.borrow().iter().find(|(k, v)| k == name && v.is_member()).map(|(_, v)| v.clone());
    found.map_or_else(|| exc(pos, format!("'{name}' (KeyError)")), Ok)
}

/// `str(member)` as CPython 3.11 writes it: `Cls.NAME`, or the int for an `IntEnum`.
pub(super) fn to_str(i: &Instance) -> Option<String> {
    let name = match i.attr("_name_") {
        Some(Value::Str(n)) => n,
        _ => return None,
    };
    if i.class.is_int_enum() {
        return match i.enum_value() {
            Some(Value::Int(v)) => Some(v.to_string()),
            _ => None,
        };
    }
    Some(format!("{}.{name}", i.class.name))
}

/// `Cls.__members__`: every name, aliases included, with its member, in definition order.
pub(super) fn members_dict(it: &mut Interp, class: &Rc<ClassObj>, pos: Pos) -> R<Value> {
    let attrs = class.attrs.borrow().clone();
    let mut d = PyDict::default();
    for (k, v) in attrs.into_iter().filter(|(_, v)| v.is_member()) {
        it.alloc_items(pos, 2)?;
        dict_set(&mut d, Value::Str(k), v, pos)?;
    }
    Ok(Value::Dict(super::value::shared(d)))
}

/// The functional API, `Enum('Name', names)` / `IntEnum('Name', names, start=1)`, as CPython 3.11
/// builds it: `names` is a string of names split on commas and spaces, a list or tuple of names
/// (valued `start`, `start + 1`, ...), of `(name, value)` pairs, or a dict of them.
pub(super) fn functional(it: &mut Interp, kind: &str, a: &Args, pos: Pos) -> R<Value> {
    let Some(Value::Str(cls_name)) = a.get(0, "value") else {
        return unsup(
            pos,
            format!("`enum.{kind}(...)` with a first argument that is not a class name is not modelled"),
        );
    };
    let Some(names) = a.get(1, "names") else {
        return unsup(pos, format!("`enum.{kind}(...)` without `names` (a lookup by value) is not modelled"));
    };
    if a.pos.len() > 2 {
        return unsup(pos, format!("`enum.{kind}(...)` with more than two positional arguments is not modelled"));
    }
    let start = match a.kw("start") {
        None => 1,
        Some(v) => super::args::to_int(&v, pos)?,
    };
    let mut attrs: Vec<(Rc<str>, Value)> = Vec::new();
    let bad = || unsup(pos, "enum member names of this form are not modelled");
    match &names {
        Value::Str(s) => {
            for (k, n) in s.replace(',', " ").split_whitespace().enumerate() {
                attrs.push((n.into(), Value::Int(start + k as i64)));
            }
        }
        Value::List(_) | Value::Tuple(_) => {
            let items: Vec<Value> = match &names {
                Value::List(l) => l.borrow().clone(),
                Value::Tuple(t) => t.as_ref().clone(),
                _ => Vec::new(),
            };
            it.charge_work(pos, items.len(), "enum members")?;
            for (k, item) in items.iter().enumerate() {
                match item {
                    Value::Str(n) => attrs.push((n.clone(), Value::Int(start + k as i64))),
                    Value::Tuple(p) if p.len() == 2 => match &p[0] {
                        Value::Str(n) => attrs.push((n.clone(), p[1].clone())),
                        _ => return bad(),
                    },
                    Value::List(p) if p.borrow().len() == 2 => match &p.borrow()[0] {
                        Value::Str(n) => attrs.push((n.clone(), p.borrow()[1].clone())),
                        _ => return bad(),
                    },
                    _ => return bad(),
                }
            }
        }
        Value::Dict(d) => {
            for (k, v) in d.borrow().iter() {
                match k {
                    Value::Str(n) => attrs.push((n.clone(), v.clone())),
                    _ => return bad(),
                }
            }
        }
        _ => return bad(),
    }
    it.charge_work(pos, attrs.len(), "enum members")?;
    let mut seen: std::collections::HashSet<Key> = std::collections::HashSet::new();
    for (n, _) in &attrs {
        if !seen.insert(Key::Str(n.clone())) {
            return exc(pos, format!("'{n}' already defined (TypeError)"));
        }
    }
    let class = Rc::new(ClassObj {
        name: cls_name.clone(),
        attrs: std::cell::RefCell::new(attrs),
        bases: Vec::new(),
        annotated: Vec::new(),
        fields: std::cell::Cell::new(false),
        native: Some(format!("enum.{kind}").into()),
        members: std::cell::RefCell::new(Vec::new()),
    });
    make_members(it, &class, pos)?;
    Ok(Value::Class(class))
}

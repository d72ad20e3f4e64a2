//! Python values: numbers, strings, containers, functions, modules, concrete tensors, and traced
//! per-position tensors (nodes of the mask's graph).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::ast::FuncDef;
use super::tensor::{DType, Tensor};

pub(super) type Shared<T> = Rc<RefCell<T>>;

pub(super) fn shared<T>(v: T) -> Shared<T> {
    Rc::new(RefCell::new(v))
}

/// A function defined in the text (or a prelude), with its defaults and enclosing scope.
#[derive(Debug)]
pub(super) struct Closure {
    pub(super) def: Rc<FuncDef>,
    pub(super) defaults: Vec<Option<Value>>,
    pub(super) env: Option<Shared<Frame>>,
    pub(super) globals: Shared<Globals>,
    pub(super) name: RefCell<Rc<str>>,
}

/// A built-in function (by its dotted name), bound to a receiver for methods.
#[derive(Debug)]
pub(super) struct Native {
    pub(super) name: Rc<str>,
    pub(super) recv: Option<Value>,
}

/// `functools.partial(func, *args, **kwargs)`, or a method bound to its instance or class
/// (`method`: torch counts its parameters through `__code__`, `self` included).
#[derive(Debug)]
pub(super) struct Partial {
    pub(super) func: Value,
    pub(super) args: Vec<Value>,
    pub(super) kwargs: Vec<(Rc<str>, Value)>,
    pub(super) method: bool,
}

/// A value the text could not compute (a skipped statement's binding, an unknown library object):
/// using it is an error that says why.
#[derive(Debug)]
pub(super) struct Unavailable {
    pub(super) what: String,
    /// The objects a skipped statement's binding may share memory with (`v = torch.diagonal(x)`):
    /// a later statement that could mutate it taints them.
    pub(super) aliases: Vec<Value>,
}

/// A class defined in the text: its attributes (methods are plain functions), bases, and the
/// fields a `@dataclass` or `NamedTuple` class takes in its constructor.
#[derive(Debug)]
pub(super) struct ClassObj {
    pub(super) name: Rc<str>,
    pub(super) attrs: RefCell<Vec<(Rc<str>, Value)>>,
    pub(super) bases: Vec<Rc<ClassObj>>,
    /// Annotated names of the body, in order.
    pub(super) annotated: Vec<Rc<str>>,
    /// Whether the constructor takes the annotated fields (`@dataclass`, `NamedTuple`).
    pub(super) fields: std::cell::Cell<bool>,
    /// The builtin class it derives from directly or through its bases (`enum.Enum`,
    /// `enum.IntEnum`, `builtins.ValueError`, ...), if any.
    pub(super) native: Option<Rc<str>>,
    /// An enum's members in definition order, aliases left out.
    pub(super) members: RefCell<Vec<Value>>,
}

impl ClassObj {
    /// An attribute of the class or its bases (depth-first, as a simple MRO).
    pub(super) fn lookup(&self, name: &str) -> Option<Value> {
        if let Some((_, v)) = self.attrs.borrow().iter().find(|(k, _)| &**k == name) {
            return Some(v.clone());
        }
        self.bases.iter().find_map(|b| b.lookup(name))
    }
    pub(super) fn is_subclass_of(self: &Rc<ClassObj>, other: &Rc<ClassObj>) -> bool {
        Rc::ptr_eq(self, other) || self.bases.iter().any(|b| b.is_subclass_of(other))
    }
    pub(super) fn is_enum(&self) -> bool {
        matches!(self.native.as_deref(), Some("enum.Enum" | "enum.IntEnum"))
    }
    pub(super) fn is_int_enum(&self) -> bool {
        self.native.as_deref() == Some("enum.IntEnum")
    }
    pub(super) fn has_fields(&self) -> bool {
        self.fields.get() || self.bases.iter().any(|b| b.has_fields())
    }
    /// The constructor's fields: the bases' first.
    pub(super) fn all_fields(&self) -> Vec<Rc<str>> {
        let mut out: Vec<Rc<str>> = Vec::new();
        for b in &self.bases {
            for f in b.all_fields() {
                if !out.contains(&f) {
                    out.push(f);
                }
            }
        }
        if self.fields.get() {
            for f in &self.annotated {
                if !out.contains(f) {
                    out.push(f.clone());
                }
            }
        }
        out
    }
}

/// An instance of a text's class.
#[derive(Debug)]
pub(super) struct Instance {
    pub(super) class: Rc<ClassObj>,
    pub(super) attrs: RefCell<Vec<(Rc<str>, Value)>>,
}

impl Instance {
    /// An enum member's `_value_`.
    pub(super) fn enum_value(&self) -> Option<Value> {
        self.class.is_enum().then(|| self.attr("_value_")).flatten()
    }
    pub(super) fn attr(&self, name: &str) -> Option<Value> {
        self.attrs.borrow().iter().find(|(k, _)| &**k == name).map(|(_, v)| v.clone())
    }
}

#[derive(Clone, Debug)]
pub(super) enum Value {
    Class(Rc<ClassObj>),
    Instance(Rc<Instance>),
    /// `staticmethod(f)`, `classmethod(f)`, `property(f)` as stored in a class.
    Wrapped(Rc<(&'static str, Value)>),
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    Tuple(Rc<Vec<Value>>),
    List(Shared<Vec<Value>>),
    Dict(Shared<PyDict>),
    Range(i64, i64, i64),
    Slice(Rc<[Value; 3]>),
    Ellipsis,
    Func(Rc<Closure>),
    Native(Rc<Native>),
    Partial(Rc<Partial>),
    Module(Rc<str>),
    Tensor(Shared<Tensor>),
    /// A per-position value of the traced mask: a node and its dtype.
    Traced(usize, DType),
    /// A per-position value with trailing dimensions (built by `vector`).
    TracedVec(Rc<TVec>),
    /// A lookup `table[idx...]` (traced indices of its leading dimensions) that leaves more values
    /// per position than a vector holds (`MAX_VECTOR` in `ops`): not built, only indexed
    /// further (`mask[b][h][q_idx][kv_idx]`); any other use is refused with its size.
    Lookup(Rc<(Rc<Tensor>, Vec<usize>)>),
    Dtype(DType),
    Device,
    /// A seeded random generator (`torch.Generator`, `random.Random`; see `random`).
    Rng(Shared<super::mt::Gen>),
    Unavailable(Rc<Unavailable>),
}

impl Value {
    /// An `IntEnum` member as the int it is; any other value as it is.
    pub(super) fn plain(self) -> Value {
        match &self {
            Value::Instance(i) if i.class.is_int_enum() => i.enum_value().unwrap_or(self),
            _ => self,
        }
    }
    /// Whether the value is a member of an enum of the text.
    pub(super) fn is_member(&self) -> bool {
        matches!(self, Value::Instance(i) if i.class.is_enum())
    }
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Tuple(_) => "tuple",
            Value::List(_) => "list",
            Value::Dict(_) => "dict",
            Value::Range(..) => "range",
            Value::Slice(_) => "slice",
            Value::Ellipsis => "ellipsis",
            Value::Func(_) | Value::Native(_) | Value::Partial(_) => "function",
            Value::Module(_) => "module",
            Value::Tensor(_) | Value::Traced(..) | Value::TracedVec(_) | Value::Lookup(_) => "Tensor",
            Value::Dtype(_) => "torch.dtype",
            Value::Device => "torch.device",
            Value::Rng(g) => g.borrow().type_name(),
            Value::Unavailable(_) => "unavailable value",
            Value::Class(_) => "type",
            Value::Instance(_) => "object",
            Value::Wrapped(_) => "method",
        }
    }
    pub(super) fn native(name: &str) -> Value {
        Value::Native(Rc::new(Native { name: name.into(), recv: None }))
    }
    pub(super) fn method(name: &str, recv: Value) -> Value {
        Value::Native(Rc::new(Native { name: name.into(), recv: Some(recv) }))
    }
    /// A method of the text bound to its instance or class (`obj.f`, `Cls.classmethod`).
    pub(super) fn bound(func: Value, to: Value) -> Value {
        Value::Partial(Rc::new(Partial { func, args: vec![to], kwargs: Vec::new(), method: true }))
    }
    pub(super) fn tensor(t: Tensor) -> Value {
        Value::Tensor(shared(t))
    }
    pub(super) fn is_callable(&self) -> bool {
        matches!(self, Value::Func(_) | Value::Native(_) | Value::Partial(_) | Value::Class(_))
    }
}

/// Drops values without recursing into them: a list nested 100,000 deep (`t = [t]` in a loop)
/// would overflow the stack if dropped as Rust drops it. The contents of each container no one
/// else holds are moved onto a work list first, so each drop is shallow.
pub(super) fn dismantle(mut stack: Vec<Value>) {
    while let Some(v) = stack.pop() {
        match v {
            Value::List(l) if Rc::strong_count(&l) == 1 => {
                if let Ok(mut items) = l.try_borrow_mut() {
                    stack.append(&mut items);
                }
            }
            Value::Tuple(t) => {
                if let Ok(items) = Rc::try_unwrap(t) {
                    stack.extend(items);
                }
            }
            Value::Dict(d) if Rc::strong_count(&d) == 1 => {
                if let Ok(mut d) = d.try_borrow_mut() {
                    stack.extend(d.take_all());
                }
            }
            Value::Partial(p) => {
                if let Ok(p) = Rc::try_unwrap(p) {
                    stack.push(p.func);
                    stack.extend(p.args);
                    stack.extend(p.kwargs.into_iter().map(|(_, v)| v));
                }
            }
            Value::Wrapped(w) => {
                if let Ok((_, v)) = Rc::try_unwrap(w) {
                    stack.push(v);
                }
            }
            Value::Instance(i) if Rc::strong_count(&i) == 1 => {
                stack.extend(i.attrs.borrow_mut().drain(..).map(|(_, v)| v));
            }
            _ => {}
        }
    }
}

/// Variables by name, each with the clock of its assignment: a module's globals keep their order
/// of assignment, a function's frame a `0` (one map type for both: one hash table's code in wasm).
pub(super) type Vars = HashMap<Rc<str>, (Value, u64)>;

/// Dismantles what a frame's or a module's variables held, when it is dropped.
fn dismantle_vars(vars: &mut Vars) {
    dismantle(vars.drain().map(|(_, (v, _))| v).collect());
}

/// A function call's local variables, with the enclosing function's frame for closures.
#[derive(Debug, Default)]
pub(super) struct Frame {
    pub(super) vars: Vars,
    /// The names local to this frame (assigned anywhere in the function).
    pub(super) locals: Vec<Rc<str>>,
    pub(super) global_names: Vec<Rc<str>>,
    pub(super) nonlocal_names: Vec<Rc<str>>,
    pub(super) parent: Option<Shared<Frame>>,
}

impl Drop for Frame {
    fn drop(&mut self) {
        dismantle_vars(&mut self.vars);
    }
}

impl Drop for Globals {
    fn drop(&mut self) {
        dismantle_vars(&mut self.vars);
    }
}

/// A module's globals, remembering the order of assignment (the last mask function wins).
#[derive(Debug, Default)]
pub(super) struct Globals {
    pub(super) vars: Vars,
    pub(super) clock: u64,
}

impl Globals {
    pub(super) fn get(&self, name: &str) -> Option<Value> {
        self.vars.get(name).map(|(v, _)| v.clone())
    }
    pub(super) fn set(&mut self, name: Rc<str>, v: Value) {
        self.clock += 1;
        if let Some((old, _)) = self.vars.insert(name, (v, self.clock)) {
            dismantle(vec![old]);
        }
    }
}

/// A hashable value's identity under Python's `==` (as `py_eq` (`rt`) has it): `1`, `1.0` and
/// `True` are one key. Values `py_eq` (`rt`) never finds equal (functions, objects) have none.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Key {
    None,
    Int(i64),
    Float(u64),
    Str(Rc<str>),
    Tuple(Vec<Key>),
    Dtype(&'static str),
    /// An object hashed by identity (an enum member), by its address while it is alive.
    Id(usize),
}

/// A Python dict: items in insertion order, found by hashing their keys.
#[derive(Clone, Debug, Default)]
pub(super) struct PyDict {
    pub(super) items: Vec<(Value, Value)>,
    pub(super) index: HashMap<Key, usize>,
}

impl std::ops::Deref for PyDict {
    type Target = Vec<(Value, Value)>;
    fn deref(&self) -> &Vec<(Value, Value)> {
        &self.items
    }
}

/// A per-position vector: `nodes` in row-major order of `shape` (never empty shape).
#[derive(Debug)]
pub(super) struct TVec {
    pub(super) shape: Vec<usize>,
    pub(super) nodes: Vec<usize>,
    pub(super) dtype: DType,
    /// When the vector is exactly `table[idx..., :, :, ...]`: the table and the traced indices of
    /// its leading dimensions (a further traced index extends the lookup).
    pub(super) origin: Option<(Rc<Tensor>, Vec<usize>)>,
}

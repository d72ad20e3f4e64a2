//! The interpreter: runs a module's statements in order, calls functions, and records a traced
//! graph when a mask function is called with traced indices.

use std::collections::HashMap;
use std::rc::Rc;

use super::ast::{
    Arg, BinOp, ClassDef, CmpOp, Comp, CompKind, Expr, ExprKind, FuncDef, ParamKind, Pos, Stmt, StmtKind, UnOp,
};
use super::parse::assigned_names;
use super::rt::{
    Eval, Fail, FailKind, Interp, MAX_CALLS, MAX_CLASS_DEPTH, MAX_CLASS_WALK, MAX_DEPTH, MAX_ITEMS, PyDict, R,
    dict_set, exc, limit, range_len, unavailable_msg, unsup,
};
use super::tensor::Cmp;
use super::value::{ClassObj, Closure, Frame, Globals, Instance, Shared, Unavailable, Value, shared};

pub(super) enum Flow {
    Normal,
    Return(Value),
    Break,
    Continue,
}

/// Where names are looked up and bound.
#[derive(Clone)]
pub(super) struct Ctx {
    pub(super) globals: Shared<Globals>,
    pub(super) frame: Option<Shared<Frame>>,
}

/// Every name of CPython's `builtins` module: one the interpreter lacks is "not modelled", never a
/// `NameError` Python would not raise.
const PYTHON_BUILTINS: [&str; 146] = [
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
];

/// Refuses a class whose chain of bases is over [`MAX_CLASS_DEPTH`] deep, or whose bases take
/// over [`MAX_CLASS_WALK`] visits to walk (attribute lookups walk them recursively).
fn check_bases(bases: &[Rc<ClassObj>], name: &str, pos: Pos) -> R<()> {
    fn walk(c: &ClassObj, depth: usize, seen: &mut usize) -> bool {
        *seen += 1;
        depth <= MAX_CLASS_DEPTH && *seen <= MAX_CLASS_WALK && c.bases.iter().all(|b| walk(b, depth + 1, seen))
    }
    let mut seen = 0;
    if bases.iter().all(|b| walk(b, 1, &mut seen)) {
        return Ok(());
    }
    unsup(
        pos,
        format!(
            "the class `{name}` has a hierarchy of bases over {MAX_CLASS_DEPTH} deep or {MAX_CLASS_WALK} classes: \
             not modelled"
        ),
    )
}

impl Interp {
    /// Runs a module's statements. Outside preludes, a statement that fails on something
    /// unsupported is skipped and the names it binds become unavailable.
    pub(super) fn run_module(&mut self, body: &[Stmt], ctx: &Ctx) -> R<()> {
        for s in body {
            match self.exec_stmt(s, ctx) {
                Ok(Flow::Normal) => {}
                Ok(_) => return exc(s.pos, "`return`, `break` or `continue` outside a function or loop"),
                Err(f) if f.kind == FailKind::Unsupported && !self.in_prelude => {
                    self.skip_statement(s, &f, ctx);
                    self.skipped.push((f.pos, f.msg));
                }
                Err(f) => return Err(f),
            }
        }
        Ok(())
    }

    /// A skipped statement: the names it binds become unavailable, the objects it could have
    /// mutated are tainted, and the globals a function it calls could rebind become unavailable
    /// (see [`super::effects`]).
    fn skip_statement(&mut self, s: &Stmt, f: &Fail, ctx: &Ctx) {
        let place = format!(
            "the skipped statement at line {}, column {} (line {}, column {}: {})",
            s.pos.line, s.pos.col, f.pos.line, f.pos.col, f.msg
        );
        let mut names = Vec::new();
        assigned_names(std::slice::from_ref(s), &mut names);
        let effects = super::effects::of_statement(s, &ctx.globals, &names);
        for n in &names {
            let u = Unavailable { what: format!("`{n}`, set by {place}"), aliases: effects.aliases.clone() };
            ctx.globals.borrow_mut().set(n.clone(), Value::Unavailable(Rc::new(u)));
        }
        for n in effects.globals.iter().filter(|n| !names.contains(n)) {
            let u = Unavailable {
                what: format!("`{n}`, which a function called by {place} may rebind (`global {n}`)"),
                aliases: Vec::new(),
            };
            ctx.globals.borrow_mut().set(n.clone(), Value::Unavailable(Rc::new(u)));
        }
        let mut objects = effects.objects;
        // A view and its base share memory: tainting one taints all of them.
        for v in objects.clone() {
            if let Value::Tensor(t) = &v {
                let base = self.views.base_of(t);
                objects.push(Value::Tensor(base.clone()));
                objects.extend(self.views.views_of(&base).into_iter().map(Value::Tensor));
            }
        }
        for v in objects {
            if let Some(id) = super::effects::identity(&v) {
                self.tainted.push((id, v, place.clone()));
            }
        }
    }

    pub(super) fn exec_block(&mut self, body: &[Stmt], ctx: &Ctx) -> R<Flow> {
        for s in body {
            match self.exec_stmt(s, ctx)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn exec_stmt(&mut self, s: &Stmt, ctx: &Ctx) -> R<Flow> {
        self.step(s.pos)?;
        let pos = s.pos;
        match &s.kind {
            StmtKind::Expr(e) => {
                self.eval(e, ctx)?;
            }
            StmtKind::Assign(targets, value) => {
                let v = self.eval(value, ctx)?;
                for t in targets {
                    self.assign(t, v.clone(), ctx)?;
                }
            }
            StmtKind::AugAssign(target, op, value) => {
                let cur = self.eval(target, ctx)?;
                let rhs = self.eval(value, ctx)?;
                let v = self.inplace(*op, cur, rhs, pos)?;
                if let Value::Tensor(t) = &v {
                    self.write_back = Some(t.clone());
                }
                let r = self.assign(target, v, ctx);
                self.write_back = None;
                r?;
            }
            StmtKind::AnnAssign(target, annotation, value) => {
                if let Some(value) = value {
                    let v = self.eval(value, ctx)?;
                    self.assign(target, v, ctx)?;
                }
                // A module's annotations are evaluated (a class body's: by `make_class`; a
                // function's locals': never).
                if ctx.frame.is_none() {
                    self.annotation(annotation, ctx)?;
                }
            }
            StmtKind::If(arms, orelse) => {
                for (cond, body) in arms {
                    let c = self.eval(cond, ctx)?;
                    if self.truthy(&c, cond.pos)? {
                        return self.exec_block(body, ctx);
                    }
                }
                return self.exec_block(orelse, ctx);
            }
            StmtKind::For(target, iter, body, orelse) => {
                let it = self.eval(iter, ctx)?;
                let items = self.iterate(&it, iter.pos)?;
                for item in items {
                    self.step(pos)?;
                    self.assign(target, item, ctx)?;
                    match self.exec_block(body, ctx)? {
                        Flow::Break => return Ok(Flow::Normal),
                        Flow::Return(v) => return Ok(Flow::Return(v)),
                        _ => {}
                    }
                }
                return self.exec_block(orelse, ctx);
            }
            StmtKind::While(cond, body, orelse) => loop {
                self.step(pos)?;
                let c = self.eval(cond, ctx)?;
                if !self.truthy(&c, cond.pos)? {
                    return self.exec_block(orelse, ctx);
                }
                match self.exec_block(body, ctx)? {
                    Flow::Break => return Ok(Flow::Normal),
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    _ => {}
                }
            },
            StmtKind::Break => return Ok(Flow::Break),
            StmtKind::Continue => return Ok(Flow::Continue),
            StmtKind::Pass | StmtKind::Global(_) | StmtKind::Nonlocal(_) => {}
            StmtKind::Return(v) => {
                let v = match v {
                    Some(e) => self.eval(e, ctx)?,
                    None => Value::None,
                };
                return Ok(Flow::Return(v));
            }
            StmtKind::Def(def, decorators) => {
                let f = self.decorated(decorators, ctx, |it| it.make_function(def, ctx))?;
                self.bind(&def.name, f, ctx);
            }
            StmtKind::Import(items) => {
                for (path, name, aliased) in items {
                    if self.in_try > 0 && path.contains('.') && !super::builtins::is_known_module(path) {
                        return unsup(
                            pos,
                            format!(
                                "whether `import {path}` succeeds in a `try` is not modelled (a module hasseflow does not know)"
                            ),
                        );
                    }
                    self.imports.push(path.to_string());
                    let v = if *aliased {
                        self.module_value(path)
                    } else {
                        self.module_value(path.split('.').next().unwrap_or(""))
                    };
                    self.bind(name, v, ctx);
                }
            }
            StmtKind::ImportFrom(module, names) => {
                self.imports.push(module.to_string());
                if names.is_empty() {
                    return unsup(pos, format!("`from {module} import *` is not supported"));
                }
                if &**module == "__future__" && names.iter().any(|(n, _)| &**n == "annotations") {
                    self.future_annotations = true;
                }
                for (name, alias) in names {
                    let v = self.import_name(module, name, pos)?;
                    // FlexAttention's own entry points exist wherever a mask_mod runs.
                    let exists = module.starts_with("torch.nn.attention")
                        && matches!(&**name, "create_block_mask" | "create_mask" | "flex_attention" | "BlockMask");
                    if self.in_try > 0
                        && !exists
                        && let Value::Unavailable(u) = &v
                    {
                        // Python's import raises `ImportError` where the name does not exist, which
                        // an `except` may catch: the path cannot be told.
                        return unsup(
                            pos,
                            format!(
                                "whether `from {module} import {name}` succeeds in a `try` is not modelled ({})",
                                unavailable_msg(u)
                            ),
                        );
                    }
                    self.bind(alias, v, ctx);
                }
            }
            StmtKind::Assert(cond, msg) => {
                let c = self.eval(cond, ctx)?;
                if !self.truthy(&c, cond.pos)? {
                    let m = match msg.as_ref().map(|m| self.eval(m, ctx)) {
                        Some(Ok(Value::Str(s))) => format!("AssertionError: {s}"),
                        _ => "AssertionError".into(),
                    };
                    return exc(pos, m);
                }
            }
            StmtKind::Del(targets) => {
                for t in targets {
                    if let ExprKind::Name(n) = &t.kind {
                        match &ctx.frame {
                            Some(f) => {
                                f.borrow_mut().vars.remove(n);
                            }
                            None => {
                                ctx.globals.borrow_mut().vars.remove(n);
                            }
                        }
                    } else {
                        self.delete(t, ctx)?;
                    }
                }
            }
            StmtKind::Raise(e) => return Err(self.raise(e.as_ref(), ctx, pos)?),
            StmtKind::Try(body, handlers, orelse, fin) => {
                // The path without an exception is run. An import whose success only the user's
                // environment decides, or an exception the handlers might catch, is not modelled:
                // the statement is refused (skipped at module level), never run down one path.
                if !handlers.is_empty()
                    && let Some((at, m)) = super::effects::environment_import(body)
                {
                    return unsup(
                        at,
                        format!(
                            "whether `import {m}` succeeds depends on the packages installed where the file runs, \
                             which hasseflow does not know (the `try` at line {}, column {} takes its path by it)",
                            pos.line, pos.col
                        ),
                    );
                }
                return self.exec_try(body, handlers, orelse, fin, ctx, pos);
            }
            StmtKind::With(items, names, body) => {
                for item in items {
                    self.eval(item, ctx)?;
                }
                for n in names {
                    let u = Unavailable {
                        what: format!("line {}, column {}: `with ... as {n}` is not supported", pos.line, pos.col),
                        aliases: Vec::new(),
                    };
                    self.bind(n, Value::Unavailable(Rc::new(u)), ctx);
                }
                return self.exec_block(body, ctx);
            }
            StmtKind::Class(def) => {
                let c = self.decorated(&def.decorators, ctx, |it| it.make_class(def, ctx))?;
                self.bind(&def.name, c, ctx);
            }
            StmtKind::Unsupported(what, _) => return unsup(pos, format!("{what} is not supported")),
        }
        Ok(Flow::Normal)
    }

    /// Runs a class body in its own namespace; its functions close over the class's enclosing
    /// scope, not the namespace (as in Python).
    /// A decorated `def` or `class` as CPython runs it: the decorator expressions first (top
    /// down), then `make` (defaults and annotations, or bases and body), then each decorator
    /// applied (bottom up).
    fn decorated(&mut self, decorators: &[Expr], ctx: &Ctx, make: impl FnOnce(&mut Self) -> R<Value>) -> R<Value> {
        let mut decos = Vec::with_capacity(decorators.len());
        for d in decorators {
            decos.push((self.eval(d, ctx)?, d.pos));
        }
        let mut v = make(self)?;
        for (dv, at) in decos.into_iter().rev() {
            v = self.call(&dv, vec![v], Vec::new(), at)?;
        }
        Ok(v)
    }

    fn make_class(&mut self, def: &Rc<ClassDef>, ctx: &Ctx) -> R<Value> {
        let mut bases = Vec::new();
        let mut fields = false;
        let mut native: Option<Rc<str>> = None;
        let mut int_mixin = false;
        let mut abc = false;
        for b in &def.bases {
            match self.eval(b, ctx)? {
                Value::Class(c) if c.is_enum() && !c.members.borrow().is_empty() => {
                    return unsup(
                        b.pos,
                        format!("deriving from the enum `{}`, which has members, is not modelled", c.name),
                    );
                }
                Value::Class(c) => {
                    if let Some(n) = &c.native {
                        native = native.or(Some(n.clone()));
                    }
                    bases.push(c)
                }
                Value::Native(n) if matches!(&*n.name, "enum.Enum" | "enum.IntEnum") && n.recv.is_none() => {
                    native = Some(n.name.clone());
                }
                Value::Native(n) if &*n.name == "builtins.int" && n.recv.is_none() => int_mixin = true,
                Value::Native(n) if n.recv.is_none() && super::types::exception_parent(&n.name).is_some() => {
                    native = Some(n.name.clone());
                }
                Value::Native(n) if &*n.name == "typing.NamedTuple" => fields = true,
                Value::Native(n) if matches!(&*n.name, "builtins.object" | "typing.Generic") => {}
                Value::Native(n) if &*n.name == "abc.ABC" => abc = true,
                Value::Unavailable(u) => return unsup(b.pos, unavailable_msg(&u)),
                other => {
                    return unsup(b.pos, format!("a class deriving from a {} is not supported", other.type_name()));
                }
            }
        }
        check_bases(&bases, &def.name, def.bases.first().map_or(Pos::default(), |b| b.pos))?;
        if int_mixin {
            // `class K(int, Enum)` is an `IntEnum`; `int` mixed into anything else is not modelled.
            match native.as_deref() {
                Some("enum.Enum" | "enum.IntEnum") => native = Some("enum.IntEnum".into()),
                _ => {
                    return unsup(
                        def.bases[0].pos,
                        format!("the class `{}` derives from `int`: not modelled", def.name),
                    );
                }
            }
        }
        let mut locals = Vec::new();
        assigned_names(&def.body, &mut locals);
        let ns = shared(Frame {
            vars: HashMap::new(),
            locals,
            global_names: Vec::new(),
            nonlocal_names: Vec::new(),
            parent: ctx.frame.clone(),
        });
        let inner = Ctx { globals: ctx.globals.clone(), frame: Some(ns.clone()) };
        let mut annotated = Vec::new();
        let mut order: Vec<Rc<str>> = Vec::new();
        for s in &def.body {
            if let StmtKind::AnnAssign(Expr { kind: ExprKind::Name(n), .. }, _, _) = &s.kind {
                annotated.push(n.clone());
            }
            let mut names = Vec::new();
            assigned_names(std::slice::from_ref(s), &mut names);
            match self.exec_stmt(s, &inner)? {
                Flow::Normal => {}
                _ => return exc(s.pos, "`return`, `break` or `continue` in a class body"),
            }
            if let StmtKind::AnnAssign(_, annotation, _) = &s.kind {
                self.annotation(annotation, &inner)?;
            }
            for n in names {
                if !order.contains(&n) {
                    order.push(n);
                }
            }
        }
        // Each method of the body sees the class's enclosing scope, through a frame of its own
        // that holds what `super()` without arguments reads, as CPython's `__class__` cell: the
        // class (set once it exists) and the name of the method's first parameter.
        let mut method_frames = Vec::new();
        let mut rebind = |v: Value| -> Value {
            let mut retarget = |c: &Rc<Closure>| {
                if c.env.as_ref().is_some_and(|e| Rc::ptr_eq(e, &ns)) {
                    let mut vars = HashMap::new();
                    if let Some(p) = c.def.params.first().filter(|p| p.kind == ParamKind::Normal) {
                        vars.insert(Rc::from(SUPER_SELF), (Value::Str(p.name.clone()), 0));
                    }
                    let frame = shared(Frame {
                        vars,
                        locals: Vec::new(),
                        global_names: Vec::new(),
                        nonlocal_names: Vec::new(),
                        parent: ctx.frame.clone(),
                    });
                    method_frames.push(frame.clone());
                    Value::Func(Rc::new(Closure {
                        def: c.def.clone(),
                        defaults: c.defaults.clone(),
                        env: Some(frame),
                        globals: c.globals.clone(),
                        name: std::cell::RefCell::new(c.name.borrow().clone()),
                    }))
                } else {
                    Value::Func(c.clone())
                }
            };
            match v {
                Value::Func(c) => retarget(&c),
                Value::Wrapped(w) => match &w.1 {
                    Value::Func(c) => Value::Wrapped(Rc::new((w.0, retarget(c)))),
                    _ => Value::Wrapped(w),
                },
                other => other,
            }
        };
        let vars = ns.borrow().vars.clone();
        let mut attrs: Vec<(Rc<str>, Value)> =
            order.iter().filter_map(|n| vars.get(n).map(|(v, _)| (n.clone(), rebind(v.clone())))).collect();
        // `@abstractmethod`s are plain methods; a class deriving from `abc.ABC` lists, as CPython's
        // `__abstractmethods__`, its own and those of its bases it does not define, and cannot be
        // instantiated while any is left (`Interp::instantiate`).
        let mut abstract_names: Vec<Rc<str>> = Vec::new();
        for (name, v) in attrs.iter_mut() {
            if let Value::Wrapped(w) = v
                && w.0 == "abstractmethod"
            {
                abstract_names.push(name.clone());
                *v = w.1.clone();
            }
        }
        for b in &bases {
            if let Some(Value::Tuple(names)) = b.lookup("__abstractmethods__") {
                abc = true;
                for n in names.iter() {
                    if let Value::Str(n) = n
                        && !attrs.iter().any(|(k, _)| k == n)
                        && !abstract_names.contains(n)
                    {
                        abstract_names.push(n.clone());
                    }
                }
            }
        }
        if abc {
            let names = abstract_names.into_iter().map(Value::Str).collect();
            attrs.push(("__abstractmethods__".into(), Value::Tuple(Rc::new(names))));
        }
        let class = Rc::new(ClassObj {
            name: def.name.clone(),
            attrs: std::cell::RefCell::new(attrs),
            bases,
            annotated,
            fields: std::cell::Cell::new(fields),
            native,
            members: std::cell::RefCell::new(Vec::new()),
        });
        for f in method_frames {
            f.borrow_mut().vars.insert("__class__".into(), (Value::Class(class.clone()), 0));
        }
        if class.is_enum() {
            super::enums::make_members(self, &class, def.bases[0].pos)?;
        }
        Ok(Value::Class(class))
    }

    /// Calls a class: a `@dataclass` / `NamedTuple` takes its fields, else `__init__` runs.
    fn instantiate(&mut self, c: &Rc<ClassObj>, args: Vec<Value>, kwargs: Vec<(Rc<str>, Value)>, pos: Pos) -> R<Value> {
        if let Some(Value::Tuple(names)) = c.lookup("__abstractmethods__")
            && !names.is_empty()
        {
            // CPython 3.11's message: the names sorted.
            let mut left: Vec<&str> =
                names.iter().filter_map(|n| if let Value::Str(s) = n { Some(&**s) } else { None }).collect();
            let mut listed = String::new();
            while let Some(i) = (0..left.len()).min_by_key(|&i| left[i]) {
                listed += if listed.is_empty() { "" } else { ", " };
                listed += left.swap_remove(i);
            }
            let s = if names.len() > 1 { "s" } else { "" };
            return exc(
                pos,
                format!("Can't instantiate abstract class {} with abstract method{s} {listed} (TypeError)", c.name),
            );
        }
        let inst = Rc::new(Instance { class: c.clone(), attrs: std::cell::RefCell::new(Vec::new()) });
        let me = Value::Instance(inst.clone());
        if c.has_fields() {
            let fields = c.all_fields();
            if args.len() > fields.len() {
                return exc(
                    pos,
                    format!(
                        "{}() takes {} positional arguments but {} were given (TypeError)",
                        c.name,
                        fields.len(),
                        args.len()
                    ),
                );
            }
            let mut vals: Vec<Option<Value>> = vec![None; fields.len()];
            for (i, a) in args.into_iter().enumerate() {
                vals[i] = Some(a);
            }
            for (k, v) in kwargs {
                match fields.iter().position(|f| *f == k) {
                    Some(i) if vals[i].is_none() => vals[i] = Some(v),
                    Some(_) => {
                        return exc(pos, format!("{}() got multiple values for argument `{k}` (TypeError)", c.name));
                    }
                    None => {
                        return exc(pos, format!("{}() got an unexpected keyword argument `{k}` (TypeError)", c.name));
                    }
                }
            }
            for (f, v) in fields.iter().zip(vals) {
                let v = match v {
                    Some(v) => v,
                    None => match c.lookup(f) {
                        Some(Value::Wrapped(w)) if w.0 == "default_factory" => {
                            self.call(&w.1.clone(), Vec::new(), Vec::new(), pos)?
                        }
                        Some(d) => d,
                        None => return exc(pos, format!("{}() missing required argument `{f}` (TypeError)", c.name)),
                    },
                };
                inst.attrs.borrow_mut().push((f.clone(), v));
            }
            if let Some(post) = c.lookup("__post_init__") {
                self.call(&post, vec![me.clone()], Vec::new(), pos)?;
            }
            return Ok(me);
        }
        match c.lookup("__init__") {
            Some(init) => {
                let mut all = vec![me.clone()];
                all.extend(args);
                self.call(&init, all, kwargs, pos)?;
            }
            None if kwargs.is_empty() && c.native.as_deref().and_then(super::types::exception_parent).is_some() => {
                inst.attrs.borrow_mut().push(("args".into(), Value::Tuple(Rc::new(args))));
            }
            None if !args.is_empty() || !kwargs.is_empty() => {
                return exc(pos, format!("{}() takes no arguments (TypeError)", c.name));
            }
            None => {}
        }
        Ok(me)
    }

    pub(super) fn make_function(&mut self, def: &Rc<FuncDef>, ctx: &Ctx) -> R<Value> {
        let mut defaults = Vec::with_capacity(def.params.len());
        for p in &def.params {
            defaults.push(match &p.default {
                Some(e) => Some(self.eval(e, ctx)?),
                None => None,
            });
        }
        // Python up to 3.13 evaluates a def's annotations when the def runs.
        for a in def.params.iter().filter_map(|p| p.annotation.as_ref()).chain(def.returns.as_ref()) {
            self.annotation(a, ctx)?;
        }
        Ok(Value::Func(Rc::new(Closure {
            def: def.clone(),
            defaults,
            env: ctx.frame.clone(),
            globals: ctx.globals.clone(),
            name: std::cell::RefCell::new(def.name.clone()),
        })))
    }

    /// `del x[i]`, `del x[a:b]`, `del d[k]`, `del obj.attr`.
    fn delete(&mut self, t: &Expr, ctx: &Ctx) -> R<()> {
        let pos = t.pos;
        match &t.kind {
            ExprKind::Subscript(obj, idx) => {
                let o = self.eval(obj, ctx)?;
                let i = self.eval(idx, ctx)?;
                match (&o, &i) {
                    (Value::List(l), Value::Slice(sl)) => {
                        let n = l.borrow().len();
                        let mut parts = [None, None, None];
                        for (k, x) in sl.iter().enumerate() {
                            parts[k] = match x {
                                Value::None => None,
                                other => Some(super::builtins::to_int(other, pos)?),
                            };
                        }
                        if parts[2].is_some_and(|s| s != 1) {
                            return unsup(pos, "`del` of a list slice with a step is not modelled");
                        }
                        let clamp = |v: Option<i64>, dflt: usize| -> usize {
                            match v {
                                None => dflt,
                                Some(v) if v < 0 => (v + n as i64).max(0) as usize,
                                Some(v) => (v as usize).min(n),
                            }
                        };
                        let (a, b) = (clamp(parts[0], 0), clamp(parts[1], n));
                        if a < b {
                            l.borrow_mut().drain(a..b);
                        }
                        Ok(())
                    }
                    (Value::List(l), _) => {
                        let k = super::builtins::to_int(&i, pos)?;
                        let n = l.borrow().len() as i64;
                        let j = if k < 0 { k + n } else { k };
                        if j < 0 || j >= n {
                            return exc(pos, "list assignment index out of range (IndexError)");
                        }
                        l.borrow_mut().remove(j as usize);
                        Ok(())
                    }
                    (Value::Dict(d), _) => {
                        if d.borrow_mut().remove(&i, pos)? {
                            Ok(())
                        } else {
                            exc(pos, "the key to `del` is not in the dict (KeyError)")
                        }
                    }
                    (Value::Unavailable(u), _) => unsup(pos, unavailable_msg(u)),
                    _ => unsup(pos, format!("`del` of an item of a {} is not modelled", o.type_name())),
                }
            }
            ExprKind::Attr(obj, name) => match self.eval(obj, ctx)? {
                Value::Instance(inst) => {
                    let mut attrs = inst.attrs.borrow_mut();
                    match attrs.iter().position(|(k, _)| k == name) {
                        Some(j) => {
                            attrs.remove(j);
                            Ok(())
                        }
                        None => exc(pos, format!("the object has no attribute `{name}` to delete (AttributeError)")),
                    }
                }
                other => unsup(pos, format!("`del` of an attribute of a {} is not modelled", other.type_name())),
            },
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                for x in items {
                    if let ExprKind::Name(n) = &x.kind {
                        match &ctx.frame {
                            Some(f) => f.borrow_mut().vars.remove(n).map(|(v, _)| v),
                            None => ctx.globals.borrow_mut().vars.remove(n).map(|(v, _)| v),
                        };
                    } else {
                        self.delete(x, ctx)?;
                    }
                }
                Ok(())
            }
            _ => exc(pos, "cannot delete this expression (SyntaxError)"),
        }
    }

    /// Binds a name in the current scope, honouring `global` and `nonlocal`.
    pub(super) fn bind(&mut self, name: &Rc<str>, v: Value, ctx: &Ctx) {
        let Some(frame) = &ctx.frame else {
            ctx.globals.borrow_mut().set(name.clone(), v);
            return;
        };
        let (is_global, is_nonlocal) = {
            let f = frame.borrow();
            (f.global_names.contains(name), f.nonlocal_names.contains(name))
        };
        if is_global {
            ctx.globals.borrow_mut().set(name.clone(), v);
            return;
        }
        if is_nonlocal {
            let mut cur = frame.borrow().parent.clone();
            while let Some(f) = cur {
                if f.borrow().locals.contains(name) {
                    f.borrow_mut().vars.insert(name.clone(), (v, 0));
                    return;
                }
                cur = f.borrow().parent.clone();
            }
        }
        let old = frame.borrow_mut().vars.insert(name.clone(), (v, 0));
        if let Some((old, _)) = old {
            super::value::dismantle(vec![old]);
        }
    }

    pub(super) fn lookup(&mut self, name: &Rc<str>, pos: Pos, ctx: &Ctx) -> R<Value> {
        let v = self.lookup_name(name, pos, ctx)?;
        self.check_taint(&v, pos)?;
        Ok(v)
    }

    fn lookup_name(&mut self, name: &Rc<str>, pos: Pos, ctx: &Ctx) -> R<Value> {
        let mut cur = ctx.frame.clone();
        let mut first = true;
        while let Some(f) = cur {
            {
                let fb = f.borrow();
                if let Some((v, _)) = fb.vars.get(name) {
                    return Ok(v.clone());
                }
                if first
                    && fb.locals.contains(name)
                    && !fb.global_names.contains(name)
                    && !fb.nonlocal_names.contains(name)
                {
                    return exc(
                        pos,
                        format!("local variable `{name}` referenced before assignment (UnboundLocalError)"),
                    );
                }
                if fb.global_names.contains(name) {
                    break;
                }
            }
            first = false;
            cur = f.borrow().parent.clone();
        }
        if let Some(v) = ctx.globals.borrow().get(name) {
            return Ok(v);
        }
        if let Some(v) = super::builtins::builtin(name) {
            return Ok(v);
        }
        if PYTHON_BUILTINS.contains(&&**name) {
            return unsup(pos, format!("the builtin `{name}` is not modelled"));
        }
        exc(pos, format!("name `{}` is not defined (NameError)", super::lex::short(name)))
    }

    pub(super) fn assign(&mut self, target: &Expr, v: Value, ctx: &Ctx) -> R<()> {
        match &target.kind {
            ExprKind::Name(n) => {
                self.bind(n, v, ctx);
                Ok(())
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                let vals = self.iterate(&v, target.pos)?;
                let star = items.iter().position(|e| matches!(e.kind, ExprKind::Starred(_)));
                match star {
                    None => {
                        if vals.len() != items.len() {
                            return exc(
                                target.pos,
                                format!(
                                    "cannot unpack {} values into {} targets (ValueError)",
                                    vals.len(),
                                    items.len()
                                ),
                            );
                        }
                        for (t, x) in items.iter().zip(vals) {
                            self.assign(t, x, ctx)?;
                        }
                    }
                    Some(s) => {
                        let after = items.len() - s - 1;
                        if vals.len() < items.len() - 1 {
                            return exc(target.pos, "not enough values to unpack (ValueError)");
                        }
                        for (t, x) in items[..s].iter().zip(vals.iter()) {
                            self.assign(t, x.clone(), ctx)?;
                        }
                        let mid = vals[s..vals.len() - after].to_vec();
                        if let ExprKind::Starred(inner) = &items[s].kind {
                            self.assign(inner, Value::List(shared(mid)), ctx)?;
                        }
                        for (t, x) in items[s + 1..].iter().zip(vals[vals.len() - after..].iter()) {
                            self.assign(t, x.clone(), ctx)?;
                        }
                    }
                }
                Ok(())
            }
            ExprKind::Subscript(obj, idx) => {
                let o = self.eval(obj, ctx)?;
                let i = self.eval(idx, ctx)?;
                self.setitem(&o, i, v, target.pos)
            }
            ExprKind::Attr(obj, name) => {
                let o = self.eval(obj, ctx)?;
                super::builtins::set_attr(&o, name, v, target.pos)
            }
            ExprKind::Starred(inner) => self.assign(inner, v, ctx),
            _ => exc(target.pos, "cannot assign to this expression"),
        }
    }
}

/// The name under which a method's frame of its class (see `Interp::make_class`) keeps the name of
/// its first parameter: not an identifier, so no text can read it.
const SUPER_SELF: &str = "super self";

impl Interp {
    /// `super()` in a method: `super(__class__, first argument)`, from the frame the class gave the
    /// method and the method's own frame.
    fn super_here(&mut self, ctx: &Ctx, pos: Pos) -> R<Value> {
        let Some(own) = &ctx.frame else { return exc(pos, "super(): no arguments (RuntimeError)") };
        // The nearest frame a class gave a method, and whether it is this function's.
        let (mut frame, mut direct) = (own.borrow().parent.clone(), true);
        while let Some(f) = frame {
            let (class, param) = {
                let b = f.borrow();
                (b.vars.get("__class__").map(|(v, _)| v.clone()), b.vars.get(SUPER_SELF).map(|(v, _)| v.clone()))
            };
            if let Some(Value::Class(class)) = class {
                let obj = match param {
                    Some(Value::Str(p)) if direct => own.borrow().vars.get(&p).map(|(v, _)| v.clone()),
                    _ => None,
                };
                // A function nested in a method passes its own first argument, which the reader
                // does not know: with no instance of the class among its values, it has none.
                let instance = |v: &Value| match v {
                    Value::Instance(i) => i.class.is_subclass_of(&class),
                    Value::Class(c) => c.is_subclass_of(&class),
                    _ => false,
                };
                return match obj {
                    Some(obj) => super::builtins::super_of(&class, obj, pos),
                    None if direct || !own.borrow().vars.values().any(|(v, _)| instance(v)) => {
                        exc(pos, "super(): no arguments (RuntimeError)")
                    }
                    None => unsup(pos, "super() without arguments in a function nested in a method is not modelled"),
                };
            }
            direct = false;
            frame = f.borrow().parent.clone();
        }
        exc(pos, "super(): __class__ cell not found (RuntimeError)")
    }
}

impl Eval for Interp {
    fn truthy(&mut self, v: &Value, pos: Pos) -> R<bool> {
        Ok(match v {
            Value::Instance(i) if i.class.is_int_enum() => return self.truthy(&v.clone().plain(), pos),
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Tuple(t) => !t.is_empty(),
            Value::List(l) => !l.borrow().is_empty(),
            Value::Dict(d) => !d.borrow().is_empty(),
            Value::Range(a, b, s) => range_len(*a, *b, *s) > 0,
            Value::Tensor(cell) => {
                super::unset::check(self, v, pos)?;
                let t = cell.borrow();
                if t.numel() != 1 {
                    return exc(pos, format!("the truth value of a tensor with {} elements is ambiguous", t.numel()));
                }
                t.data[0].truthy()
            }
            Value::Traced(..) | Value::TracedVec(_) | Value::Lookup(_) => {
                return exc(
                    pos,
                    "data-dependent control flow: a tensor that depends on the indices is used as a Python bool \
                     (`if`, `and`, `or`, `not`, `min`/`max` of tensors); torch's vmap in create_mask refuses this \
                     too — use `&`, `|`, `~` or torch.where",
                );
            }
            Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
            _ => true,
        })
    }

    fn iterate(&mut self, v: &Value, pos: Pos) -> R<Vec<Value>> {
        super::pyset::check_order(self, v, pos)?;
        let items = self.iterate_items(v, pos)?;
        // The items are charged as values made (a string's characters at twice their bytes).
        self.alloc_items(pos, if matches!(v, Value::Str(_)) { 2 * items.len() } else { items.len() })?;
        if !self.tainted.is_empty() {
            for x in &items {
                self.check_taint(x, pos)?;
            }
        }
        Ok(items)
    }
    /// Calls a function value.
    fn call(&mut self, f: &Value, args: Vec<Value>, kwargs: Vec<(Rc<str>, Value)>, pos: Pos) -> R<Value> {
        self.step(pos)?;
        match f {
            Value::Func(c) => self.call_closure(c, args, kwargs, pos),
            Value::Native(n) => super::builtins::call_native(self, n, args, kwargs, pos),
            Value::Partial(p) => {
                let mut all = p.args.clone();
                all.extend(args);
                let mut kw = p.kwargs.clone();
                for (k, v) in kwargs {
                    kw.retain(|(x, _)| *x != k);
                    kw.push((k, v));
                }
                self.call(&p.func.clone(), all, kw, pos)
            }
            Value::Class(c) if c.is_enum() && kwargs.is_empty() => super::enums::by_value(self, c, &args, pos),
            Value::Class(c) => self.instantiate(c, args, kwargs, pos),
            // An instance whose class defines `__call__` (looked up on the class, as Python does).
            Value::Instance(inst) => match inst.class.lookup("__call__") {
                Some(method @ Value::Func(_)) => {
                    let mut all = vec![f.clone()];
                    all.extend(args);
                    self.call(&method, all, kwargs, pos)
                }
                Some(_) => {
                    unsup(pos, format!("`{}.__call__` that is not a plain method is not supported", inst.class.name))
                }
                None => exc(pos, format!("a `{}` object is not callable (TypeError)", inst.class.name)),
            },
            Value::Unavailable(u) => unsup(pos, unavailable_msg(u)),
            other => exc(pos, format!("a {} is not callable (TypeError)", other.type_name())),
        }
    }

    fn import_name(&mut self, module: &str, name: &str, pos: Pos) -> R<Value> {
        if let Some(lib) = super::library::prelude_for(module) {
            let g = self.prelude(lib, pos)?;
            let v = g.borrow().get(name);
            return match v {
                Some(v) => Ok(v),
                None => {
                    let full = format!("{module}.{name}");
                    if super::builtins::is_known(&full) {
                        return Ok(Value::native(&full));
                    }
                    let why = if matches!(name, "create_block_mask" | "create_mask" | "flex_attention" | "BlockMask") {
                        "is not a mask function (it runs attention or builds a mask from one; hasseflow reads the mask_mod itself)"
                    } else {
                        "is not in hasseflow's table of library masks"
                    };
                    Ok(Value::Unavailable(Rc::new(Unavailable {
                        what: format!("line {}, column {}: `{full}` {why}", pos.line, pos.col),
                        aliases: Vec::new(),
                    })))
                }
            };
        }
        let m = Value::Module(module.into());
        self.getattr(&m, name, pos)
    }
}

impl Interp {
    fn iterate_items(&mut self, v: &Value, pos: Pos) -> R<Vec<Value>> {
        Ok(match v {
            Value::Class(c) if c.is_enum() => {
                let members = c.members.borrow().clone();
                self.charge_work(pos, members.len(), "enum members iterated")?;
                members
            }
            Value::Tuple(t) => t.as_ref().clone(),
            Value::List(l) => l.borrow().clone(),
            Value::Dict(d) => d.borrow().iter().map(|(k, _)| k.clone()).collect(),
            Value::Str(s) => {
                if s.len() > MAX_ITEMS {
                    return limit(pos, "a string too long to iterate");
                }
                s.chars().map(|c| Value::Str(c.to_string().into())).collect()
            }
            Value::Range(a, b, s) => {
                let n = range_len(*a, *b, *s);
                if n > MAX_ITEMS as i64 {
                    return limit(pos, format!("a range of {n} items is over the limit of {MAX_ITEMS}"));
                }
                self.charge(pos, n as usize)?;
                (0..n).map(|i| Value::Int(a + i * s)).collect()
            }
            Value::Tensor(cell) => {
                // Rows are views of the tensor, as torch iterates it.
                let t = cell.borrow().clone();
                let rows: Vec<Value> = super::tensor_ops::unbind(&t, pos)?.into_iter().map(Value::tensor).collect();
                let inner: usize = t.shape[1..].iter().product();
                for (i, r) in rows.iter().enumerate() {
                    super::views::register(self, cell, r, Some((i * inner..(i + 1) * inner).collect()));
                }
                rows
            }
            Value::TracedVec(v) => super::vector::iterate(self, v, pos)?,
            Value::Lookup(l) => return super::ops::too_large(l, pos),
            Value::Traced(..) => {
                return exc(pos, "iterating over a traced index tensor is not possible (vmap refuses it too)");
            }
            Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
            other => return exc(pos, format!("a {} is not iterable (TypeError)", other.type_name())),
        })
    }
}

impl Interp {
    pub(super) fn eval(&mut self, e: &Expr, ctx: &Ctx) -> R<Value> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return limit(e.pos, format!("evaluation nested over {MAX_DEPTH} levels (deep recursion or nesting)"));
        }
        let r = self.eval_inner(e, ctx);
        self.depth -= 1;
        r
    }

    fn eval_inner(&mut self, e: &Expr, ctx: &Ctx) -> R<Value> {
        self.step(e.pos)?;
        let pos = e.pos;
        Ok(match &e.kind {
            ExprKind::Name(n) => self.lookup(n, pos, ctx)?,
            ExprKind::Int(v) => Value::Int(*v),
            ExprKind::BigInt(d) => {
                return unsup(
                    pos,
                    format!("a {d}-digit integer literal is over 64 bits (hasseflow models 64-bit integers)"),
                );
            }
            ExprKind::Float(v) => Value::Float(*v),
            ExprKind::Str(s) => Value::Str(s.clone()),
            ExprKind::FStr => Value::Unavailable(Rc::new(Unavailable {
                what: format!("line {}, column {}: f-strings are not evaluated", pos.line, pos.col),
                aliases: Vec::new(),
            })),
            ExprKind::None => Value::None,
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Ellipsis => Value::Ellipsis,
            ExprKind::Tuple(items) => Value::Tuple(Rc::new(self.eval_items(items, ctx)?)),
            ExprKind::List(items) => Value::List(shared(self.eval_items(items, ctx)?)),
            ExprKind::Set(items) => {
                let vals = self.eval_items(items, ctx)?;
                let literal = |e: &Expr| match &e.kind {
                    ExprKind::Int(_) | ExprKind::Bool(_) => true,
                    ExprKind::Unary(UnOp::Neg | UnOp::Pos, x) => matches!(x.kind, ExprKind::Int(_)),
                    _ => false,
                };
                let constant = items.len() > 2 && items.iter().all(literal);
                super::pyset::make(self, vals, None, constant, pos)?
            }
            ExprKind::Dict(items) => {
                let mut out = PyDict::default();
                for (k, v) in items {
                    match k {
                        Some(k) => {
                            let k = self.eval(k, ctx)?;
                            let v = self.eval(v, ctx)?;
                            dict_set(&mut out, k, v, pos)?;
                        }
                        None => {
                            let d = self.eval(v, ctx)?;
                            let Value::Dict(d) = d else { return exc(pos, "`**` of a non-dict") };
                            for (k, v) in d.borrow().iter() {
                                dict_set(&mut out, k.clone(), v.clone(), pos)?;
                            }
                        }
                    }
                }
                Value::Dict(shared(out))
            }
            ExprKind::Comp(kind, elt, gens) => {
                let mut out = Vec::new();
                let scope = self.comp_scope(ctx);
                self.comprehension(gens, 0, &scope, &mut |me, c| {
                    let v = me.eval(elt, c)?;
                    me.alloc_items(pos, 1)?;
                    out.push(v);
                    if out.len() > MAX_ITEMS {
                        return limit(pos, "a comprehension over the item limit");
                    }
                    Ok(())
                })?;
                match kind {
                    CompKind::List | CompKind::Gen => Value::List(shared(out)),
                    CompKind::Set => super::pyset::make(self, out, None, false, pos)?,
                }
            }
            ExprKind::DictComp(kv, gens) => {
                let mut out = PyDict::default();
                let scope = self.comp_scope(ctx);
                self.comprehension(gens, 0, &scope, &mut |me, c| {
                    let k = me.eval(&kv.0, c)?;
                    let v = me.eval(&kv.1, c)?;
                    me.alloc_items(pos, 2)?;
                    dict_set(&mut out, k, v, pos)
                })?;
                Value::Dict(shared(out))
            }
            ExprKind::Attr(obj, name) => {
                let o = self.eval(obj, ctx)?;
                self.getattr(&o, name, pos)?
            }
            ExprKind::Subscript(obj, idx) => {
                let o = self.eval(obj, ctx)?;
                let i = self.eval(idx, ctx)?;
                self.getitem(&o, i, pos)?
            }
            ExprKind::Slice(a, b, c) => {
                let mut parts = [Value::None, Value::None, Value::None];
                for (k, x) in [a, b, c].into_iter().enumerate() {
                    if let Some(x) = x {
                        parts[k] = self.eval(x, ctx)?;
                    }
                }
                Value::Slice(Rc::new(parts))
            }
            ExprKind::Call(func, args) => {
                let f = self.eval(func, ctx)?;
                if args.is_empty() && matches!(&f, Value::Native(n) if &*n.name == "builtins.super" && n.recv.is_none())
                {
                    return self.super_here(ctx, pos);
                }
                let mut pos_args = Vec::new();
                let mut kwargs: Vec<(Rc<str>, Value)> = Vec::new();
                for a in args {
                    match a {
                        Arg::Pos(x) => pos_args.push(self.eval(x, ctx)?),
                        Arg::Star(x) => {
                            let v = self.eval(x, ctx)?;
                            pos_args.extend(self.iterate(&v, x.pos)?);
                        }
                        Arg::Kw(k, x) => {
                            let v = self.eval(x, ctx)?;
                            kwargs.push((k.clone(), v));
                        }
                        Arg::StarStar(x) => match self.eval(x, ctx)? {
                            Value::Dict(d) => {
                                for (k, v) in d.borrow().iter() {
                                    let Value::Str(k) = k else { return exc(x.pos, "keywords must be strings") };
                                    kwargs.push((k.clone(), v.clone()));
                                }
                            }
                            Value::Unavailable(u) => return unsup(x.pos, unavailable_msg(&u)),
                            _ => return exc(x.pos, "`**` needs a dict"),
                        },
                    }
                }
                self.call(&f, pos_args, kwargs, pos)?
            }
            ExprKind::Unary(op, x) => {
                let v = self.eval(x, ctx)?;
                if *op == UnOp::Not {
                    return Ok(Value::Bool(!self.truthy(&v, x.pos)?));
                }
                super::ops::unary(self, *op, v, pos)?
            }
            ExprKind::Chain(first, rest) => {
                let mut acc = self.eval(first, ctx)?;
                for (op, x) in rest {
                    let v = self.eval(x, ctx)?;
                    acc = if *op == BinOp::MatMul {
                        super::tensor_tail::matmul(self, &acc, &v, "matmul", pos)?
                    } else {
                        super::ops::binary(self, *op, acc, v, pos)?
                    };
                }
                acc
            }
            ExprKind::Pow(a, b) => {
                let x = self.eval(a, ctx)?;
                let y = self.eval(b, ctx)?;
                super::ops::binary(self, BinOp::Pow, x, y, pos)?
            }
            ExprKind::BoolOp(is_and, items) => {
                let mut last = Value::None;
                for x in items {
                    last = self.eval(x, ctx)?;
                    let t = self.truthy(&last, x.pos)?;
                    if t != *is_and {
                        return Ok(last);
                    }
                }
                last
            }
            ExprKind::Compare(first, rest) => {
                let mut left = self.eval(first, ctx)?;
                let mut result = Value::Bool(true);
                for (op, x) in rest {
                    let right = self.eval(x, ctx)?;
                    let r = self.compare(*op, &left, &right, x.pos)?;
                    if rest.len() == 1 {
                        return Ok(r);
                    }
                    // A chain is `a < b and b < c`: each link is used as a Python bool.
                    if !self.truthy(&r, x.pos)? {
                        return Ok(r);
                    }
                    result = r;
                    left = right;
                }
                result
            }
            ExprKind::IfExp(parts) => {
                let c = self.eval(&parts[0], ctx)?;
                if self.truthy(&c, parts[0].pos)? { self.eval(&parts[1], ctx)? } else { self.eval(&parts[2], ctx)? }
            }
            ExprKind::Lambda(def) => self.make_function(def, ctx)?,
            ExprKind::Starred(_) => return exc(pos, "a starred expression is not allowed here"),
            ExprKind::Walrus(name, x) => {
                let v = self.eval(x, ctx)?;
                self.bind(name, v.clone(), ctx);
                v
            }
        })
    }

    fn eval_items(&mut self, items: &[Expr], ctx: &Ctx) -> R<Vec<Value>> {
        let mut out = Vec::with_capacity(items.len());
        for x in items {
            if let ExprKind::Starred(inner) = &x.kind {
                let v = self.eval(inner, ctx)?;
                out.extend(self.iterate(&v, x.pos)?);
            } else {
                out.push(self.eval(x, ctx)?);
            }
            if out.len() > MAX_ITEMS {
                return limit(x.pos, format!("a display of over {MAX_ITEMS} items"));
            }
        }
        if let Some(x) = items.first() {
            self.alloc_items(x.pos, out.len())?;
        }
        Ok(out)
    }

    /// A comprehension's own scope, under the current one (its targets do not leak, as in Python 3).
    fn comp_scope(&mut self, ctx: &Ctx) -> Ctx {
        let frame = Frame {
            vars: HashMap::new(),
            locals: Vec::new(),
            global_names: Vec::new(),
            nonlocal_names: Vec::new(),
            parent: ctx.frame.clone(),
        };
        Ctx { globals: ctx.globals.clone(), frame: Some(shared(frame)) }
    }

    fn comprehension(
        &mut self,
        gens: &[Comp],
        k: usize,
        ctx: &Ctx,
        body: &mut dyn FnMut(&mut Interp, &Ctx) -> R<()>,
    ) -> R<()> {
        if k == gens.len() {
            return body(self, ctx);
        }
        let g = &gens[k];
        let it = self.eval(&g.iter, ctx)?;
        for item in self.iterate(&it, g.iter.pos)? {
            self.step(g.iter.pos)?;
            self.assign(&g.target, item, ctx)?;
            let mut ok = true;
            for c in &g.conds {
                let v = self.eval(c, ctx)?;
                if !self.truthy(&v, c.pos)? {
                    ok = false;
                    break;
                }
            }
            if ok {
                self.comprehension(gens, k + 1, ctx, body)?;
            }
        }
        Ok(())
    }

    fn inplace(&mut self, op: BinOp, cur: Value, rhs: Value, pos: Pos) -> R<Value> {
        // Lists extend in place; tensors update in place (their aliases see it, as in torch).
        match (&cur, op) {
            (Value::List(l), BinOp::Add) => {
                let items = self.iterate(&rhs, pos)?;
                if l.borrow().len() + items.len() > MAX_ITEMS {
                    return limit(pos, "a list over the item limit");
                }
                self.alloc_items(pos, items.len())?;
                l.borrow_mut().extend(items);
                return Ok(cur.clone());
            }
            (Value::Tensor(t), _) => {
                super::views::overlap(self, t, None, &rhs, pos)?;
                let r = super::ops::binary(self, op, cur.clone(), rhs, pos)?;
                super::views::write_in_place(self, t, &r, pos)?;
                return Ok(cur.clone());
            }
            _ => {}
        }
        super::ops::binary(self, op, cur, rhs, pos)
    }

    fn call_closure(&mut self, c: &Rc<Closure>, args: Vec<Value>, kwargs: Vec<(Rc<str>, Value)>, pos: Pos) -> R<Value> {
        if self.calls >= MAX_CALLS {
            return limit(pos, format!("maximum recursion depth exceeded (over {MAX_CALLS} nested calls)"));
        }
        let def = &c.def;
        let mut vars = super::value::Vars::new();
        let mut args = args.into_iter();
        let mut extra: Vec<Value> = Vec::new();
        let mut kw_rest = PyDict::default();
        for p in def.params.iter() {
            match p.kind {
                ParamKind::Normal => {
                    if let Some(a) = args.next() {
                        vars.insert(p.name.clone(), (a, 0));
                    }
                }
                ParamKind::VarArgs => extra.extend(args.by_ref()),
                _ => {}
            }
        }
        let leftover: Vec<Value> = args.collect();
        if !leftover.is_empty() {
            let n = def.params.iter().filter(|p| p.kind == ParamKind::Normal).count();
            return exc(
                pos,
                format!(
                    "{}() takes {n} positional arguments but {} were given (TypeError)",
                    def.name,
                    n + leftover.len()
                ),
            );
        }
        for (k, v) in kwargs {
            match def.params.iter().find(|p| p.name == k && matches!(p.kind, ParamKind::Normal | ParamKind::KwOnly)) {
                Some(p) => {
                    if vars.contains_key(&p.name) {
                        return exc(pos, format!("{}() got multiple values for argument `{k}` (TypeError)", def.name));
                    }
                    vars.insert(p.name.clone(), (v, 0));
                }
                None if def.params.iter().any(|p| p.kind == ParamKind::VarKw) => {
                    dict_set(&mut kw_rest, Value::Str(k), v, pos)?;
                }
                None => {
                    return exc(pos, format!("{}() got an unexpected keyword argument `{k}` (TypeError)", def.name));
                }
            }
        }
        for (i, p) in def.params.iter().enumerate() {
            match p.kind {
                ParamKind::VarArgs => {
                    vars.insert(p.name.clone(), (Value::Tuple(Rc::new(std::mem::take(&mut extra))), 0));
                }
                ParamKind::VarKw => {
                    vars.insert(p.name.clone(), (Value::Dict(shared(std::mem::take(&mut kw_rest))), 0));
                }
                _ => {
                    if !vars.contains_key(&p.name) {
                        match &c.defaults[i] {
                            Some(d) => {
                                vars.insert(p.name.clone(), (d.clone(), 0));
                            }
                            None => {
                                return exc(
                                    pos,
                                    format!("{}() missing required argument `{}` (TypeError)", def.name, p.name),
                                );
                            }
                        }
                    }
                }
            }
        }
        let frame = Frame {
            vars,
            locals: def.locals.clone(),
            global_names: def.globals.clone(),
            nonlocal_names: def.nonlocals.clone(),
            parent: c.env.clone(),
        };
        let ctx = Ctx { globals: c.globals.clone(), frame: Some(shared(frame)) };
        // A call from the text into a library prelude: what the prelude computes, and where it
        // fails, is placed at this call, not at the prelude's own lines (which are not the text's).
        // A call from a prelude back into the text (a mask given to `and_masks`) is the text's own.
        let saved = self.user_call;
        let in_lib = !self.in_prelude && self.preludes.values().any(|g| Rc::ptr_eq(g, &c.globals));
        let into_prelude = in_lib && saved.is_none();
        self.user_call = if in_lib { saved.or(Some(pos)) } else { None };
        self.calls += 1;
        self.depth += 1;
        let r = if self.depth > MAX_DEPTH {
            limit(pos, format!("evaluation nested over {MAX_DEPTH} levels (deep recursion)"))
        } else {
            self.exec_block(&def.body, &ctx)
        };
        self.depth -= 1;
        self.calls -= 1;
        self.user_call = saved;
        let r = r.map_err(|f| if into_prelude { Fail { pos, ..f } } else { f });
        match r? {
            Flow::Return(v) => Ok(v),
            _ => Ok(Value::None),
        }
    }

    pub(super) fn compare(&mut self, op: CmpOp, a: &Value, b: &Value, pos: Pos) -> R<Value> {
        let cmp = match op {
            CmpOp::Lt => Cmp::Lt,
            CmpOp::Le => Cmp::Le,
            CmpOp::Gt => Cmp::Gt,
            CmpOp::Ge => Cmp::Ge,
            CmpOp::Eq => Cmp::Eq,
            CmpOp::Ne => Cmp::Ne,
            CmpOp::Is | CmpOp::IsNot => {
                let same = match (a, b) {
                    (Value::None, Value::None) | (Value::Ellipsis, Value::Ellipsis) => true,
                    (Value::Bool(x), Value::Bool(y)) => x == y,
                    (Value::Dtype(x), Value::Dtype(y)) => x == y,
                    (Value::Tensor(x), Value::Tensor(y)) => Rc::ptr_eq(x, y),
                    (Value::List(x), Value::List(y)) => Rc::ptr_eq(x, y),
                    (Value::Func(x), Value::Func(y)) => Rc::ptr_eq(x, y),
                    (Value::Class(x), Value::Class(y)) => Rc::ptr_eq(x, y),
                    (Value::Instance(x), Value::Instance(y)) => Rc::ptr_eq(x, y),
                    (Value::Tuple(x), Value::Tuple(y)) => Rc::ptr_eq(x, y),
                    (Value::Dict(x), Value::Dict(y)) => Rc::ptr_eq(x, y),
                    (Value::Native(x), Value::Native(y)) if x.recv.is_none() && y.recv.is_none() => x.name == y.name,
                    (Value::Unavailable(u), _) | (_, Value::Unavailable(u)) => return unsup(pos, unavailable_msg(u)),
                    _ => false,
                };
                return Ok(Value::Bool(same == (op == CmpOp::Is)));
            }
            CmpOp::In | CmpOp::NotIn => {
                let found = match b {
                    Value::Str(s) => match a {
                        Value::Str(x) => s.contains(&**x),
                        _ => return exc(pos, "`in <string>` needs a string"),
                    },
                    Value::Dict(d) => d.borrow().contains(a, pos)?,
                    Value::Class(c) if c.is_enum() && !a.is_member() => {
                        return unsup(pos, "`in` an enum class for a value that is not a member is not modelled");
                    }
                    Value::Range(x, y, s) => match a {
                        Value::Int(v) => {
                            let n = range_len(*x, *y, *s);
                            n > 0 && (v - x) % s == 0 && (v - x) / s >= 0 && (v - x) / s < n
                        }
                        _ => false,
                    },
                    _ => {
                        self.sets.order_free += 1;
                        let items = self.iterate(b, pos);
                        self.sets.order_free -= 1;
                        let items = items?;
                        let mut found = false;
                        for it in items {
                            let e = self.compare(CmpOp::Eq, a, &it, pos)?;
                            if self.truthy(&e, pos)? {
                                found = true;
                                break;
                            }
                        }
                        found
                    }
                };
                return Ok(Value::Bool(found == (op == CmpOp::In)));
            }
        };
        super::ops::compare(self, cmp, a, b, pos)
    }

    /// The value of `import path` (the top-level name of a dotted path is bound by the caller).
    pub(super) fn module_value(&mut self, path: &str) -> Value {
        Value::Module(path.into())
    }

    fn prelude(&mut self, lib: super::library::Lib, pos: Pos) -> R<Shared<Globals>> {
        if let Some(g) = self.preludes.get(lib.module) {
            return Ok(g.clone());
        }
        let toks = super::lex::lex(lib.source).map_err(|e| Fail {
            kind: FailKind::Limit,
            msg: format!("prelude {}: {e}", lib.module),
            pos,
            exc_type: None,
        })?;
        let body = super::parse::Parser::new(toks).module().map_err(|e| Fail {
            kind: FailKind::Limit,
            msg: format!("prelude {}: {e}", lib.module),
            pos,
            exc_type: None,
        })?;
        let g = shared(Globals::default());
        self.preludes.insert(lib.module, g.clone());
        let was = self.in_prelude;
        self.in_prelude = true;
        let r = self.run_module(&body, &Ctx { globals: g.clone(), frame: None });
        self.in_prelude = was;
        r.map_err(|f| Fail { msg: format!("in hasseflow's {} prelude: {}", lib.module, f.msg), ..f })?;
        Ok(g)
    }

    pub(super) fn getattr(&mut self, o: &Value, name: &str, pos: Pos) -> R<Value> {
        let v = super::builtins::getattr(self, o, name, pos)?;
        self.check_taint(&v, pos)?;
        Ok(v)
    }
    pub(super) fn getitem(&mut self, o: &Value, i: Value, pos: Pos) -> R<Value> {
        let v = super::builtins::getitem(self, o, i, pos)?;
        self.check_taint(&v, pos)?;
        Ok(v)
    }
    pub(super) fn setitem(&mut self, o: &Value, i: Value, v: Value, pos: Pos) -> R<()> {
        super::builtins::setitem(self, o, i, v, pos)
    }

    /// The parameters without a default that torch's `create_mask` counts to tell a mask_mod (4)
    /// from a score_mod (5): for a function of the text, or a method bound to its instance or
    /// class, its `__code__`'s positional parameters less its defaults (`self` or `cls` counted,
    /// `*args`, `**kwargs` and keyword-only ones not); for an instance called through its class's
    /// `__call__`, `inspect.signature`'s parameters without a default (`self` bound, `*args`,
    /// `**kwargs` and keyword-only ones counted); `None` for other callables (a partial, a
    /// library mask).
    pub(super) fn torch_param_count(f: &Value) -> Option<usize> {
        let (c, signature) = match f {
            Value::Func(c) => (c.clone(), false),
            Value::Partial(p) if p.method => match &p.func {
                Value::Func(c) => (c.clone(), false),
                _ => return None,
            },
            Value::Instance(i) => match i.class.lookup("__call__") {
                Some(Value::Func(c)) => (c, true),
                _ => return None,
            },
            _ => return None,
        };
        let counted = (0..c.def.params.len())
            .filter(|&i| c.defaults[i].is_none() && (signature || c.def.params[i].kind == ParamKind::Normal))
            .count();
        Some(counted.saturating_sub(usize::from(signature)))
    }

    /// How many positional arguments a callable accepts: (required, maximum or None for *args).
    pub(super) fn arity(f: &Value) -> Option<(usize, Option<usize>)> {
        match f {
            Value::Func(c) => {
                let normal: Vec<_> =
                    c.def.params.iter().enumerate().filter(|(_, p)| p.kind == ParamKind::Normal).collect();
                let required = normal.iter().filter(|(i, _)| c.defaults[*i].is_none()).count();
                let var = c.def.params.iter().any(|p| p.kind == ParamKind::VarArgs);
                let kw_required = c
                    .def
                    .params
                    .iter()
                    .enumerate()
                    .any(|(i, p)| p.kind == ParamKind::KwOnly && c.defaults[i].is_none());
                if kw_required {
                    return None;
                }
                Some((required, if var { None } else { Some(normal.len()) }))
            }
            Value::Partial(p) => {
                let (req, max) = Interp::arity(&p.func)?;
                let given = p.args.len();
                // Keywords bound by the partial take their parameters out of the positional run.
                let kw = p.kwargs.len();
                Some((req.saturating_sub(given + kw), max.map(|m| m.saturating_sub(given + kw))))
            }
            _ => None,
        }
    }
}

//! What a module-level statement the interpreter skipped could have done: the objects it could
//! have mutated (tainted, so that a later read is refused with both places) and the globals a
//! function it calls could have rebound; and whether a `try` depends on an import only the user's
//! environment decides.
//!
//! The analysis is static and conservative. An object is a mutation root of a statement when it
//! is named as: the base of an item, slice or attribute target (`x[i] = v`, `x.a = v`, `x[i] += v`,
//! `del x[i]`); an augmented-assignment target (`x += v` updates a list or tensor in place); the
//! receiver of a method call (`x.sort()`, `x[2:].fill_(1)`), unless the method is known to only read
//! it; an argument of a call to a function of the text or of a library hasseflow does not know.
//! A function of the text that the statement calls (or passes to one) is analysed the same way,
//! and the globals it declares `global` become unavailable. What a skipped statement binds may
//! be a view of anything it names (`d = torch.diagonal(t)`): the binding keeps those objects as
//! its aliases, and a later statement that could mutate it taints them; a name bound inside the
//! statement itself, or a function's local, that the statement could mutate taints them all.
//! Functions handed to torch (a mask function given to `create_block_mask`) are taken not to be
//! called: torch calls them under `vmap`, where the mask reader assumes them pure anyway.

use std::collections::HashSet;
use std::rc::Rc;

use super::ast::{Arg, Expr, ExprKind, Pos, Stmt, StmtKind};
use super::value::{Globals, Shared, Value};

/// Methods that only read their receiver.
const READING_METHODS: [&str; 42] = [
    "copy",
    "index",
    "count",
    "get",
    "keys",
    "values",
    "items",
    "clone",
    "detach",
    "contiguous",
    "cpu",
    "cuda",
    "to",
    "long",
    "int",
    "float",
    "bool",
    "double",
    "size",
    "dim",
    "numel",
    "item",
    "tolist",
    "view",
    "reshape",
    "sum",
    "any",
    "all",
    "max",
    "min",
    "argmax",
    "argmin",
    "unsqueeze",
    "squeeze",
    "flatten",
    "startswith",
    "endswith",
    "join",
    "split",
    "format",
    "upper",
    "lower",
];

/// What a skipped statement could have changed.
#[derive(Default)]
pub(super) struct Effects {
    /// Objects it could have mutated.
    pub(super) objects: Vec<Value>,
    /// Globals a function it calls declares `global` (they could have been rebound).
    pub(super) globals: Vec<Rc<str>>,
    /// The objects it names: what it binds may share memory with them.
    pub(super) aliases: Vec<Value>,
}

struct Walk<'a> {
    globals: &'a Shared<Globals>,
    out: Effects,
    /// Functions already analysed (by address; `u64`, the key type of the reader's other set of
    /// numbers, so that wasm has one set's code, not two).
    seen_fns: HashSet<u64>,
    /// Objects already tainted (by address).
    seen_objs: HashSet<u64>,
    /// Objects already among the statement's aliases (by address).
    named: HashSet<u64>,
    /// Names a compound statement binds in its blocks.
    bound: &'a [Rc<str>],
    /// Whether a name bound inside the statement (or a function's local) was mutated.
    local_written: bool,
    budget: usize,
}

/// The effects a skipped module-level statement could have had.
/// `bound`: the names the statement binds.
pub(super) fn of_statement(s: &Stmt, globals: &Shared<Globals>, bound: &[Rc<str>]) -> Effects {
    let simple = matches!(s.kind, StmtKind::Assign(..) | StmtKind::AugAssign(..) | StmtKind::AnnAssign(..));
    let mut w = Walk {
        globals,
        out: Effects::default(),
        seen_fns: HashSet::new(),
        seen_objs: HashSet::new(),
        named: HashSet::new(),
        bound: if simple { &[] } else { bound },
        local_written: false,
        budget: 100_000,
    };
    w.stmts(std::slice::from_ref(s), None);
    // A name bound inside the statement (a block's, a function's local) and then mutated may be
    // a view of anything the statement named (`with ...: v = torch.diagonal(t); v.add_(1)`).
    if w.local_written {
        w.taint(&Value::Tuple(Rc::new(w.out.aliases.clone())));
    }
    w.out
}

/// The address that identifies a mutable object, if the value is one.
pub(super) fn identity(v: &Value) -> Option<usize> {
    Some(match v {
        Value::List(l) => Rc::as_ptr(l) as *const () as usize,
        Value::Dict(d) => Rc::as_ptr(d) as *const () as usize,
        Value::Tensor(t) => Rc::as_ptr(t) as *const () as usize,
        Value::Instance(i) => Rc::as_ptr(i) as *const () as usize,
        Value::Class(c) => Rc::as_ptr(c) as *const () as usize,
        _ => return None,
    })
}

impl Walk<'_> {
    fn resolve(&mut self, name: &str, locals: Option<&[Rc<str>]>) -> Option<Value> {
        if locals.is_some_and(|l| l.iter().any(|x| &**x == name)) {
            return None;
        }
        let v = self.globals.borrow().get(name)?;
        self.alias(&v, 8);
        Some(v)
    }

    /// Records the objects a value named by the statement holds or may share memory with: what
    /// the statement binds may be a view of them.
    fn alias(&mut self, v: &Value, depth: usize) {
        match v {
            Value::Unavailable(u) => u.aliases.iter().for_each(|x| self.alias(x, 0)),
            Value::Tuple(items) if depth > 0 => items.iter().for_each(|x| self.alias(x, depth - 1)),
            // Each object once.
            other => {
                if identity(other).is_some_and(|id| self.named.insert(id as u64)) {
                    self.out.aliases.push(other.clone());
                }
            }
        }
    }

    /// Taints a value and every mutable object it holds.
    fn taint(&mut self, v: &Value) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        if let Some(id) = identity(v) {
            if !self.seen_objs.insert(id as u64) {
                return;
            }
            self.out.objects.push(v.clone());
        }
        match v {
            Value::List(l) => {
                let items = l.borrow().clone();
                items.iter().for_each(|x| self.taint(x));
            }
            Value::Tuple(t) => t.iter().for_each(|x| self.taint(x)),
            Value::Dict(d) => {
                let items = d.borrow().clone();
                items.iter().for_each(|(_, x)| self.taint(x));
            }
            Value::Instance(i) => {
                let attrs = i.attrs.borrow().clone();
                attrs.iter().for_each(|(_, x)| self.taint(x));
                self.taint(&Value::Class(i.class.clone()));
            }
            Value::Class(c) => {
                let attrs = c.attrs.borrow().clone();
                for (_, x) in &attrs {
                    if matches!(x, Value::Func(_) | Value::Wrapped(_)) {
                        self.called(x);
                    } else {
                        self.taint(x);
                    }
                }
            }
            Value::Partial(p) => {
                p.args.iter().for_each(|x| self.taint(x));
                p.kwargs.iter().for_each(|(_, x)| self.taint(x));
                self.called(&p.func);
            }
            Value::Func(_) | Value::Wrapped(_) => self.called(v),
            // A skipped statement's binding: what it may share memory with.
            Value::Unavailable(u) => u.aliases.iter().for_each(|x| self.taint(x)),
            // A library method (or an attribute read as one, `x.real`) holds its receiver.
            Value::Native(n) => {
                if let Some(r) = &n.recv {
                    self.taint(r);
                }
            }
            _ => {}
        }
    }

    /// A function value that may run: its body is analysed, its `global` names given up.
    fn called(&mut self, f: &Value) {
        match f {
            Value::Func(c) => {
                if !self.seen_fns.insert(Rc::as_ptr(c) as usize as u64) {
                    return;
                }
                for g in &c.def.globals {
                    if !self.out.globals.contains(g) {
                        self.out.globals.push(g.clone());
                    }
                }
                // Closed-over objects could be mutated through the closure.
                let mut env = c.env.clone();
                while let Some(frame) = env {
                    let vals: Vec<Value> = frame.borrow().vars.values().map(|(v, _)| v.clone()).collect();
                    for v in &vals {
                        if identity(v).is_some() {
                            self.taint(v);
                        }
                    }
                    env = frame.borrow().parent.clone();
                }
                let mut locals: Vec<Rc<str>> = c.def.locals.clone();
                locals.extend(c.def.params.iter().map(|p| p.name.clone()));
                let def = c.def.clone();
                self.stmts(&def.body, Some(&locals));
            }
            Value::Wrapped(w) => self.called(&w.1.clone()),
            Value::Partial(p) => self.taint(&Value::Partial(p.clone())),
            Value::Class(_) | Value::Instance(_) => self.taint(f),
            _ => {}
        }
    }

    /// A name in a mutating position.
    fn root(&mut self, e: &Expr, locals: Option<&[Rc<str>]>) {
        match &e.kind {
            ExprKind::Name(n) => {
                if locals.is_some_and(|l| l.contains(n)) || self.bound.contains(n) {
                    self.local_written = true;
                }
                if let Some(v) = self.resolve(n, locals) {
                    self.taint(&v);
                }
            }
            ExprKind::Subscript(o, i) => {
                self.root(o, locals);
                self.expr(i, locals);
            }
            ExprKind::Attr(o, _) => self.root(o, locals),
            ExprKind::Call(f, args) => {
                // What a call gives may be a view of its receiver or of what it is given
                // (`x.view(2, 4)[0] = v`, `x.t().add_(1)`).
                self.expr(e, locals);
                if let ExprKind::Attr(recv, _) = &f.kind {
                    self.root(recv, locals);
                }
                for a in args {
                    let (Arg::Pos(x) | Arg::Star(x) | Arg::Kw(_, x) | Arg::StarStar(x)) = a;
                    self.root(x, locals);
                }
            }
            ExprKind::Starred(x) => self.root(x, locals),
            ExprKind::Tuple(v) | ExprKind::List(v) => v.iter().for_each(|x| self.root(x, locals)),
            _ => self.expr(e, locals),
        }
    }

    /// Whether a callee is a library function (torch, math, a builtin) rather than the text's.
    fn is_library(&mut self, f: &Expr, locals: Option<&[Rc<str>]>) -> Option<bool> {
        let v = match &f.kind {
            ExprKind::Name(n) => match self.resolve(n, locals) {
                Some(v) => v,
                None if locals.is_some_and(|l| l.iter().any(|x| x == n)) => return None,
                // Builtins read their arguments, but for those that change objects or names.
                None => return Some(!matches!(&**n, "setattr" | "delattr" | "exec" | "eval" | "next" | "vars")),
            },
            ExprKind::Attr(o, _) => {
                let mut root = &**o;
                while let ExprKind::Attr(x, _) = &root.kind {
                    root = x;
                }
                let ExprKind::Name(n) = &root.kind else { return None };
                match self.resolve(n, locals) {
                    Some(Value::Module(m)) => {
                        return Some(m.starts_with("torch") || matches!(&*m, "math" | "functools"));
                    }
                    _ => return None,
                }
            }
            _ => return None,
        };
        Some(match &v {
            Value::Native(n) => {
                n.name.starts_with("torch.")
                    || n.name.starts_with("builtins.")
                    || n.name.starts_with("math.")
                    || n.name.starts_with("functools.")
            }
            Value::Unavailable(u) => u.what.contains("`torch."),
            _ => false,
        })
    }

    fn call(&mut self, f: &Expr, args: &[Arg], locals: Option<&[Rc<str>]>) {
        let arg_exprs = || {
            args.iter().map(|a| match a {
                Arg::Pos(x) | Arg::Star(x) | Arg::Kw(_, x) | Arg::StarStar(x) => x,
            })
        };
        let out_kw = args.iter().any(|a| matches!(a, Arg::Kw(k, _) if &**k == "out"));
        // A method call: its receiver may be mutated unless the method only reads.
        if let ExprKind::Attr(recv, m) = &f.kind {
            let is_module = matches!(self.is_library(f, locals), Some(true))
                && matches!(&recv.kind, ExprKind::Name(_) | ExprKind::Attr(..));
            if !is_module {
                if m.ends_with('_') || !READING_METHODS.contains(&&**m) {
                    self.root(recv, locals);
                    // A method of a class of the text may mutate what it is given, too.
                    for x in arg_exprs() {
                        self.root(x, locals);
                    }
                    return;
                }
                self.expr(recv, locals);
                arg_exprs().for_each(|x| self.expr(x, locals));
                return;
            }
        }
        // A builtin handed a function (`map(f, xs)`, `sorted(xs, key=f)`) runs it on what it is
        // given: the function is analysed and the arguments are roots (the torch functions that
        // take a mask function call it under `vmap`, pure).
        let runs_fn = matches!(&f.kind, ExprKind::Name(n)
            if !matches!(self.resolve(n, locals), Some(Value::Native(v)) if v.name.starts_with("torch")))
            && arg_exprs().any(|x| match &x.kind {
                ExprKind::Lambda(_) => true,
                ExprKind::Name(n) => matches!(self.resolve(n, locals), Some(Value::Func(_) | Value::Partial(_))),
                _ => false,
            });
        match self.is_library(f, locals) {
            Some(true) if !out_kw && !runs_fn && !callee_name(f).is_some_and(|n| n.ends_with('_')) => {
                // Library functions read their arguments; functions handed to them are not run here.
                for x in arg_exprs() {
                    self.expr(x, locals);
                }
            }
            _ => {
                self.expr(f, locals);
                if let ExprKind::Name(n) = &f.kind
                    && let Some(v) = self.resolve(n, locals)
                {
                    self.called(&v);
                }
                for x in arg_exprs() {
                    self.root(x, locals);
                }
            }
        }
    }

    fn expr(&mut self, e: &Expr, locals: Option<&[Rc<str>]>) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        match &e.kind {
            ExprKind::Call(f, args) => self.call(f, args, locals),
            ExprKind::Lambda(def) => {
                let mut l: Vec<Rc<str>> = locals.map(<[_]>::to_vec).unwrap_or_default();
                l.extend(def.params.iter().map(|p| p.name.clone()));
                self.stmts(&def.body, Some(&l));
            }
            ExprKind::Walrus(_, x) | ExprKind::Starred(x) | ExprKind::Unary(_, x) => self.expr(x, locals),
            ExprKind::Attr(x, _) => self.expr(x, locals),
            ExprKind::Subscript(a, b) | ExprKind::Pow(a, b) => {
                self.expr(a, locals);
                self.expr(b, locals);
            }
            ExprKind::Tuple(v) | ExprKind::List(v) | ExprKind::Set(v) | ExprKind::BoolOp(_, v) => {
                v.iter().for_each(|x| self.expr(x, locals));
            }
            ExprKind::Dict(items) => {
                for (k, v) in items {
                    if let Some(k) = k {
                        self.expr(k, locals);
                    }
                    self.expr(v, locals);
                }
            }
            // What a loop or comprehension iterates over is a root: its variable is an element of
            // it (`[r.index_fill_(...) for r in x]`).
            ExprKind::Comp(_, elt, gens) => {
                self.expr(elt, locals);
                for g in gens {
                    self.root(&g.iter, locals);
                    g.conds.iter().for_each(|c| self.expr(c, locals));
                }
            }
            ExprKind::DictComp(kv, gens) => {
                self.expr(&kv.0, locals);
                self.expr(&kv.1, locals);
                for g in gens {
                    self.root(&g.iter, locals);
                    g.conds.iter().for_each(|c| self.expr(c, locals));
                }
            }
            ExprKind::Slice(a, b, c) => {
                for x in [a, b, c].into_iter().flatten() {
                    self.expr(x, locals);
                }
            }
            ExprKind::Chain(a, rest) => {
                self.expr(a, locals);
                rest.iter().for_each(|(_, x)| self.expr(x, locals));
            }
            ExprKind::Compare(a, rest) => {
                self.expr(a, locals);
                rest.iter().for_each(|(_, x)| self.expr(x, locals));
            }
            ExprKind::IfExp(p) => p.iter().for_each(|x| self.expr(x, locals)),
            ExprKind::Name(n) => {
                self.resolve(n, locals);
            }
            _ => {}
        }
    }

    fn stmts(&mut self, body: &[Stmt], locals: Option<&[Rc<str>]>) {
        for s in body {
            if self.budget == 0 {
                return;
            }
            self.budget -= 1;
            match &s.kind {
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) | StmtKind::Raise(Some(e)) => self.expr(e, locals),
                StmtKind::Assign(targets, v) => {
                    self.expr(v, locals);
                    for t in targets {
                        if !matches!(t.kind, ExprKind::Name(_)) {
                            self.root(t, locals);
                        }
                    }
                }
                StmtKind::AugAssign(t, _, v) => {
                    self.expr(v, locals);
                    self.root(t, locals);
                }
                StmtKind::AnnAssign(t, _, v) => {
                    if let Some(v) = v {
                        self.expr(v, locals);
                    }
                    if !matches!(t.kind, ExprKind::Name(_)) {
                        self.root(t, locals);
                    }
                }
                StmtKind::Del(ts) => ts.iter().for_each(|t| {
                    if !matches!(t.kind, ExprKind::Name(_)) {
                        self.root(t, locals);
                    }
                }),
                StmtKind::If(arms, e) => {
                    for (c, b) in arms {
                        self.expr(c, locals);
                        self.stmts(b, locals);
                    }
                    self.stmts(e, locals);
                }
                StmtKind::For(t, it, b, e) => {
                    self.root(it, locals);
                    if !matches!(t.kind, ExprKind::Name(_) | ExprKind::Tuple(_)) {
                        self.root(t, locals);
                    }
                    self.stmts(b, locals);
                    self.stmts(e, locals);
                }
                StmtKind::While(c, b, e) => {
                    self.expr(c, locals);
                    self.stmts(b, locals);
                    self.stmts(e, locals);
                }
                StmtKind::Try(b, hs, e, f) => {
                    self.stmts(b, locals);
                    for h in hs {
                        h.typ.iter().for_each(|x| self.expr(x, locals));
                        self.stmts(&h.body, locals);
                    }
                    self.stmts(e, locals);
                    self.stmts(f, locals);
                }
                StmtKind::With(items, _, b) => {
                    items.iter().for_each(|x| self.expr(x, locals));
                    self.stmts(b, locals);
                }
                StmtKind::Assert(c, m) => {
                    self.expr(c, locals);
                    if let Some(m) = m {
                        self.expr(m, locals);
                    }
                }
                StmtKind::Def(def, decos) => {
                    decos.iter().for_each(|d| self.expr(d, locals));
                    // Decorators may call the function: analysed as called.
                    if !decos.is_empty() {
                        let mut l: Vec<Rc<str>> = def.locals.clone();
                        l.extend(def.params.iter().map(|p| p.name.clone()));
                        self.stmts(&def.body, Some(&l));
                        for g in &def.globals {
                            if !self.out.globals.contains(g) {
                                self.out.globals.push(g.clone());
                            }
                        }
                    }
                }
                StmtKind::Class(c) => {
                    c.bases.iter().for_each(|x| self.expr(x, locals));
                    c.decorators.iter().for_each(|x| self.expr(x, locals));
                    self.stmts(&c.body, locals);
                }
                _ => {}
            }
        }
    }
}

fn callee_name(f: &Expr) -> Option<&str> {
    match &f.kind {
        ExprKind::Name(n) | ExprKind::Attr(_, n) => Some(n),
        _ => None,
    }
}

/// Top-level modules every Python and the torch that runs a mask has: importing them cannot fail
/// for a reason only the user's environment decides.
const ALWAYS_IMPORTABLE: [&str; 41] = [
    "torch",
    "math",
    "functools",
    "typing",
    "dataclasses",
    "itertools",
    "collections",
    "enum",
    "abc",
    "os",
    "sys",
    "re",
    "json",
    "time",
    "random",
    "warnings",
    "contextlib",
    "operator",
    "inspect",
    "logging",
    "pathlib",
    "copy",
    "string",
    "types",
    "numbers",
    "argparse",
    "importlib",
    "textwrap",
    "statistics",
    "__future__",
    "bisect",
    "heapq",
    "array",
    "weakref",
    "fractions",
    "decimal",
    "traceback",
    "datetime",
    "pprint",
    "threading",
    "hashlib",
];

/// The first import in a `try` body whose success depends on the user's environment (a package
/// other than torch and the standard library), with its place and module.
pub(super) fn environment_import(body: &[Stmt]) -> Option<(Pos, Rc<str>)> {
    for s in body {
        let found = match &s.kind {
            StmtKind::Import(items) => items.iter().find(|(m, _, _)| !importable(m)).map(|(m, _, _)| m.clone()),
            StmtKind::ImportFrom(m, _) if !importable(m) => Some(m.clone()),
            StmtKind::If(arms, e) => {
                if let Some(x) = arms.iter().find_map(|(_, b)| environment_import(b)).or_else(|| environment_import(e))
                {
                    return Some(x);
                }
                None
            }
            StmtKind::Try(b, hs, e, f) => {
                let inner = environment_import(b)
                    .or_else(|| hs.iter().find_map(|h| environment_import(&h.body)))
                    .or_else(|| environment_import(e))
                    .or_else(|| environment_import(f));
                if inner.is_some() {
                    return inner;
                }
                None
            }
            _ => None,
        };
        if let Some(m) = found {
            return Some((s.pos, m));
        }
    }
    None
}

fn importable(module: &str) -> bool {
    let root = module.split('.').next().unwrap_or("");
    !module.starts_with('.') && ALWAYS_IMPORTABLE.contains(&root)
}

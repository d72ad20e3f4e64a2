//! A recursive-descent parser for Python statements and expressions, with CPython's precedence.
//! Left-associative operator runs become one [`ExprKind::Chain`], so a long `a + b + ...` costs
//! no recursion; bracket and operator nesting is bounded by [`MAX_NESTING`].

use std::rc::Rc;

use super::ast::{
    Arg, BinOp, ClassDef, CmpOp, Comp, CompKind, Expr, ExprKind, FuncDef, Handler, Param, ParamKind, Pos, Stmt,
    StmtKind, UnOp,
};
use super::lex::{Tok, Token, short};
use super::value::Key;
use super::{MaskModError, at};

/// Deepest expression nesting (brackets, unary operators, lambdas, conditional expressions).
pub(super) const MAX_NESTING: usize = 200;
/// Most parameters of one function.
pub(super) const MAX_PARAMS: usize = 10_000;

pub(super) struct Parser {
    toks: Vec<Token>,
    i: usize,
    depth: usize,
}

const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

type R<T> = Result<T, MaskModError>;

fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => format!("`{}`", short(n)),
        Tok::Int(v) => format!("the number {v}"),
        Tok::BigInt(d) => format!("a {d}-digit number"),
        Tok::Float(v) => format!("the number {v}"),
        Tok::Str(_) => "a string".into(),
        Tok::Op(o) => format!("`{o}`"),
        Tok::Newline => "the end of the line".into(),
        Tok::Indent => "an indent".into(),
        Tok::Dedent => "a dedent".into(),
        Tok::End => "the end of the text".into(),
    }
}

impl Parser {
    pub(super) fn new(toks: Vec<Token>) -> Parser {
        Parser { toks, i: 0, depth: 0 }
    }

    fn tok(&self) -> &Tok {
        &self.toks[self.i.min(self.toks.len() - 1)].tok
    }
    fn tok_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }
    fn pos(&self) -> Pos {
        let t = &self.toks[self.i.min(self.toks.len() - 1)];
        Pos { line: t.line, col: t.col }
    }
    fn err_here(&self, what: impl Into<String>) -> MaskModError {
        let p = self.pos();
        at(p.line as usize, p.col as usize, what)
    }
    fn unexpected(&self) -> MaskModError {
        self.err_here(format!("invalid syntax: unexpected {}", describe(self.tok())))
    }
    fn is_op(&self, op: &str) -> bool {
        matches!(self.tok(), Tok::Op(o) if *o == op)
    }
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.tok(), Tok::Name(n) if n == kw)
    }
    fn eat_op(&mut self, op: &str) -> bool {
        if self.is_op(op) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect_op(&mut self, op: &str) -> R<()> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(self.err_here(format!("expected `{op}`, found {}", describe(self.tok()))))
        }
    }
    fn name(&mut self) -> R<Rc<str>> {
        match self.tok() {
            Tok::Name(n) if !KEYWORDS.contains(&n.as_str()) => {
                let n: Rc<str> = n.as_str().into();
                self.i += 1;
                Ok(n)
            }
            _ => Err(self.err_here(format!("expected a name, found {}", describe(self.tok())))),
        }
    }
    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.err_here(format!("expression nested too deeply (over {MAX_NESTING} levels)")));
        }
        Ok(())
    }

    /// The whole module.
    pub(super) fn module(&mut self) -> R<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            match self.tok() {
                Tok::End => return Ok(out),
                Tok::Newline => self.i += 1,
                Tok::Indent => return Err(self.err_here("unexpected indent")),
                _ => self.statement(&mut out)?,
            }
        }
    }

    fn block(&mut self) -> R<Vec<Stmt>> {
        self.expect_op(":")?;
        let mut out = Vec::new();
        if matches!(self.tok(), Tok::Newline) {
            self.i += 1;
            if !matches!(self.tok(), Tok::Indent) {
                return Err(self.err_here("expected an indented block"));
            }
            self.i += 1;
            loop {
                match self.tok() {
                    Tok::Dedent => {
                        self.i += 1;
                        return Ok(out);
                    }
                    Tok::End => return Ok(out),
                    Tok::Newline => self.i += 1,
                    _ => self.statement(&mut out)?,
                }
            }
        }
        self.simple_statements(&mut out)?;
        Ok(out)
    }

    /// Skips a block without parsing it (class bodies): the header's `:` onwards.
    fn skip_block(&mut self) -> R<()> {
        while !self.is_op(":") || self.depth_brackets_open() {
            if matches!(self.tok(), Tok::End) {
                return Err(self.err_here("expected `:`"));
            }
            self.i += 1;
        }
        self.i += 1;
        if matches!(self.tok(), Tok::Newline) {
            self.i += 1;
            if !matches!(self.tok(), Tok::Indent) {
                return Err(self.err_here("expected an indented block"));
            }
            self.i += 1;
            let mut level = 1usize;
            while level > 0 {
                match self.tok() {
                    Tok::Indent => level += 1,
                    Tok::Dedent => level -= 1,
                    Tok::End => return Ok(()),
                    _ => {}
                }
                self.i += 1;
            }
        } else {
            while !matches!(self.tok(), Tok::Newline | Tok::End) {
                self.i += 1;
            }
            self.i += 1;
        }
        Ok(())
    }
    fn depth_brackets_open(&self) -> bool {
        // Bracketed newlines never reach the parser, so a `:` inside brackets is a slice or a dict:
        // count the brackets between the header's start and here.
        let mut d = 0i64;
        let mut j = self.i;
        while j > 0 {
            j -= 1;
            match &self.toks[j].tok {
                Tok::Op("(" | "[" | "{") => d += 1,
                Tok::Op(")" | "]" | "}") => d -= 1,
                Tok::Newline | Tok::Indent | Tok::Dedent => break,
                _ => {}
            }
        }
        d > 0
    }

    fn statement(&mut self, out: &mut Vec<Stmt>) -> R<()> {
        let pos = self.pos();
        let kw = match self.tok() {
            Tok::Name(n) => n.clone(),
            Tok::Op("@") => {
                let mut decorators = Vec::new();
                while self.eat_op("@") {
                    decorators.push(self.test()?);
                    if !matches!(self.tok(), Tok::Newline) {
                        return Err(self.unexpected());
                    }
                    self.i += 1;
                }
                if self.is_kw("def") {
                    let f = self.funcdef()?;
                    out.push(Stmt { kind: StmtKind::Def(f, decorators), pos });
                } else if self.is_kw("class") {
                    self.class(out, pos, decorators)?;
                } else if self.is_kw("async") {
                    self.i += 1;
                    return self.statement(out);
                } else {
                    return Err(self.unexpected());
                }
                return Ok(());
            }
            _ => return self.simple_statements(out),
        };
        let stmt = match kw.as_str() {
            "if" => {
                self.i += 1;
                let mut arms = vec![(self.named_test()?, self.block()?)];
                let mut orelse = Vec::new();
                loop {
                    if self.eat_kw("elif") {
                        arms.push((self.named_test()?, self.block()?));
                    } else if self.eat_kw("else") {
                        orelse = self.block()?;
                        break;
                    } else {
                        break;
                    }
                }
                StmtKind::If(arms, orelse)
            }
            "for" => {
                self.i += 1;
                let target = self.target_list()?;
                if !self.eat_kw("in") {
                    return Err(self.err_here("expected `in`"));
                }
                let iter = self.testlist()?;
                let body = self.block()?;
                let orelse = if self.eat_kw("else") { self.block()? } else { Vec::new() };
                StmtKind::For(target, iter, body, orelse)
            }
            "while" => {
                self.i += 1;
                let cond = self.named_test()?;
                let body = self.block()?;
                let orelse = if self.eat_kw("else") { self.block()? } else { Vec::new() };
                StmtKind::While(cond, body, orelse)
            }
            "def" => StmtKind::Def(self.funcdef()?, Vec::new()),
            "class" => return self.class(out, pos, Vec::new()),
            "try" => {
                self.i += 1;
                let body = self.block()?;
                let mut handlers = Vec::new();
                loop {
                    let hpos = self.pos();
                    if !self.eat_kw("except") {
                        break;
                    }
                    let star = self.eat_op("*");
                    let (mut typ, mut name) = (None, None);
                    if !self.is_op(":") {
                        typ = Some(self.test()?);
                        if self.eat_kw("as") {
                            name = Some(self.name()?);
                        }
                    }
                    handlers.push(Handler { typ, name, body: self.block()?, star, pos: hpos });
                }
                let orelse = if self.eat_kw("else") { self.block()? } else { Vec::new() };
                let fin = if self.eat_kw("finally") { self.block()? } else { Vec::new() };
                if handlers.is_empty() && fin.is_empty() {
                    return Err(self.err_here("expected `except` or `finally` block"));
                }
                StmtKind::Try(body, handlers, orelse, fin)
            }
            "with" => {
                self.i += 1;
                let mut items = Vec::new();
                let mut names = Vec::new();
                let paren = self.is_op("(") && self.with_is_parenthesized();
                if paren {
                    self.i += 1;
                }
                loop {
                    items.push(self.test()?);
                    if self.eat_kw("as") {
                        let t = self.target()?;
                        bound_names(&t, &mut names);
                    }
                    if !self.eat_op(",") || (paren && self.is_op(")")) {
                        break;
                    }
                }
                if paren {
                    self.expect_op(")")?;
                }
                StmtKind::With(items, names, self.block()?)
            }
            "async" => {
                self.i += 1;
                self.skip_block()?;
                StmtKind::Unsupported("an `async` statement", Vec::new())
            }
            "match" if self.is_match_statement() => {
                self.skip_block()?;
                StmtKind::Unsupported("a `match` statement", Vec::new())
            }
            _ => return self.simple_statements(out),
        };
        out.push(Stmt { kind: stmt, pos });
        Ok(())
    }

    fn with_is_parenthesized(&self) -> bool {
        // `with (a as b, c):` — an `as` at bracket depth 1 before the matching `)`.
        let mut d = 0i64;
        let mut j = self.i;
        while j < self.toks.len() {
            match &self.toks[j].tok {
                Tok::Op("(" | "[" | "{") => d += 1,
                Tok::Op(")" | "]" | "}") => {
                    d -= 1;
                    if d == 0 {
                        return false;
                    }
                }
                Tok::Name(n) if n == "as" && d == 1 => return true,
                Tok::Newline | Tok::End => return false,
                _ => {}
            }
            j += 1;
        }
        false
    }

    fn is_match_statement(&self) -> bool {
        // A soft keyword: `match <subject>:` followed by an indented block.
        if matches!(self.tok_at(1), Tok::Op("=" | "." | "(" | "[" | ",") | Tok::Newline) {
            return false;
        }
        let mut j = self.i;
        while j + 2 < self.toks.len() && !matches!(self.toks[j].tok, Tok::Newline | Tok::End) {
            j += 1;
        }
        matches!(self.toks[j - 1].tok, Tok::Op(":"))
            && matches!(self.toks.get(j + 1).map(|t| &t.tok), Some(Tok::Indent))
    }

    /// A class: its bases and body when they parse, else skipped as unsupported.
    fn class(&mut self, out: &mut Vec<Stmt>, pos: Pos, decorators: Vec<Expr>) -> R<()> {
        self.i += 1;
        let name = self.name()?;
        let start = self.i;
        let depth = self.depth;
        // `class A[T]:` (type parameters, Python 3.12): a class the reader does not run.
        let generic = self.is_op("[");
        let parsed = (|| -> R<(Vec<Expr>, Vec<Stmt>)> {
            let mut bases = Vec::new();
            if self.eat_op("(") {
                for a in self.call_args()? {
                    if let Arg::Pos(e) = a {
                        bases.push(e);
                    }
                }
            }
            Ok((bases, self.block()?))
        })();
        match parsed {
            Ok((bases, body)) => {
                let def = ClassDef { name, bases, body, decorators };
                out.push(Stmt { kind: StmtKind::Class(Rc::new(def)), pos });
            }
            Err(e) => {
                // A class whose body holds a construct the reader does not model is a statement
                // it skips; a syntax error in it is Python's SyntaxError at import, as anywhere.
                let what = e.to_string();
                if !(generic || what.contains("not supported") || what.contains("not modelled")) {
                    return Err(e);
                }
                self.i = start;
                self.depth = depth;
                self.skip_block()?;
                out.push(Stmt { kind: StmtKind::Unsupported("a class", vec![name]), pos });
            }
        }
        Ok(())
    }

    fn funcdef(&mut self) -> R<Rc<FuncDef>> {
        self.i += 1; // def
        let name = self.name()?;
        self.expect_op("(")?;
        let params = self.params(")")?;
        let returns = if self.eat_op("->") { Some(self.test()?) } else { None };
        let body = self.block()?;
        Ok(Rc::new(FuncDef { returns, ..finish_def(name, params, body) }))
    }

    /// Parameters up to `close` (`)` for `def`, `:` for `lambda`, which has no annotations).
    fn params(&mut self, close: &str) -> R<Vec<Param>> {
        let mut params: Vec<Param> = Vec::new();
        // Names seen and whether a default was, so that checking each parameter is O(1).
        // (A set of `Key`s, the reader's one set of values: one set's code in wasm.)
        let mut seen: std::collections::HashSet<Key> = std::collections::HashSet::new();
        let mut had_default = false;
        let mut kw_only = false;
        let lambda = close == ":";
        loop {
            if self.eat_op(close) {
                break;
            }
            let p = self.pos();
            let (kind, name) = if self.eat_op("**") {
                (ParamKind::VarKw, self.name()?)
            } else if self.eat_op("*") {
                kw_only = true;
                if self.is_op(",") {
                    self.i += 1;
                    continue;
                }
                (ParamKind::VarArgs, self.name()?)
            } else if self.eat_op("/") {
                if !self.eat_op(",") && !self.is_op(close) {
                    return Err(self.unexpected());
                }
                continue;
            } else {
                (if kw_only { ParamKind::KwOnly } else { ParamKind::Normal }, self.name()?)
            };
            let annotation = if !lambda && self.eat_op(":") { Some(self.test()?) } else { None };
            let default = if self.eat_op("=") { Some(self.test()?) } else { None };
            if default.is_none() && kind == ParamKind::Normal && had_default {
                return Err(at(
                    p.line as usize,
                    p.col as usize,
                    "parameter without a default follows parameter with a default",
                ));
            }
            had_default |= default.is_some() && kind == ParamKind::Normal;
            if params.len() >= MAX_PARAMS {
                return Err(at(
                    p.line as usize,
                    p.col as usize,
                    format!("a function of over {MAX_PARAMS} parameters is not modelled"),
                ));
            }
            if !seen.insert(Key::Str(name.clone())) {
                return Err(at(
                    p.line as usize,
                    p.col as usize,
                    format!("duplicate argument `{name}` in function definition"),
                ));
            }
            params.push(Param { name, default, annotation, kind });
            if !self.eat_op(",") {
                if lambda {
                    self.expect_op(":")?;
                } else {
                    self.expect_op(")")?;
                }
                break;
            }
        }
        Ok(params)
    }

    fn simple_statements(&mut self, out: &mut Vec<Stmt>) -> R<()> {
        loop {
            let pos = self.pos();
            let kind = self.simple()?;
            out.push(Stmt { kind, pos });
            if self.eat_op(";") {
                if matches!(self.tok(), Tok::Newline | Tok::End) {
                    break;
                }
                continue;
            }
            break;
        }
        match self.tok() {
            Tok::Newline => {
                self.i += 1;
                Ok(())
            }
            Tok::End | Tok::Dedent => Ok(()),
            _ => Err(self.unexpected()),
        }
    }

    fn simple(&mut self) -> R<StmtKind> {
        let kw = match self.tok() {
            Tok::Name(n) => n.clone(),
            _ => String::new(),
        };
        match kw.as_str() {
            "pass" => {
                self.i += 1;
                return Ok(StmtKind::Pass);
            }
            "break" => {
                self.i += 1;
                return Ok(StmtKind::Break);
            }
            "continue" => {
                self.i += 1;
                return Ok(StmtKind::Continue);
            }
            "return" => {
                self.i += 1;
                let v = if self.at_stmt_end() { None } else { Some(self.testlist_star()?) };
                return Ok(StmtKind::Return(v));
            }
            "raise" => {
                self.i += 1;
                let v = if self.at_stmt_end() { None } else { Some(self.test()?) };
                if self.eat_kw("from") {
                    self.test()?;
                }
                return Ok(StmtKind::Raise(v));
            }
            "global" | "nonlocal" => {
                self.i += 1;
                let mut names = vec![self.name()?];
                while self.eat_op(",") {
                    names.push(self.name()?);
                }
                return Ok(if kw == "global" { StmtKind::Global(names) } else { StmtKind::Nonlocal(names) });
            }
            "del" => {
                self.i += 1;
                let t = self.target_list()?;
                let targets = match t.kind {
                    ExprKind::Tuple(v) => v,
                    _ => vec![t],
                };
                return Ok(StmtKind::Del(targets));
            }
            "assert" => {
                self.i += 1;
                let c = self.test()?;
                let m = if self.eat_op(",") { Some(self.test()?) } else { None };
                return Ok(StmtKind::Assert(c, m));
            }
            "import" => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    let path = self.dotted()?;
                    let (name, aliased) = if self.eat_kw("as") {
                        (self.name()?, true)
                    } else {
                        (path.split('.').next().unwrap_or("").into(), false)
                    };
                    items.push((path, name, aliased));
                    if !self.eat_op(",") {
                        break;
                    }
                }
                return Ok(StmtKind::Import(items));
            }
            "from" => {
                self.i += 1;
                let mut dots = String::new();
                while self.is_op(".") || self.is_op("...") {
                    dots.push_str(if self.is_op(".") { "." } else { "..." });
                    self.i += 1;
                }
                let module: Rc<str> =
                    if self.is_kw("import") { dots.into() } else { format!("{dots}{}", self.dotted()?).into() };
                if !self.eat_kw("import") {
                    return Err(self.err_here("expected `import`"));
                }
                if self.eat_op("*") {
                    return Ok(StmtKind::ImportFrom(module, Vec::new()));
                }
                let paren = self.eat_op("(");
                let mut names = Vec::new();
                loop {
                    if paren && self.is_op(")") {
                        break;
                    }
                    let n = self.name()?;
                    let alias = if self.eat_kw("as") { self.name()? } else { n.clone() };
                    names.push((n, alias));
                    if !self.eat_op(",") {
                        break;
                    }
                }
                if paren {
                    self.expect_op(")")?;
                }
                return Ok(StmtKind::ImportFrom(module, names));
            }
            _ => {}
        }
        // Expression statement or assignment.
        let first = self.testlist_star()?;
        if self.eat_op("=") {
            let mut targets = vec![first];
            let mut value = self.testlist_star()?;
            while self.eat_op("=") {
                targets.push(value);
                value = self.testlist_star()?;
            }
            for t in &targets {
                check_target(t)?;
            }
            return Ok(StmtKind::Assign(targets, value));
        }
        if self.is_op(":") {
            self.i += 1;
            check_target(&first)?;
            let annotation = self.test()?;
            let value = if self.eat_op("=") { Some(self.testlist_star()?) } else { None };
            return Ok(StmtKind::AnnAssign(first, annotation, value));
        }
        if let Tok::Op(op) = self.tok()
            && op.len() >= 2
            && op.ends_with('=')
            && !matches!(*op, "==" | "<=" | ">=" | "!=")
        {
            let sym = &op[..op.len() - 1];
            let bop = BinOp::from_symbol(sym).ok_or_else(|| self.unexpected())?;
            self.i += 1;
            check_target(&first)?;
            if matches!(first.kind, ExprKind::Tuple(_) | ExprKind::List(_)) {
                return Err(at(
                    first.pos.line as usize,
                    first.pos.col as usize,
                    "illegal expression for augmented assignment",
                ));
            }
            let value = self.testlist_star()?;
            return Ok(StmtKind::AugAssign(first, bop, value));
        }
        Ok(StmtKind::Expr(first))
    }

    fn at_stmt_end(&self) -> bool {
        matches!(self.tok(), Tok::Newline | Tok::End | Tok::Dedent | Tok::Op(";"))
    }

    fn dotted(&mut self) -> R<Rc<str>> {
        let mut s = self.name()?.to_string();
        while self.eat_op(".") {
            s.push('.');
            s.push_str(&self.name()?);
        }
        Ok(s.into())
    }

    /// Targets of `for` and `del`: `a`, `a, b`, `(a, b)`, `x[i]`, `*rest`.
    fn target_list(&mut self) -> R<Expr> {
        let pos = self.pos();
        let first = self.target()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_kw("in") || self.is_op("=") || self.at_stmt_end() {
                break;
            }
            items.push(self.target()?);
        }
        Ok(Expr { kind: ExprKind::Tuple(items), pos })
    }
    fn target(&mut self) -> R<Expr> {
        let pos = self.pos();
        if self.eat_op("*") {
            let inner = self.bitor()?;
            return Ok(Expr { kind: ExprKind::Starred(Box::new(inner)), pos });
        }
        let e = self.bitor()?;
        check_target(&e)?;
        Ok(e)
    }

    /// `a, b, *c` as a tuple (or one expression).
    fn testlist_star(&mut self) -> R<Expr> {
        let pos = self.pos();
        let first = self.test_or_star()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.at_stmt_end() || self.is_op("=") || self.is_op(")") || self.is_op(":") {
                break;
            }
            if let Tok::Op(op) = self.tok()
                && op.ends_with('=')
                && op.len() >= 2
                && !matches!(*op, "==" | "<=" | ">=" | "!=")
            {
                break;
            }
            items.push(self.test_or_star()?);
        }
        Ok(Expr { kind: ExprKind::Tuple(items), pos })
    }
    fn testlist(&mut self) -> R<Expr> {
        self.testlist_star()
    }
    fn test_or_star(&mut self) -> R<Expr> {
        let pos = self.pos();
        if self.eat_op("*") {
            let inner = self.bitor()?;
            return Ok(Expr { kind: ExprKind::Starred(Box::new(inner)), pos });
        }
        self.named_test()
    }

    fn named_test(&mut self) -> R<Expr> {
        if let (Tok::Name(n), Tok::Op(":=")) = (self.tok(), self.tok_at(1)) {
            let pos = self.pos();
            let name: Rc<str> = n.as_str().into();
            self.i += 2;
            let v = self.test()?;
            return Ok(Expr { kind: ExprKind::Walrus(name, Box::new(v)), pos });
        }
        self.test()
    }

    pub(super) fn test(&mut self) -> R<Expr> {
        self.enter()?;
        let r = self.test_inner();
        self.depth -= 1;
        r
    }
    fn test_inner(&mut self) -> R<Expr> {
        let pos = self.pos();
        if self.eat_kw("lambda") {
            let params = self.params(":")?;
            let body = self.test()?;
            let ret = Stmt { kind: StmtKind::Return(Some(body)), pos };
            return Ok(Expr { kind: ExprKind::Lambda(Rc::new(finish_def("<lambda>".into(), params, vec![ret]))), pos });
        }
        let e = self.or_test()?;
        if self.eat_kw("if") {
            let cond = self.or_test()?;
            if !self.eat_kw("else") {
                return Err(self.err_here("expected `else` after `if` expression"));
            }
            let other = self.test()?;
            return Ok(Expr { kind: ExprKind::IfExp(Box::new([cond, e, other])), pos });
        }
        Ok(e)
    }
    fn test_nocond(&mut self) -> R<Expr> {
        self.or_test()
    }

    fn or_test(&mut self) -> R<Expr> {
        self.bool_op("or")
    }
    fn bool_op(&mut self, kw: &str) -> R<Expr> {
        let pos = self.pos();
        let first = if kw == "or" { self.bool_op("and")? } else { self.not_test()? };
        if !self.is_kw(kw) {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_kw(kw) {
            items.push(if kw == "or" { self.bool_op("and")? } else { self.not_test()? });
        }
        Ok(Expr { kind: ExprKind::BoolOp(kw == "and", items), pos })
    }
    fn not_test(&mut self) -> R<Expr> {
        let pos = self.pos();
        if self.eat_kw("not") {
            self.enter()?;
            let e = self.not_test();
            self.depth -= 1;
            return Ok(Expr { kind: ExprKind::Unary(UnOp::Not, Box::new(e?)), pos });
        }
        self.comparison()
    }
    fn comparison(&mut self) -> R<Expr> {
        let pos = self.pos();
        let first = self.bitor()?;
        let mut rest = Vec::new();
        loop {
            let op = match self.tok() {
                Tok::Op("<") => CmpOp::Lt,
                Tok::Op("<=") => CmpOp::Le,
                Tok::Op(">") => CmpOp::Gt,
                Tok::Op(">=") => CmpOp::Ge,
                Tok::Op("==") => CmpOp::Eq,
                Tok::Op("!=") => CmpOp::Ne,
                Tok::Name(n) if n == "in" => CmpOp::In,
                Tok::Name(n) if n == "is" => {
                    if matches!(self.tok_at(1), Tok::Name(m) if m == "not") {
                        self.i += 1;
                        CmpOp::IsNot
                    } else {
                        CmpOp::Is
                    }
                }
                Tok::Name(n) if n == "not" && matches!(self.tok_at(1), Tok::Name(m) if m == "in") => {
                    self.i += 1;
                    CmpOp::NotIn
                }
                _ => break,
            };
            self.i += 1;
            rest.push((op, self.bitor()?));
        }
        if rest.is_empty() { Ok(first) } else { Ok(Expr { kind: ExprKind::Compare(Box::new(first), rest), pos }) }
    }

    fn chain(&mut self, level: usize) -> R<Expr> {
        const LEVELS: [&[&str]; 6] = [&["|"], &["^"], &["&"], &["<<", ">>"], &["+", "-"], &["*", "/", "//", "%", "@"]];
        let pos = self.pos();
        let next = |p: &mut Parser| if level + 1 < LEVELS.len() { p.chain(level + 1) } else { p.factor() };
        let first = next(self)?;
        let mut rest = Vec::new();
        while let Tok::Op(op) = self.tok() {
            if !LEVELS[level].contains(op) {
                break;
            }
            let bop = BinOp::from_symbol(op).ok_or_else(|| self.unexpected())?;
            self.i += 1;
            rest.push((bop, next(self)?));
        }
        if rest.is_empty() { Ok(first) } else { Ok(Expr { kind: ExprKind::Chain(Box::new(first), rest), pos }) }
    }
    fn bitor(&mut self) -> R<Expr> {
        self.chain(0)
    }

    fn factor(&mut self) -> R<Expr> {
        let pos = self.pos();
        let op = match self.tok() {
            Tok::Op("-") => Some(UnOp::Neg),
            Tok::Op("+") => Some(UnOp::Pos),
            Tok::Op("~") => Some(UnOp::Invert),
            _ => None,
        };
        if let Some(op) = op {
            self.i += 1;
            self.enter()?;
            let e = self.factor();
            self.depth -= 1;
            return Ok(Expr { kind: ExprKind::Unary(op, Box::new(e?)), pos });
        }
        let base = self.primary()?;
        if self.eat_op("**") {
            self.enter()?;
            let e = self.factor();
            self.depth -= 1;
            return Ok(Expr { kind: ExprKind::Pow(Box::new(base), Box::new(e?)), pos });
        }
        Ok(base)
    }

    fn primary(&mut self) -> R<Expr> {
        if self.is_kw("await") {
            return Err(self.err_here("`await` is not supported"));
        }
        let mut e = self.atom()?;
        // Each call, subscript or attribute nests the tree one level (evaluating and dropping it
        // recurse), so a chain counts towards the nesting limit.
        let depth = self.depth;
        let r = loop {
            let pos = self.pos();
            let more = self.is_op(".") || self.is_op("(") || self.is_op("[");
            if more && let Err(err) = self.enter() {
                break Err(err);
            }
            if self.eat_op(".") {
                match self.name() {
                    Ok(n) => e = Expr { kind: ExprKind::Attr(Box::new(e), n), pos },
                    Err(err) => break Err(err),
                }
            } else if self.eat_op("(") {
                match self.call_args() {
                    Ok(args) => e = Expr { kind: ExprKind::Call(Box::new(e), args), pos },
                    Err(err) => break Err(err),
                }
            } else if self.eat_op("[") {
                match self.subscript().and_then(|idx| self.expect_op("]").map(|_| idx)) {
                    Ok(idx) => e = Expr { kind: ExprKind::Subscript(Box::new(e), Box::new(idx)), pos },
                    Err(err) => break Err(err),
                }
            } else {
                break Ok(e);
            }
        };
        self.depth = depth;
        r
    }

    fn call_args(&mut self) -> R<Vec<Arg>> {
        let mut args = Vec::new();
        self.enter()?;
        loop {
            if self.eat_op(")") {
                break;
            }
            if self.eat_op("**") {
                args.push(Arg::StarStar(self.test()?));
            } else if self.eat_op("*") {
                args.push(Arg::Star(self.test()?));
            } else if let (Tok::Name(n), Tok::Op("=")) = (self.tok(), self.tok_at(1)) {
                let n: Rc<str> = n.as_str().into();
                self.i += 2;
                args.push(Arg::Kw(n, self.test()?));
            } else {
                let pos = self.pos();
                let e = self.named_test()?;
                if self.is_kw("for") {
                    let gens = self.comp_for()?;
                    args.push(Arg::Pos(Expr { kind: ExprKind::Comp(CompKind::Gen, Box::new(e), gens), pos }));
                } else {
                    args.push(Arg::Pos(e));
                }
            }
            if !self.eat_op(",") {
                self.expect_op(")")?;
                break;
            }
        }
        self.depth -= 1;
        Ok(args)
    }

    fn subscript(&mut self) -> R<Expr> {
        let pos = self.pos();
        let first = self.slice_item()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_op("]") {
                break;
            }
            items.push(self.slice_item()?);
        }
        Ok(Expr { kind: ExprKind::Tuple(items), pos })
    }
    fn slice_item(&mut self) -> R<Expr> {
        let pos = self.pos();
        let lower = if self.is_op(":") { None } else { Some(Box::new(self.test_or_star()?)) };
        if !self.eat_op(":") {
            return lower.map(|b| *b).ok_or_else(|| self.unexpected());
        }
        let upper =
            if self.is_op(":") || self.is_op(",") || self.is_op("]") { None } else { Some(Box::new(self.test()?)) };
        let step =
            if self.eat_op(":") && !(self.is_op(",") || self.is_op("]")) { Some(Box::new(self.test()?)) } else { None };
        Ok(Expr { kind: ExprKind::Slice(lower, upper, step), pos })
    }

    fn comp_for(&mut self) -> R<Vec<Comp>> {
        let mut gens = Vec::new();
        // Each `for` clause nests the evaluation one level.
        let depth = self.depth;
        while self.eat_kw("for") {
            if let Err(e) = self.enter() {
                self.depth = depth;
                return Err(e);
            }
            let target = self.target_list()?;
            if !self.eat_kw("in") {
                return Err(self.err_here("expected `in`"));
            }
            let iter = self.or_test()?;
            let mut conds = Vec::new();
            while self.eat_kw("if") {
                conds.push(self.test_nocond()?);
            }
            gens.push(Comp { target, iter, conds });
        }
        self.depth = depth;
        Ok(gens)
    }

    fn atom(&mut self) -> R<Expr> {
        let pos = self.pos();
        let t = self.tok().clone();
        let kind = match t {
            Tok::Name(n) => {
                self.i += 1;
                match n.as_str() {
                    "None" => ExprKind::None,
                    "True" => ExprKind::Bool(true),
                    "False" => ExprKind::Bool(false),
                    "yield" => return Err(at(pos.line as usize, pos.col as usize, "`yield` is not supported")),
                    _ if KEYWORDS.contains(&n.as_str()) => {
                        self.i -= 1;
                        return Err(self.unexpected());
                    }
                    _ => ExprKind::Name(n.into()),
                }
            }
            Tok::Int(v) => {
                self.i += 1;
                ExprKind::Int(v)
            }
            Tok::BigInt(d) => {
                self.i += 1;
                ExprKind::BigInt(d)
            }
            Tok::Float(v) => {
                self.i += 1;
                ExprKind::Float(v)
            }
            Tok::Str(_) => {
                // Adjacent literals concatenate; any f-string makes the whole an f-string.
                let mut s = String::new();
                let mut f = false;
                while let Tok::Str(v) = self.tok() {
                    match v {
                        Some(v) => s.push_str(v),
                        None => f = true,
                    }
                    self.i += 1;
                }
                if f { ExprKind::FStr } else { ExprKind::Str(s.into()) }
            }
            Tok::Op("...") => {
                self.i += 1;
                ExprKind::Ellipsis
            }
            Tok::Op(open @ ("(" | "[" | "{")) => {
                self.i += 1;
                self.enter()?;
                let r = match open {
                    "(" => self.paren(pos),
                    "[" => self.list_display(pos),
                    _ => self.brace_display(pos),
                };
                self.depth -= 1;
                return r;
            }
            _ => return Err(self.unexpected()),
        };
        Ok(Expr { kind, pos })
    }

    fn paren(&mut self, pos: Pos) -> R<Expr> {
        if self.eat_op(")") {
            return Ok(Expr { kind: ExprKind::Tuple(Vec::new()), pos });
        }
        if self.is_kw("yield") {
            return Err(self.err_here("`yield` is not supported"));
        }
        let first = self.test_or_star()?;
        if self.is_kw("for") {
            let gens = self.comp_for()?;
            self.expect_op(")")?;
            return Ok(Expr { kind: ExprKind::Comp(CompKind::Gen, Box::new(first), gens), pos });
        }
        if self.eat_op(")") {
            if matches!(first.kind, ExprKind::Starred(_)) {
                return Err(at(pos.line as usize, pos.col as usize, "cannot use starred expression here"));
            }
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_op(")") {
                break;
            }
            items.push(self.test_or_star()?);
        }
        self.expect_op(")")?;
        Ok(Expr { kind: ExprKind::Tuple(items), pos })
    }

    fn list_display(&mut self, pos: Pos) -> R<Expr> {
        if self.eat_op("]") {
            return Ok(Expr { kind: ExprKind::List(Vec::new()), pos });
        }
        let first = self.test_or_star()?;
        if self.is_kw("for") {
            let gens = self.comp_for()?;
            self.expect_op("]")?;
            return Ok(Expr { kind: ExprKind::Comp(CompKind::List, Box::new(first), gens), pos });
        }
        let items = self.rest_of_display(first, "]")?;
        Ok(Expr { kind: ExprKind::List(items), pos })
    }

    fn brace_display(&mut self, pos: Pos) -> R<Expr> {
        if self.eat_op("}") {
            return Ok(Expr { kind: ExprKind::Dict(Vec::new()), pos });
        }
        let dict_item = |p: &mut Parser| -> R<(Option<Expr>, Expr)> {
            if p.eat_op("**") {
                return Ok((None, p.bitor()?));
            }
            let k = p.test()?;
            p.expect_op(":")?;
            Ok((Some(k), p.test()?))
        };
        if self.is_op("**") || self.dict_ahead() {
            let first = dict_item(self)?;
            if self.is_kw("for") {
                let (Some(k), v) = first else { return Err(self.unexpected()) };
                let gens = self.comp_for()?;
                self.expect_op("}")?;
                return Ok(Expr { kind: ExprKind::DictComp(Box::new((k, v)), gens), pos });
            }
            let mut items = vec![first];
            while self.eat_op(",") {
                if self.is_op("}") {
                    break;
                }
                items.push(dict_item(self)?);
            }
            self.expect_op("}")?;
            return Ok(Expr { kind: ExprKind::Dict(items), pos });
        }
        let first = self.test_or_star()?;
        if self.is_kw("for") {
            let gens = self.comp_for()?;
            self.expect_op("}")?;
            return Ok(Expr { kind: ExprKind::Comp(CompKind::Set, Box::new(first), gens), pos });
        }
        let items = self.rest_of_display(first, "}")?;
        Ok(Expr { kind: ExprKind::Set(items), pos })
    }

    /// The items of a list or set display after the first, up to and including `close`.
    fn rest_of_display(&mut self, first: Expr, close: &str) -> R<Vec<Expr>> {
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_op(close) {
                break;
            }
            items.push(self.test_or_star()?);
        }
        self.expect_op(close)?;
        Ok(items)
    }
    /// Whether a `:` follows the first item at this bracket level (a dict, not a set).
    fn dict_ahead(&self) -> bool {
        let mut d = 0i64;
        let mut j = self.i;
        while j < self.toks.len() {
            match &self.toks[j].tok {
                Tok::Op("(" | "[" | "{") => d += 1,
                Tok::Op(")" | "]" | "}") => {
                    if d == 0 {
                        return false;
                    }
                    d -= 1;
                }
                Tok::Op(":") if d == 0 => return true,
                Tok::Op(",") if d == 0 => return false,
                Tok::Name(n) if d == 0 && (n == "for" || n == "lambda") => return false,
                Tok::End => return false,
                _ => {}
            }
            j += 1;
        }
        false
    }
}

fn check_target(e: &Expr) -> R<()> {
    match &e.kind {
        ExprKind::Name(_) | ExprKind::Attr(..) | ExprKind::Subscript(..) => Ok(()),
        ExprKind::Tuple(v) | ExprKind::List(v) => v.iter().try_for_each(check_target),
        ExprKind::Starred(inner) => check_target(inner),
        _ => Err(at(e.pos.line as usize, e.pos.col as usize, "cannot assign to this expression")),
    }
}

/// Names an assignment target binds (repeats included; see [`dedup_names`]).
fn bound_names_all(e: &Expr, out: &mut Vec<Rc<str>>) {
    match &e.kind {
        ExprKind::Name(n) => {
            out.push(n.clone());
        }
        ExprKind::Tuple(v) | ExprKind::List(v) => v.iter().for_each(|x| bound_names_all(x, out)),
        ExprKind::Starred(inner) => bound_names_all(inner, out),
        _ => {}
    }
}

/// Names a statement list binds at its own scope, repeats included.
fn collect_assigned(body: &[Stmt], out: &mut Vec<Rc<str>>) {
    for s in body {
        match &s.kind {
            StmtKind::Assign(targets, _) => targets.iter().for_each(|t| bound_names_all(t, out)),
            StmtKind::AugAssign(t, _, _) | StmtKind::AnnAssign(t, _, _) => bound_names_all(t, out),
            StmtKind::For(t, _, b, e) => {
                bound_names_all(t, out);
                collect_assigned(b, out);
                collect_assigned(e, out);
            }
            StmtKind::While(_, b, e) => {
                collect_assigned(b, out);
                collect_assigned(e, out);
            }
            StmtKind::If(arms, e) => {
                arms.iter().for_each(|(_, b)| collect_assigned(b, out));
                collect_assigned(e, out);
            }
            StmtKind::Try(b, hs, e, f) => {
                collect_assigned(b, out);
                for h in hs {
                    out.extend(h.name.iter().cloned());
                    collect_assigned(&h.body, out);
                }
                collect_assigned(e, out);
                collect_assigned(f, out);
            }
            StmtKind::With(_, names, b) => {
                for n in names {
                    out.push(n.clone());
                }
                collect_assigned(b, out);
            }
            StmtKind::Def(f, _) => {
                out.push(f.name.clone());
            }
            StmtKind::Class(c) if !out.contains(&c.name) => {
                out.push(c.name.clone());
            }
            StmtKind::Import(items) => {
                for (_, n, _) in items {
                    out.push(n.clone());
                }
            }
            StmtKind::ImportFrom(_, items) => {
                for (_, n) in items {
                    out.push(n.clone());
                }
            }
            StmtKind::Unsupported(_, names) => {
                for n in names {
                    out.push(n.clone());
                }
            }
            StmtKind::Del(ts) => ts.iter().for_each(|t| bound_names_all(t, out)),
            _ => {}
        }
    }
}

/// Names a statement list binds at its own scope (not inside nested functions), added to `out`
/// once each, in order.
pub(super) fn assigned_names(body: &[Stmt], out: &mut Vec<Rc<str>>) {
    collect_assigned(body, out);
    dedup_names(out);
}

/// Names an assignment target binds, added to `out` once each.
pub(super) fn bound_names(e: &Expr, out: &mut Vec<Rc<str>>) {
    bound_names_all(e, out);
    dedup_names(out);
}

/// Keeps the first of each name, in order, in linear time.
fn dedup_names(out: &mut Vec<Rc<str>>) {
    let mut seen = std::collections::HashSet::new();
    out.retain(|n| seen.insert(Key::Str(n.clone())));
}

fn collect_decl(body: &[Stmt], globals: &mut Vec<Rc<str>>, nonlocals: &mut Vec<Rc<str>>) {
    for s in body {
        match &s.kind {
            StmtKind::Global(ns) => globals.extend(ns.iter().cloned()),
            StmtKind::Nonlocal(ns) => nonlocals.extend(ns.iter().cloned()),
            StmtKind::For(_, _, b, e) | StmtKind::While(_, b, e) => {
                collect_decl(b, globals, nonlocals);
                collect_decl(e, globals, nonlocals);
            }
            StmtKind::If(arms, e) => {
                arms.iter().for_each(|(_, b)| collect_decl(b, globals, nonlocals));
                collect_decl(e, globals, nonlocals);
            }
            StmtKind::Try(b, hs, e, f) => {
                collect_decl(b, globals, nonlocals);
                hs.iter().for_each(|h| collect_decl(&h.body, globals, nonlocals));
                collect_decl(e, globals, nonlocals);
                collect_decl(f, globals, nonlocals);
            }
            StmtKind::With(_, _, b) => collect_decl(b, globals, nonlocals),
            _ => {}
        }
    }
}

fn finish_def(name: Rc<str>, params: Vec<Param>, body: Vec<Stmt>) -> FuncDef {
    let mut locals: Vec<Rc<str>> = params.iter().map(|p| p.name.clone()).collect();
    assigned_names(&body, &mut locals);
    let (mut globals, mut nonlocals) = (Vec::new(), Vec::new());
    collect_decl(&body, &mut globals, &mut nonlocals);
    locals.retain(|n| !globals.contains(n) && !nonlocals.contains(n));
    FuncDef { name, params, returns: None, body, locals, globals, nonlocals }
}

/// CPython's limit on statically nested blocks in one function, class or module body
/// (`CO_MAXBLOCKS`).
const MAX_STATIC_BLOCKS: usize = 20;

/// Refuses a text CPython 3.11 does not compile for "too many statically nested blocks": the
/// blocks its compiler pushes are counted per function, class and module body as it counts them
/// (`for` and `while` one each, `with` one per item, `try` one around its body, `finally` one
/// around the body and one for the exceptional `finally` path, an `except` clause two), and the
/// place is the statement or `except` clause whose block is one too many. Iterative: statements
/// nested any depth cost no stack.
pub(super) fn static_blocks(body: &[Stmt]) -> R<()> {
    let too_many = |p: Pos| Err(at(p.line as usize, p.col as usize, "too many statically nested blocks (SyntaxError)"));
    let mut stack: Vec<(&[Stmt], usize)> = vec![(body, 0)];
    while let Some((stmts, d)) = stack.pop() {
        // Pushed in reverse, so the text's first violation is the one reported.
        let mut next: Vec<(&[Stmt], usize)> = Vec::new();
        for s in stmts {
            match &s.kind {
                StmtKind::For(_, _, b, e) | StmtKind::While(_, b, e) => {
                    if d + 1 > MAX_STATIC_BLOCKS {
                        return too_many(s.pos);
                    }
                    next.push((b, d + 1));
                    next.push((e, d));
                }
                StmtKind::With(items, _, b) => {
                    if d + items.len() > MAX_STATIC_BLOCKS {
                        return too_many(s.pos);
                    }
                    next.push((b, d + items.len()));
                }
                StmtKind::Try(b, handlers, orelse, fin) => {
                    let mut base = d;
                    if !fin.is_empty() {
                        if d + 1 > MAX_STATIC_BLOCKS {
                            return too_many(s.pos);
                        }
                        base = d + 1;
                    }
                    if handlers.is_empty() {
                        next.push((b, base));
                    } else {
                        if base + 1 > MAX_STATIC_BLOCKS {
                            return too_many(s.pos);
                        }
                        next.push((b, base + 1));
                        next.push((orelse, base));
                        for h in handlers {
                            if base + 2 > MAX_STATIC_BLOCKS {
                                return too_many(h.pos);
                            }
                            next.push((&h.body, base + 2));
                        }
                    }
                    next.push((fin, d + 1));
                }
                StmtKind::If(branches, e) => {
                    next.extend(branches.iter().map(|(_, b)| (&b[..], d)));
                    next.push((e, d));
                }
                StmtKind::Def(f, _) => next.push((&f.body, 0)),
                StmtKind::Class(c) => next.push((&c.body, 0)),
                _ => {}
            }
        }
        stack.extend(next.into_iter().rev());
    }
    Ok(())
}

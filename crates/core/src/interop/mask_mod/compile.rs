//! Module-level bindings and compilation.

use std::collections::HashMap;

use super::eval::{Val, eval};
use super::lex::{Line, Tok, Token};
use super::parse::{Ast, BinOp, Expr, Parser, Ty};
use super::{MaskModError, at};

#[derive(Clone, Debug)]
pub(super) enum Binding {
    /// `def name(a, b, c, d):` with its body lines.
    /// `bad`: why the parameter list is not one of plain names (reported only if it is used).
    Def { params: Vec<String>, bad: Option<MaskModError>, body: Vec<Line>, line: usize, col: usize },
    /// `name = lambda a, b, c, d: expr` (the tokens after the colon).
    Lambda { params: Vec<String>, expr: Vec<Token>, line: usize, col: usize },
    /// `name = <tokens>`, read only if used.
    Value { toks: Vec<Token>, line: usize, col: usize },
}

impl Binding {
    pub(super) fn line(&self) -> usize {
        match self {
            Binding::Def { line, .. } | Binding::Lambda { line, .. } | Binding::Value { line, .. } => *line,
        }
    }
}

/// A compiled mask function: its body over its own query and key.
#[derive(Clone, Debug)]
pub(super) struct Func {
    pub(super) name: String,
    pub(super) body: Expr,
}

pub(super) struct Compiler {
    pub(super) bindings: HashMap<String, Vec<Binding>>,
    pub(super) funcs: Vec<Func>,
    /// Function index by name, once compiled (`None` while compiling: recursion).
    pub(super) func_ids: HashMap<String, Option<usize>>,
    pub(super) constants: HashMap<String, Option<i64>>,
}

/// The parameters of one function body being compiled.
pub(super) struct Frame<'a> {
    pub(super) params: &'a [String],
    pub(super) locals: HashMap<String, (Expr, Ty)>,
}

pub(super) fn is_main_guard(toks: &[Token]) -> bool {
    let words: Vec<String> = toks
        .iter()
        .map(|t| match &t.tok {
            Tok::Name(n) => n.clone(),
            Tok::Op(o) => (*o).to_string(),
            Tok::Str => "STR".into(),
            Tok::Int(v) => v.to_string(),
        })
        .collect();
    words == ["if", "__name__", "==", "STR", ":"] || words == ["if", "STR", "==", "__name__", ":"]
}

pub(super) fn first_name(line: &Line) -> Option<&str> {
    match line.toks.first() {
        Some(Token { tok: Tok::Name(n), .. }) => Some(n),
        _ => None,
    }
}

/// Parameter names of `(a, b, c, d)` starting at `toks[i]` = `(`; returns them and the index
/// after `)`.
pub(super) fn params_of(toks: &[Token], mut i: usize, close: &str) -> Result<(Vec<String>, usize), MaskModError> {
    let mut out = Vec::new();
    loop {
        match toks.get(i) {
            Some(Token { tok: Tok::Op(o), .. }) if *o == close => return Ok((out, i + 1)),
            Some(Token { tok: Tok::Name(n), .. }) => {
                out.push(n.clone());
                i += 1;
                match toks.get(i) {
                    Some(Token { tok: Tok::Op(","), .. }) => i += 1,
                    Some(Token { tok: Tok::Op(o), .. }) if *o == close => {}
                    Some(Token { tok: Tok::Op(":"), line, col }) => {
                        return Err(at(*line, *col, "parameter annotations are not supported"));
                    }
                    Some(Token { tok: Tok::Op("="), line, col }) => {
                        return Err(at(*line, *col, "default parameter values are not supported"));
                    }
                    Some(t) => return Err(at(t.line, t.col, "unexpected token in the parameter list")),
                    None => return Err(MaskModError::Text("the parameter list is not closed".into())),
                }
            }
            Some(t) => return Err(at(t.line, t.col, "unexpected token in the parameter list")),
            None => return Err(MaskModError::Text("the parameter list is not closed".into())),
        }
    }
}

/// Every module-level binding by name, and the mask-function-like ones in the order defined.
pub(super) type Bindings = (HashMap<String, Vec<Binding>>, Vec<(String, usize)>);

pub(super) fn collect(lines: &[Line]) -> Result<Bindings, MaskModError> {
    let mut bindings: HashMap<String, Vec<Binding>> = HashMap::new();
    let mut order = Vec::new();
    let mut i = 0;
    let base = lines.first().map_or(0, |l| l.indent);
    while i < lines.len() {
        let line = &lines[i];
        let t0 = &line.toks[0];
        if line.indent != base {
            return Err(at(t0.line, t0.col, "unexpected indentation"));
        }
        // The block below a line ending in `:` (or none: a one-line body).
        let block_end = {
            let mut j = i + 1;
            while j < lines.len() && lines[j].indent > line.indent {
                j += 1;
            }
            j
        };
        match first_name(line) {
            Some("import" | "from") => {}
            Some("if") if is_main_guard(&line.toks) => {
                if lines.get(block_end).and_then(first_name).is_some_and(|n| n == "else" || n == "elif") {
                    let t = &lines[block_end].toks[0];
                    return Err(at(t.line, t.col, "an `else` after the __main__ guard is not supported"));
                }
            }
            Some("def") => {
                let name = match line.toks.get(1) {
                    Some(Token { tok: Tok::Name(n), .. }) => n.clone(),
                    _ => return Err(at(t0.line, t0.col, "expected a function name after `def`")),
                };
                if line.toks.get(2).map(|t| &t.tok) != Some(&Tok::Op("(")) {
                    return Err(at(t0.line, t0.col, "expected `(` after the function name"));
                }
                let (params, bad, mut j) = match params_of(&line.toks, 3, ")") {
                    Ok((params, after)) => (params, None, after),
                    Err(e) => {
                        // Skip to the closing parenthesis: the function may never be used.
                        let mut depth = 0;
                        let mut j = 2;
                        while j < line.toks.len() {
                            match line.toks[j].tok {
                                Tok::Op("(") => depth += 1,
                                Tok::Op(")") => {
                                    depth -= 1;
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                            j += 1;
                        }
                        (Vec::new(), Some(e), j + 1)
                    }
                };
                if line.toks.get(j).map(|t| &t.tok) == Some(&Tok::Op("->")) {
                    while j < line.toks.len() && line.toks[j].tok != Tok::Op(":") {
                        j += 1;
                    }
                }
                if line.toks.get(j).map(|t| &t.tok) != Some(&Tok::Op(":")) {
                    return Err(at(t0.line, t0.col, "expected `:` after the parameter list"));
                }
                let body = if j + 1 < line.toks.len() {
                    vec![Line { indent: line.indent + 1, toks: line.toks[j + 1..].to_vec() }]
                } else {
                    lines[i + 1..block_end].to_vec()
                };
                order.push((name.clone(), t0.line));
                bindings.entry(name).or_default().push(Binding::Def { params, bad, body, line: t0.line, col: t0.col });
            }
            Some(name)
                if line.toks.get(1).map(|t| &t.tok) == Some(&Tok::Op("="))
                    && !matches!(name, "if" | "for" | "while" | "with" | "class" | "try" | "return") =>
            {
                let name = name.to_string();
                let rest = line.toks[2..].to_vec();
                if rest.is_empty() {
                    return Err(at(t0.line, t0.col, "an assignment without a value"));
                }
                let binding = if matches!(&rest[0].tok, Tok::Name(n) if n == "lambda") {
                    let mut k = 1;
                    let mut params = Vec::new();
                    while let Some(Token { tok: Tok::Name(p), .. }) = rest.get(k) {
                        params.push(p.clone());
                        k += 1;
                        match rest.get(k).map(|t| &t.tok) {
                            Some(Tok::Op(",")) => k += 1,
                            Some(Tok::Op(":")) => break,
                            _ => {
                                let t = rest.get(k).unwrap_or(&rest[0]);
                                return Err(at(t.line, t.col, "unexpected token in the lambda's parameters"));
                            }
                        }
                    }
                    if rest.get(k).map(|t| &t.tok) != Some(&Tok::Op(":")) {
                        return Err(at(rest[0].line, rest[0].col, "expected `:` in the lambda"));
                    }
                    Binding::Lambda { params, expr: rest[k + 1..].to_vec(), line: t0.line, col: t0.col }
                } else {
                    Binding::Value { toks: rest, line: t0.line, col: t0.col }
                };
                if matches!(binding, Binding::Lambda { .. })
                    || matches!(&binding, Binding::Value { toks, .. } if matches!(&toks[0].tok, Tok::Name(n) if n == "and_masks" || n == "or_masks"))
                {
                    order.push((name.clone(), t0.line));
                }
                bindings.entry(name).or_default().push(binding);
                if block_end > i + 1 {
                    let t = &lines[i + 1].toks[0];
                    return Err(at(t.line, t.col, "unexpected indentation"));
                }
            }
            _ if line.toks.len() == 1 && t0.tok == Tok::Str => {}
            Some(word @ ("for" | "while" | "if" | "with" | "try" | "class" | "async" | "match" | "elif" | "else")) => {
                let what = match word {
                    "for" | "while" => format!("a `{word}` loop is not supported"),
                    _ => format!("a module-level `{word}` is not supported"),
                };
                return Err(at(
                    t0.line,
                    t0.col,
                    format!(
                        "{what} (only imports, integer constants, mask functions, and_masks/or_masks and the __main__ guard)"
                    ),
                ));
            }
            _ => {
                let what = match line.toks.get(1).map(|t| &t.tok) {
                    Some(Tok::Op(o)) if o.ends_with('=') && *o != "==" => format!("the assignment `{o}` is not supported"),
                    Some(Tok::Op("(")) | Some(Tok::Op(".")) => {
                        "a module-level call is not supported (only imports, integer constants, mask functions, and_masks/or_masks and the __main__ guard)".to_string()
                    }
                    _ => "this statement is not supported (only imports, integer constants, mask functions, and_masks/or_masks and the __main__ guard)".to_string(),
                };
                return Err(at(t0.line, t0.col, what));
            }
        }
        i = block_end;
    }
    Ok((bindings, order))
}

impl Compiler {
    pub(super) fn binding(&self, name: &str, l: usize, c: usize) -> Result<Option<&Binding>, MaskModError> {
        match self.bindings.get(name).map(Vec::as_slice) {
            None | Some([]) => Ok(None),
            Some([b]) => Ok(Some(b)),
            Some(many) => Err(at(
                l,
                c,
                format!(
                    "`{name}` is bound more than once (lines {}): one binding each, please",
                    many.iter().map(|b| b.line().to_string()).collect::<Vec<_>>().join(", ")
                ),
            )),
        }
    }

    /// The value of an integer constant.
    pub(super) fn constant(&mut self, name: &str, l: usize, c: usize) -> Result<i64, MaskModError> {
        match self.constants.get(name) {
            Some(Some(v)) => return Ok(*v),
            Some(None) => return Err(at(l, c, format!("the constant `{name}` refers to itself"))),
            None => {}
        }
        let toks = match self.binding(name, l, c)? {
            Some(Binding::Value { toks, .. }) => toks.clone(),
            Some(_) => return Err(at(l, c, format!("`{name}` is a function, not an integer"))),
            None => return Err(at(l, c, format!("the name `{name}` is not defined in the text"))),
        };
        self.constants.insert(name.to_string(), None);
        let mut p = Parser::new(&toks);
        let ast = p.expr()?;
        p.done()?;
        let mut frame = Frame { params: &[], locals: HashMap::new() };
        let (e, ty) = self.lower(&ast, &mut frame)?;
        let v = match (ty, eval(&e, &self.funcs, 0, 0, 0)) {
            (Ty::Int, Ok(Val::I(v))) => v,
            (_, Err(what)) => return Err(at(toks[0].line, toks[0].col, what)),
            _ => return Err(at(toks[0].line, toks[0].col, format!("`{name}` is a boolean, not an integer"))),
        };
        self.constants.insert(name.to_string(), Some(v));
        Ok(v)
    }

    /// Compiles the mask function `name`, returning its index.
    pub(super) fn function(&mut self, name: &str, l: usize, c: usize) -> Result<usize, MaskModError> {
        match self.func_ids.get(name) {
            Some(Some(id)) => return Ok(*id),
            Some(None) => return Err(at(l, c, format!("`{name}` calls itself: recursion is not supported"))),
            None => {}
        }
        let binding = match self.binding(name, l, c)? {
            Some(b) => b.clone(),
            None => return Err(at(l, c, format!("the function `{name}` is not defined in the text"))),
        };
        self.func_ids.insert(name.to_string(), None);
        let body = match &binding {
            Binding::Def { params, bad, body, line, col } => {
                if let Some(e) = bad {
                    return Err(e.clone());
                }
                check_arity(name, params, *line, *col)?;
                self.def_body(params, body, *line, *col)?
            }
            Binding::Lambda { params, expr, line, col } => {
                check_arity(name, params, *line, *col)?;
                let mut p = Parser::new(expr);
                let ast = p.expr()?;
                p.done()?;
                let mut frame = Frame { params, locals: HashMap::new() };
                self.boolean(&ast, &mut frame, *line, *col)?
            }
            Binding::Value { toks, line, col } => match &toks[0].tok {
                Tok::Name(f) if f == "and_masks" || f == "or_masks" => {
                    let conj = f == "and_masks";
                    let mut p = Parser::new(toks);
                    let Ast::Call(_, args, _, _) = p.atom()? else {
                        return Err(at(*line, *col, format!("expected {f}(...)")));
                    };
                    p.done()?;
                    let mut ids = Vec::new();
                    for a in &args {
                        match a {
                            Ast::Name(g, gl, gc) => ids.push(self.function(g, *gl, *gc)?),
                            _ => {
                                return Err(at(*line, *col, format!("{f} takes mask functions by name")));
                            }
                        }
                    }
                    Expr::Combine(conj, ids)
                }
                _ => {
                    return Err(at(
                        *line,
                        *col,
                        format!("`{name}` is not a mask function (def, lambda, and_masks or or_masks)"),
                    ));
                }
            },
        };
        let id = self.funcs.len();
        self.funcs.push(Func { name: name.to_string(), body });
        self.func_ids.insert(name.to_string(), Some(id));
        Ok(id)
    }

    pub(super) fn def_body(
        &mut self,
        params: &[String],
        body: &[Line],
        line: usize,
        col: usize,
    ) -> Result<Expr, MaskModError> {
        let mut frame = Frame { params, locals: HashMap::new() };
        let indent = body.first().map_or(0, |l| l.indent);
        for (i, stmt) in body.iter().enumerate() {
            let t0 = &stmt.toks[0];
            if stmt.indent != indent {
                return Err(at(t0.line, t0.col, "a nested block inside a mask function is not supported"));
            }
            match first_name(stmt) {
                Some("return") => {
                    let mut p = Parser::new(&stmt.toks[1..]);
                    if stmt.toks.len() == 1 {
                        return Err(at(t0.line, t0.col, "`return` without a value"));
                    }
                    let ast = p.expr()?;
                    p.done()?;
                    if let Some(next) = body.get(i + 1) {
                        let t = &next.toks[0];
                        return Err(at(t.line, t.col, "a statement after `return` is not supported"));
                    }
                    return self.boolean(&ast, &mut frame, t0.line, t0.col);
                }
                Some(name) if stmt.toks.get(1).map(|t| &t.tok) == Some(&Tok::Op("=")) && name != "lambda" => {
                    let mut p = Parser::new(&stmt.toks[2..]);
                    let ast = p.expr()?;
                    p.done()?;
                    let lowered = self.lower(&ast, &mut frame)?;
                    frame.locals.insert(name.to_string(), lowered);
                }
                _ if stmt.toks.len() == 1 && t0.tok == Tok::Str && i == 0 => {}
                Some(word @ ("if" | "for" | "while" | "with" | "try" | "def" | "match")) => {
                    let what = match word {
                        "def" => {
                            "a function inside a function is not supported (write its parameters as module constants)"
                                .to_string()
                        }
                        "for" | "while" => format!("a `{word}` loop is not supported"),
                        _ => format!("an `{word}` statement is not supported (use & | ~ on comparisons)"),
                    };
                    return Err(at(t0.line, t0.col, what));
                }
                _ => return Err(at(t0.line, t0.col, "this statement is not supported in a mask function")),
            }
        }
        Err(at(line, col, "the function has no `return`"))
    }

    pub(super) fn boolean(
        &mut self,
        ast: &Ast,
        frame: &mut Frame,
        line: usize,
        col: usize,
    ) -> Result<Expr, MaskModError> {
        match self.lower(ast, frame)? {
            (e, Ty::Bool) if e.is_const() => Err(at(
                line,
                col,
                "the mask function's value depends on neither q_idx nor kv_idx: FlexAttention needs a tensor \
                 (write (q_idx >= 0) for all-True)",
            )),
            (e, Ty::Bool) => Ok(e),
            (_, Ty::Int) => Err(at(line, col, "the mask function returns an integer, not a boolean")),
        }
    }

    pub(super) fn lower(&mut self, ast: &Ast, frame: &mut Frame) -> Result<(Expr, Ty), MaskModError> {
        Ok(match ast {
            Ast::Int(v) => (Expr::Int(*v), Ty::Int),
            Ast::Bool(b) => (Expr::Bool(*b), Ty::Bool),
            Ast::Name(n, l, c) => {
                if let Some((e, t)) = frame.locals.get(n) {
                    return Ok((e.clone(), *t));
                }
                if let Some(pos) = frame.params.iter().position(|p| p == n) {
                    return match pos {
                        2 => Ok((Expr::Q, Ty::Int)),
                        3 => Ok((Expr::K, Ty::Int)),
                        _ => Err(at(
                            *l,
                            *c,
                            format!(
                                "the {} argument `{n}` is used: the mask would differ per {}, and hasseflow reads one mask",
                                if pos == 0 { "batch" } else { "head" },
                                if pos == 0 { "batch" } else { "head" }
                            ),
                        )),
                    };
                }
                (Expr::Int(self.constant(n, *l, *c)?), Ty::Int)
            }
            Ast::Unary(op, e, l, c) => {
                let (e, t) = self.lower(e, frame)?;
                match (*op, t) {
                    ("-", Ty::Int) => (Expr::Neg(Box::new(e)), Ty::Int),
                    ("~", Ty::Bool) if e.is_const() => {
                        return Err(at(
                            *l,
                            *c,
                            "`~` on a constant boolean is not supported (in Python ~True is the integer -2)",
                        ));
                    }
                    ("~", t) => (Expr::Not(Box::new(e), t), t),
                    _ => return Err(at(*l, *c, format!("`{op}` on a boolean is not supported"))),
                }
            }
            Ast::Bin(op, a, b, l, c) => {
                let (ea, ta) = self.lower(a, frame)?;
                let (eb, tb) = self.lower(b, frame)?;
                let op_ = match *op {
                    "&" => BinOp::And,
                    "|" => BinOp::Or,
                    "+" => BinOp::Add,
                    "-" => BinOp::Sub,
                    "*" => BinOp::Mul,
                    "//" => BinOp::FloorDiv,
                    "%" => BinOp::Mod,
                    "<" => BinOp::Lt,
                    "<=" => BinOp::Le,
                    ">" => BinOp::Gt,
                    ">=" => BinOp::Ge,
                    "==" => BinOp::Eq,
                    _ => BinOp::Ne,
                };
                if ta != tb {
                    return Err(at(
                        *l,
                        *c,
                        format!("`{op}` mixes a boolean and an integer (torch would promote the boolean)"),
                    ));
                }
                let out = match op_ {
                    BinOp::And | BinOp::Or => ta,
                    BinOp::Eq | BinOp::Ne => Ty::Bool,
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                        if ta == Ty::Bool {
                            return Err(at(*l, *c, format!("`{op}` on booleans is not supported")));
                        }
                        Ty::Bool
                    }
                    _ => {
                        if ta == Ty::Bool {
                            return Err(at(*l, *c, format!("arithmetic `{op}` on booleans is not supported")));
                        }
                        Ty::Int
                    }
                };
                (Expr::Bin(op_, ta, Box::new(ea), Box::new(eb)), out)
            }
            Ast::Call(name, args, l, c) => {
                if name == "and_masks" || name == "or_masks" {
                    return Err(at(
                        *l,
                        *c,
                        format!("{name}(...) is supported as a module-level binding: NAME = {name}(f, g)"),
                    ));
                }
                if !self.bindings.contains_key(name) {
                    return Err(at(
                        *l,
                        *c,
                        format!(
                            "the call `{name}(...)` is not supported (only the text's own mask functions, and_masks and or_masks)"
                        ),
                    ));
                }
                if args.len() != 4 {
                    return Err(at(
                        *l,
                        *c,
                        format!("`{name}` is called with {} arguments; mask functions take 4", args.len()),
                    ));
                }
                let id = self.function(name, *l, *c)?;
                let (q, tq) = self.lower(&args[2], frame)?;
                let (k, tk) = self.lower(&args[3], frame)?;
                if tq != Ty::Int || tk != Ty::Int {
                    return Err(at(*l, *c, format!("`{name}` is called with a boolean index")));
                }
                (Expr::Call(id, Box::new(q), Box::new(k)), Ty::Bool)
            }
        })
    }
}

pub(super) fn check_arity(name: &str, params: &[String], line: usize, col: usize) -> Result<(), MaskModError> {
    if params.len() == 4 {
        Ok(())
    } else {
        Err(at(
            line,
            col,
            format!(
                "`{name}` takes {} argument{}; a mask_mod takes 4 (b, h, q_idx, kv_idx)",
                params.len(),
                if params.len() == 1 { "" } else { "s" }
            ),
        ))
    }
}

//! FlexAttention `mask_mod` import: the Python that researchers write, read back into a mask.
//!
//! Accepted (the subset real `mask_mod`s use, which means the same for torch tensors and here):
//! - module level: imports (ignored), docstrings, `if __name__ == "__main__":` blocks (never run
//!   on import, so ignored), `NAME = <integer constant expression>`, `def` and
//!   `NAME = lambda ...` mask functions of four arguments under any names, and
//!   `NAME = and_masks(f, g, ...)` / `or_masks(...)` of mask functions defined in the same text;
//! - inside a `def`: a docstring, `NAME = <expression>` bindings, then `return <expression>`;
//! - expressions over the query and key arguments, integer literals, `True`/`False`, named
//!   constants, calls of the text's own mask functions, `& | ~ == != < <= > >= + - * // %` and
//!   parentheses, with Python's precedence (comparisons bind looser than `&` and `|`) and its
//!   floor semantics for `//` and `%` (which torch's integer tensors follow too).
//!
//! Everything else is refused with one line naming the construct and where it is (tensor lookups,
//! other calls, `and`/`or`/`not`, chained comparisons, loops, conditionals, the batch or head
//! argument used in arithmetic), and so is an expression that mixes booleans and integers where
//! torch would promote or fail. Assignments nobody uses are never read, so a training script's
//! other lines do not stop the import.
//!
//! The function taken is the one named `mask_mod`, else the last mask function defined. The size
//! comes from the caller, else from an integer constant `N` in the text (what hasseflow's own
//! exports define).
//!
//! Complexity: parsing is linear in the text; [`MaskMod::to_mask`] evaluates the compiled
//! expression once per cell, `O(n² · size of the expression)`.

use std::collections::HashMap;
use std::fmt;

use crate::bits::BitMatrix;
use crate::format::{MAX_INPUT_BYTES, MAX_N};

/// Why a text is not an importable `mask_mod`, with the 1-based line and column where known.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MaskModError {
    /// The text was refused at a place in it.
    #[error("line {line}, column {col}: {what}")]
    At {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What was found and why it is refused.
        what: String,
    },
    /// Something about the text as a whole.
    #[error("{0}")]
    Text(String),
    /// Evaluating the expression failed at a cell (division by zero, overflow).
    #[error("at q_idx = {q}, kv_idx = {k}: {what}")]
    Cell {
        /// The query.
        q: usize,
        /// The key.
        k: usize,
        /// What went wrong.
        what: String,
    },
    /// No size was given and the text defines no `N`.
    #[error("the mask_mod has no size: give n (e.g. --n 64) or define N = 64 in the text")]
    NeedsSize,
    /// The size is outside `1..=MAX_N`.
    #[error("mask size n = {0} is out of range 1..={MAX_N}")]
    Size(usize),
}

/// True when the bytes look like Python mask code rather than JSON, a text grid or `.npy`: UTF-8
/// text whose first significant character is not `{` or `[` and which contains `def ` or
/// `lambda`.
pub fn is_mask_mod(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else { return false };
    let first = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'));
    match first {
        None => false,
        Some(l) if l.starts_with('{') || l.starts_with('[') => false,
        Some(_) => text.contains("def ") || text.contains("lambda"),
    }
}

// ---------------------------------------------------------------------------------------------
// Tokens and logical lines

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    Int(i64),
    Str,
    Op(&'static str),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: usize,
    col: usize,
}

/// One logical line: its indentation and tokens.
#[derive(Clone, Debug)]
struct Line {
    indent: usize,
    toks: Vec<Token>,
}

const OPS: [&str; 47] = [
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=", "*=",
    "/=", "%=", "&=", "|=", "^=", "@=", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">", "(", ")", "[", "]",
    "{", "}", ",", ":", ".", ";", "=",
];

fn at(line: usize, col: usize, what: impl Into<String>) -> MaskModError {
    MaskModError::At { line, col, what: what.into() }
}

fn lex(text: &str) -> Result<Vec<Line>, MaskModError> {
    let chars: Vec<char> = text.chars().collect();
    let mut lines = Vec::new();
    let mut cur: Vec<Token> = Vec::new();
    let mut indent = 0;
    let mut depth = 0usize;
    let (mut i, mut line, mut col) = (0usize, 1usize, 1usize);
    let mut at_line_start = true;
    while i < chars.len() {
        if at_line_start && depth == 0 {
            // Measure indentation; blank and comment-only lines do not count.
            let mut width = 0;
            while i < chars.len() && (chars[i] == ' ' || chars[i] == '\t') {
                width += if chars[i] == '\t' { 8 - width % 8 } else { 1 };
                i += 1;
                col += 1;
            }
            if i >= chars.len() {
                break;
            }
            if !matches!(chars[i], '\n' | '\r' | '#') {
                indent = width;
                at_line_start = false;
            }
        }
        let c = chars[i];
        match c {
            '\n' => {
                if depth == 0 && !cur.is_empty() {
                    lines.push(Line { indent, toks: std::mem::take(&mut cur) });
                }
                if depth == 0 {
                    at_line_start = true;
                }
                i += 1;
                line += 1;
                col = 1;
            }
            '\r' | ' ' | '\t' | '\x0c' => {
                i += 1;
                col += 1;
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                i += 2;
                line += 1;
                col = 1;
            }
            '"' | '\'' => {
                let (l0, c0) = (line, col);
                let triple = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
                let q = if triple { 3 } else { 1 };
                i += q;
                col += q;
                loop {
                    if i >= chars.len() {
                        return Err(at(l0, c0, "unterminated string"));
                    }
                    if chars[i] == '\\' {
                        i += 2;
                        col += 2;
                        continue;
                    }
                    if chars[i] == '\n' {
                        if !triple {
                            return Err(at(l0, c0, "unterminated string"));
                        }
                        line += 1;
                        col = 1;
                        i += 1;
                        continue;
                    }
                    if chars[i] == c && (!triple || (chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c))) {
                        i += q;
                        col += q;
                        break;
                    }
                    i += 1;
                    col += 1;
                }
                // String prefixes (f, r, b) were lexed as a name just before: fold them in.
                if let Some(Token { tok: Tok::Name(p), .. }) = cur.last()
                    && p.len() <= 2
                    && p.chars().all(|ch| "rRbBfFuU".contains(ch))
                {
                    cur.pop();
                }
                cur.push(Token { tok: Tok::Str, line: l0, col: c0 });
            }
            c if c.is_ascii_digit() => {
                let (l0, c0) = (line, col);
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.') {
                    i += 1;
                }
                col += i - start;
                let raw: String = chars[start..i].iter().filter(|&&ch| ch != '_').collect();
                let lower = raw.to_ascii_lowercase();
                let parsed = if let Some(h) = lower.strip_prefix("0x") {
                    i64::from_str_radix(h, 16).ok()
                } else if let Some(b) = lower.strip_prefix("0b") {
                    i64::from_str_radix(b, 2).ok()
                } else if let Some(o) = lower.strip_prefix("0o") {
                    i64::from_str_radix(o, 8).ok()
                } else if raw.bytes().all(|b| b.is_ascii_digit()) {
                    raw.parse::<i64>().ok()
                } else {
                    return Err(at(l0, c0, format!("the number {raw} is not an integer")));
                };
                let v = parsed.ok_or_else(|| at(l0, c0, format!("the integer {raw} does not fit in 64 bits")))?;
                cur.push(Token { tok: Tok::Int(v), line: l0, col: c0 });
            }
            c if c.is_alphabetic() || c == '_' => {
                let (l0, c0) = (line, col);
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                col += i - start;
                cur.push(Token { tok: Tok::Name(chars[start..i].iter().collect()), line: l0, col: c0 });
            }
            _ => {
                let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
                let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) else {
                    return Err(at(line, col, format!("unexpected character {c:?}")));
                };
                match *op {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => {
                        depth = depth.checked_sub(1).ok_or_else(|| at(line, col, format!("unmatched {op}")))?;
                    }
                    _ => {}
                }
                cur.push(Token { tok: Tok::Op(op), line, col });
                i += op.len();
                col += op.len();
            }
        }
    }
    if depth != 0 {
        return Err(MaskModError::Text("unbalanced brackets at the end of the text".into()));
    }
    if !cur.is_empty() {
        lines.push(Line { indent, toks: cur });
    }
    Ok(lines)
}

// ---------------------------------------------------------------------------------------------
// Expressions

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Int,
    Bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BinOp {
    And,
    Or,
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// A compiled expression; variables are the query and key of the current call frame.
#[derive(Clone, Debug)]
enum Expr {
    Int(i64),
    Bool(bool),
    Q,
    K,
    Neg(Box<Expr>),
    Not(Box<Expr>, Ty),
    Bin(BinOp, Ty, Box<Expr>, Box<Expr>),
    /// A call of mask function `f` with the query and key expressions.
    Call(usize, Box<Expr>, Box<Expr>),
    /// `and_masks`/`or_masks`: every function, combined with `&` (true) or `|` (false).
    Combine(bool, Vec<usize>),
}

impl Expr {
    /// Whether the value depends on neither index: in Python it is then a plain `int`/`bool`,
    /// not a tensor (and `~True` is the integer -2 there).
    fn is_const(&self) -> bool {
        match self {
            Expr::Int(_) | Expr::Bool(_) => true,
            Expr::Q | Expr::K | Expr::Combine(..) => false,
            Expr::Neg(a) | Expr::Not(a, _) => a.is_const(),
            Expr::Bin(_, _, a, b) | Expr::Call(_, a, b) => a.is_const() && b.is_const(),
        }
    }
}

/// A parsed expression before names are resolved (what a `def` body holds).
#[derive(Clone, Debug)]
enum Ast {
    Int(i64),
    Bool(bool),
    Name(String, usize, usize),
    Unary(&'static str, Box<Ast>, usize, usize),
    Bin(&'static str, Box<Ast>, Box<Ast>, usize, usize),
    Call(String, Vec<Ast>, usize, usize),
}

struct Parser<'a> {
    toks: &'a [Token],
    i: usize,
}

const CMP: [&str; 6] = ["<", "<=", ">", ">=", "==", "!="];

impl<'a> Parser<'a> {
    fn new(toks: &'a [Token]) -> Self {
        Parser { toks, i: 0 }
    }
    fn peek(&self) -> Option<&'a Token> {
        self.toks.get(self.i)
    }
    fn peek_op(&self) -> Option<&'static str> {
        match self.peek() {
            Some(Token { tok: Tok::Op(o), .. }) => Some(o),
            _ => None,
        }
    }
    fn where_(&self) -> (usize, usize) {
        match self.peek().or(self.toks.last()) {
            Some(t) => (t.line, t.col),
            None => (0, 0),
        }
    }
    fn refuse(&self, what: impl Into<String>) -> MaskModError {
        let (l, c) = self.where_();
        at(l, c, what)
    }
    fn expect_op(&mut self, op: &str) -> Result<(), MaskModError> {
        if self.peek_op() == Some(op) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.refuse(format!("expected `{op}`, found {}", self.describe())))
        }
    }
    fn describe(&self) -> String {
        match self.peek() {
            None => "the end of the line".into(),
            Some(Token { tok: Tok::Name(n), .. }) => format!("`{n}`"),
            Some(Token { tok: Tok::Int(v), .. }) => format!("`{v}`"),
            Some(Token { tok: Tok::Str, .. }) => "a string".into(),
            Some(Token { tok: Tok::Op(o), .. }) => format!("`{o}`"),
        }
    }
    fn done(&self) -> Result<(), MaskModError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.refuse(format!("unexpected {} after the expression", self.describe()))),
        }
    }

    /// Any expression (refusing `lambda`, `not`, `and`, `or`, `if ... else` with their names).
    fn expr(&mut self) -> Result<Ast, MaskModError> {
        if let Some(Token { tok: Tok::Name(n), .. }) = self.peek()
            && n == "lambda"
        {
            return Err(self.refuse("a lambda inside an expression is not supported (bind it to a name)"));
        }
        let e = self.comparison()?;
        if let Some(Token { tok: Tok::Name(n), .. }) = self.peek() {
            match n.as_str() {
                "and" | "or" => {
                    return Err(self.refuse(format!(
                        "`{n}` is not supported: on tensors Python's `{n}` fails; use `{}`",
                        if n == "and" { "&" } else { "|" }
                    )));
                }
                "if" => return Err(self.refuse("a conditional expression (`x if c else y`) is not supported")),
                "for" => return Err(self.refuse("a comprehension is not supported")),
                _ => {}
            }
        }
        Ok(e)
    }

    fn comparison(&mut self) -> Result<Ast, MaskModError> {
        if let Some(Token { tok: Tok::Name(n), .. }) = self.peek()
            && n == "not"
        {
            return Err(self.refuse("`not` is not supported: on tensors Python's `not` fails; use `~`"));
        }
        let a = self.bitor()?;
        let Some(op) = self.peek_op().filter(|o| CMP.contains(o)) else {
            if let Some(Token { tok: Tok::Name(n), .. }) = self.peek()
                && (n == "in" || n == "is")
            {
                return Err(self.refuse(format!("`{n}` is not supported")));
            }
            return Ok(a);
        };
        let (l, c) = self.where_();
        self.i += 1;
        let b = self.bitor()?;
        if self.peek_op().is_some_and(|o| CMP.contains(&o)) {
            return Err(self.refuse(
                "a chained comparison is not supported: Python turns it into `and`, which fails on tensors; \
                 write (a < b) & (b < c)",
            ));
        }
        Ok(Ast::Bin(op, Box::new(a), Box::new(b), l, c))
    }

    fn left_assoc(
        &mut self,
        ops: &[&'static str],
        next: fn(&mut Self) -> Result<Ast, MaskModError>,
    ) -> Result<Ast, MaskModError> {
        let mut a = next(self)?;
        while let Some(op) = self.peek_op().filter(|o| ops.contains(o)) {
            let (l, c) = self.where_();
            self.i += 1;
            let b = next(self)?;
            a = Ast::Bin(op, Box::new(a), Box::new(b), l, c);
        }
        Ok(a)
    }

    fn bitor(&mut self) -> Result<Ast, MaskModError> {
        self.left_assoc(&["|"], Self::bitxor)
    }
    fn bitxor(&mut self) -> Result<Ast, MaskModError> {
        let a = self.bitand()?;
        if self.peek_op() == Some("^") {
            return Err(self.refuse("`^` is not supported (use (a | b) & ~(a & b))"));
        }
        Ok(a)
    }
    fn bitand(&mut self) -> Result<Ast, MaskModError> {
        self.left_assoc(&["&"], Self::shift)
    }
    fn shift(&mut self) -> Result<Ast, MaskModError> {
        let a = self.sum()?;
        if let Some(op @ ("<<" | ">>")) = self.peek_op() {
            return Err(self.refuse(format!("the shift `{op}` is not supported")));
        }
        Ok(a)
    }
    fn sum(&mut self) -> Result<Ast, MaskModError> {
        self.left_assoc(&["+", "-"], Self::product)
    }
    fn product(&mut self) -> Result<Ast, MaskModError> {
        let a = self.left_assoc(&["*", "//", "%"], Self::unary)?;
        if let Some(op @ ("/" | "@")) = self.peek_op() {
            return Err(self.refuse(format!(
                "`{op}` is not supported{}",
                if op == "/" { " (true division gives floats; use //)" } else { "" }
            )));
        }
        Ok(a)
    }
    fn unary(&mut self) -> Result<Ast, MaskModError> {
        if let Some(op @ ("-" | "+" | "~")) = self.peek_op() {
            let (l, c) = self.where_();
            self.i += 1;
            let e = self.unary()?;
            return Ok(if op == "+" { e } else { Ast::Unary(op, Box::new(e), l, c) });
        }
        let e = self.atom()?;
        if self.peek_op() == Some("**") {
            return Err(self.refuse("`**` is not supported"));
        }
        Ok(e)
    }
    fn atom(&mut self) -> Result<Ast, MaskModError> {
        let Some(t) = self.peek() else { return Err(self.refuse("an expression is missing")) };
        let (l, c) = (t.line, t.col);
        match &t.tok {
            Tok::Int(v) => {
                self.i += 1;
                Ok(Ast::Int(*v))
            }
            Tok::Str => Err(at(l, c, "a string is not supported in an expression")),
            Tok::Op("(") => {
                self.i += 1;
                let e = self.expr()?;
                if self.peek_op() == Some(",") {
                    return Err(self.refuse("a tuple is not supported"));
                }
                self.expect_op(")")?;
                Ok(e)
            }
            Tok::Op(o) => Err(at(l, c, format!("unexpected `{o}`"))),
            Tok::Name(n) => {
                self.i += 1;
                let name = n.clone();
                match name.as_str() {
                    "True" => return Ok(Ast::Bool(true)),
                    "False" => return Ok(Ast::Bool(false)),
                    "None" => return Err(at(l, c, "`None` is not supported")),
                    "lambda" | "not" | "and" | "or" | "if" | "for" | "in" | "is" | "await" | "yield" => {
                        return Err(at(l, c, format!("`{name}` is not supported here")));
                    }
                    _ => {}
                }
                match self.peek_op() {
                    Some(".") => {
                        let mut path = name;
                        while self.peek_op() == Some(".") {
                            self.i += 1;
                            match self.peek() {
                                Some(Token { tok: Tok::Name(m), .. }) => {
                                    path.push('.');
                                    path.push_str(m);
                                    self.i += 1;
                                }
                                _ => return Err(self.refuse("expected a name after `.`")),
                            }
                        }
                        let what = if self.peek_op() == Some("(") {
                            format!(
                                "the call `{path}(...)` is not supported (only the text's own mask functions, and_masks and or_masks)"
                            )
                        } else {
                            format!("the attribute `{path}` is not supported")
                        };
                        Err(at(l, c, what))
                    }
                    Some("[") => Err(at(
                        l,
                        c,
                        format!(
                            "the lookup `{name}[...]` is not supported (a tensor or table lookup has no closed form here)"
                        ),
                    )),
                    Some("(") => {
                        self.i += 1;
                        let mut args = Vec::new();
                        while self.peek_op() != Some(")") {
                            if let Some(Token { tok: Tok::Name(_), .. }) = self.peek()
                                && self.toks.get(self.i + 1).is_some_and(|t| t.tok == Tok::Op("="))
                            {
                                return Err(self.refuse("keyword arguments are not supported"));
                            }
                            args.push(self.expr()?);
                            if self.peek_op() == Some(",") {
                                self.i += 1;
                            } else if self.peek_op() != Some(")") {
                                return Err(self.refuse(format!("expected `,` or `)`, found {}", self.describe())));
                            }
                        }
                        self.i += 1;
                        if self.peek_op() == Some("(") {
                            return Err(self.refuse("calling the result of a call is not supported"));
                        }
                        Ok(Ast::Call(name, args, l, c))
                    }
                    _ => Ok(Ast::Name(name, l, c)),
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Module-level bindings and compilation

#[derive(Clone, Debug)]
enum Binding {
    /// `def name(a, b, c, d):` with its body lines.
    /// `bad`: why the parameter list is not one of plain names (reported only if it is used).
    Def { params: Vec<String>, bad: Option<MaskModError>, body: Vec<Line>, line: usize, col: usize },
    /// `name = lambda a, b, c, d: expr` (the tokens after the colon).
    Lambda { params: Vec<String>, expr: Vec<Token>, line: usize, col: usize },
    /// `name = <tokens>`, read only if used.
    Value { toks: Vec<Token>, line: usize, col: usize },
}

impl Binding {
    fn line(&self) -> usize {
        match self {
            Binding::Def { line, .. } | Binding::Lambda { line, .. } | Binding::Value { line, .. } => *line,
        }
    }
}

/// A compiled mask function: its body over its own query and key.
#[derive(Clone, Debug)]
struct Func {
    name: String,
    body: Expr,
}

/// A `mask_mod` read from Python, ready to evaluate at any size.
#[derive(Clone, Debug)]
pub struct MaskMod {
    funcs: Vec<Func>,
    entry: usize,
    declared_n: Option<i64>,
}

struct Compiler {
    bindings: HashMap<String, Vec<Binding>>,
    funcs: Vec<Func>,
    /// Function index by name, once compiled (`None` while compiling: recursion).
    func_ids: HashMap<String, Option<usize>>,
    constants: HashMap<String, Option<i64>>,
}

/// The parameters of one function body being compiled.
struct Frame<'a> {
    params: &'a [String],
    locals: HashMap<String, (Expr, Ty)>,
}

fn is_main_guard(toks: &[Token]) -> bool {
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

fn first_name(line: &Line) -> Option<&str> {
    match line.toks.first() {
        Some(Token { tok: Tok::Name(n), .. }) => Some(n),
        _ => None,
    }
}

/// Parameter names of `(a, b, c, d)` starting at `toks[i]` = `(`; returns them and the index
/// after `)`.
fn params_of(toks: &[Token], mut i: usize, close: &str) -> Result<(Vec<String>, usize), MaskModError> {
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
type Bindings = (HashMap<String, Vec<Binding>>, Vec<(String, usize)>);

fn collect(lines: &[Line]) -> Result<Bindings, MaskModError> {
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
    fn binding(&self, name: &str, l: usize, c: usize) -> Result<Option<&Binding>, MaskModError> {
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
    fn constant(&mut self, name: &str, l: usize, c: usize) -> Result<i64, MaskModError> {
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
    fn function(&mut self, name: &str, l: usize, c: usize) -> Result<usize, MaskModError> {
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

    fn def_body(&mut self, params: &[String], body: &[Line], line: usize, col: usize) -> Result<Expr, MaskModError> {
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

    fn boolean(&mut self, ast: &Ast, frame: &mut Frame, line: usize, col: usize) -> Result<Expr, MaskModError> {
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

    fn lower(&mut self, ast: &Ast, frame: &mut Frame) -> Result<(Expr, Ty), MaskModError> {
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

fn check_arity(name: &str, params: &[String], line: usize, col: usize) -> Result<(), MaskModError> {
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

// ---------------------------------------------------------------------------------------------
// Evaluation

#[derive(Clone, Copy, Debug, PartialEq)]
enum Val {
    I(i64),
    B(bool),
}

const MAX_CALL_DEPTH: usize = 64;

fn eval(e: &Expr, funcs: &[Func], q: i64, k: i64, depth: usize) -> Result<Val, String> {
    let int = |v: Val| match v {
        Val::I(x) => x,
        Val::B(b) => i64::from(b),
    };
    let boolean = |v: Val| matches!(v, Val::B(true));
    Ok(match e {
        Expr::Int(v) => Val::I(*v),
        Expr::Bool(b) => Val::B(*b),
        Expr::Q => Val::I(q),
        Expr::K => Val::I(k),
        Expr::Neg(a) => Val::I(int(eval(a, funcs, q, k, depth)?).checked_neg().ok_or("integer overflow")?),
        Expr::Not(a, Ty::Bool) => Val::B(!boolean(eval(a, funcs, q, k, depth)?)),
        Expr::Not(a, Ty::Int) => Val::I(!int(eval(a, funcs, q, k, depth)?)),
        Expr::Bin(op, ty, a, b) => {
            let x = eval(a, funcs, q, k, depth)?;
            let y = eval(b, funcs, q, k, depth)?;
            if *ty == Ty::Bool {
                let (x, y) = (boolean(x), boolean(y));
                return Ok(Val::B(match op {
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    BinOp::Eq => x == y,
                    _ => x != y,
                }));
            }
            let (x, y) = (int(x), int(y));
            let overflow = || "integer overflow".to_string();
            match op {
                BinOp::And => Val::I(x & y),
                BinOp::Or => Val::I(x | y),
                BinOp::Add => Val::I(x.checked_add(y).ok_or_else(overflow)?),
                BinOp::Sub => Val::I(x.checked_sub(y).ok_or_else(overflow)?),
                BinOp::Mul => Val::I(x.checked_mul(y).ok_or_else(overflow)?),
                BinOp::FloorDiv | BinOp::Mod => {
                    if y == 0 {
                        return Err("integer division by zero".into());
                    }
                    let d = x.checked_div(y).ok_or_else(overflow)?;
                    let r = x.checked_rem(y).ok_or_else(overflow)?;
                    let adjust = r != 0 && ((r < 0) != (y < 0));
                    if *op == BinOp::FloorDiv {
                        Val::I(if adjust { d - 1 } else { d })
                    } else {
                        Val::I(if adjust { r + y } else { r })
                    }
                }
                BinOp::Lt => Val::B(x < y),
                BinOp::Le => Val::B(x <= y),
                BinOp::Gt => Val::B(x > y),
                BinOp::Ge => Val::B(x >= y),
                BinOp::Eq => Val::B(x == y),
                BinOp::Ne => Val::B(x != y),
            }
        }
        Expr::Call(f, a, b) => {
            if depth >= MAX_CALL_DEPTH {
                return Err("mask functions call each other too deeply".into());
            }
            let qa = int(eval(a, funcs, q, k, depth)?);
            let kb = int(eval(b, funcs, q, k, depth)?);
            eval(&funcs[*f].body, funcs, qa, kb, depth + 1)?
        }
        Expr::Combine(conj, fs) => {
            let mut acc = *conj;
            for f in fs {
                if depth >= MAX_CALL_DEPTH {
                    return Err("mask functions call each other too deeply".into());
                }
                let v = boolean(eval(&funcs[*f].body, funcs, q, k, depth + 1)?);
                acc = if *conj { acc & v } else { acc | v };
            }
            Val::B(acc)
        }
    })
}

impl MaskMod {
    /// Parses Python text into a `mask_mod`.
    ///
    /// # Errors
    /// [`MaskModError::At`] naming the refused construct and its line and column, or
    /// [`MaskModError::Text`] for the text as a whole (no mask function, too large).
    ///
    /// # Examples
    /// ```
    /// use hasseflow_core::interop::mask_mod::MaskMod;
    /// let m = MaskMod::parse("W = 3\ndef sliding(b, h, q, kv):\n    return (kv <= q) & (q - kv < W)\n").unwrap();
    /// assert_eq!(m.to_mask(4).unwrap().to_row_strings(), ["1...", "11..", "111.", ".111"]);
    /// assert!(MaskMod::parse("def f(b, h, q, k):\n    return MASK[q, k]\n").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<MaskMod, MaskModError> {
        if text.len() > MAX_INPUT_BYTES {
            return Err(MaskModError::Text(format!(
                "the text is {} bytes, over the limit of {MAX_INPUT_BYTES}",
                text.len()
            )));
        }
        let lines = lex(text)?;
        let (bindings, order) = collect(&lines)?;
        let mut c = Compiler { bindings, funcs: Vec::new(), func_ids: HashMap::new(), constants: HashMap::new() };
        let entry_name = if c.bindings.contains_key("mask_mod") {
            "mask_mod".to_string()
        } else {
            order
                .iter()
                .rev()
                .find(|(name, _)| {
                    c.bindings.get(name).and_then(|b| b.last()).is_some_and(|b| match b {
                        Binding::Def { params, .. } | Binding::Lambda { params, .. } => params.len() == 4,
                        Binding::Value { .. } => true,
                    })
                })
                .map(|(name, _)| name.clone())
                .ok_or_else(|| match order.last().and_then(|(name, _)| Some((name, c.bindings.get(name)?.last()?))) {
                    Some((name, Binding::Def { body, line, col, .. }))
                        if body.iter().any(|l| first_name(l) == Some("def")) =>
                    {
                        at(*line, *col, format!(
                            "`{name}` builds a mask function inside a function (a factory): write its parameters as \
                             module constants and define mask_mod(b, h, q_idx, kv_idx) at module level"
                        ))
                    }
                    Some((name, Binding::Def { params, line, col, .. } | Binding::Lambda { params, line, col, .. })) => {
                        check_arity(name, params, *line, *col).err().unwrap_or(MaskModError::Text(String::new()))
                    }
                    _ => MaskModError::Text("no mask function found: define mask_mod(b, h, q_idx, kv_idx)".into()),
                })?
        };
        let (l, col) = c.bindings[&entry_name].last().map_or((1, 1), |b| match b {
            Binding::Def { line, col, .. } | Binding::Lambda { line, col, .. } | Binding::Value { line, col, .. } => {
                (*line, *col)
            }
        });
        let entry = c.function(&entry_name, l, col)?;
        let declared_n = match c.bindings.get("N") {
            Some(v) if matches!(v.as_slice(), [Binding::Value { .. }]) => c.constant("N", l, col).ok(),
            _ => None,
        };
        Ok(MaskMod { funcs: c.funcs, entry, declared_n })
    }

    /// The name of the function taken.
    pub fn name(&self) -> &str {
        &self.funcs[self.entry].name
    }

    /// The size the text declares (`N = <int>`), if any.
    pub fn declared_n(&self) -> Option<usize> {
        self.declared_n.and_then(|n| usize::try_from(n).ok())
    }

    /// Evaluates the function at one cell.
    ///
    /// # Errors
    /// [`MaskModError::Cell`] on division by zero or integer overflow.
    pub fn eval(&self, q: usize, k: usize) -> Result<bool, MaskModError> {
        let cell = |what: String| MaskModError::Cell { q, k, what };
        match eval(&self.funcs[self.entry].body, &self.funcs, q as i64, k as i64, 0).map_err(cell)? {
            Val::B(b) => Ok(b),
            Val::I(_) => Err(MaskModError::Cell { q, k, what: "the function returned an integer".into() }),
        }
    }

    /// The `n x n` mask: cell `(q, k)` is the function's value at `q_idx = q`, `kv_idx = k`.
    ///
    /// # Errors
    /// [`MaskModError::Size`] outside `1..=MAX_N`; [`MaskModError::Cell`] where evaluation fails.
    pub fn to_mask(&self, n: usize) -> Result<BitMatrix, MaskModError> {
        if n == 0 || n > MAX_N {
            return Err(MaskModError::Size(n));
        }
        let mut m = BitMatrix::zeros(n);
        for q in 0..n {
            for k in 0..n {
                if self.eval(q, k)? {
                    m.set(q, k, true);
                }
            }
        }
        Ok(m)
    }

    /// The mask at `n`, else at the declared `N`.
    ///
    /// # Errors
    /// [`MaskModError::NeedsSize`] when neither is known, and those of [`MaskMod::to_mask`].
    pub fn to_mask_sized(&self, n: Option<usize>) -> Result<BitMatrix, MaskModError> {
        let n = n.or(self.declared_n()).ok_or(MaskModError::NeedsSize)?;
        self.to_mask(n)
    }
}

impl fmt::Display for MaskMod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mask_mod `{}`", self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(text: &str, n: usize) -> Vec<String> {
        MaskMod::parse(text).unwrap_or_else(|e| panic!("{text}: {e}")).to_mask(n).unwrap().to_row_strings()
    }

    fn refused(text: &str) -> String {
        match MaskMod::parse(text) {
            Ok(m) => panic!("accepted {text:?} as {m}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn common_shapes() {
        let causal = ["1...", "11..", "111.", "1111"];
        assert_eq!(mask("def causal(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n", 4), causal);
        assert_eq!(mask("causal = lambda b, h, q, k: q >= k\n", 4), causal);
        assert_eq!(mask("def f(b, h, q, k): return q >= k", 4), causal);
        assert_eq!(
            mask(
                "import torch\nfrom torch.nn.attention.flex_attention import and_masks\n\nWINDOW = 2\n\n\
                 def causal(b, h, q_idx, kv_idx):\n    \"\"\"Causal.\"\"\"\n    return q_idx >= kv_idx\n\n\
                 def window(b, h, q_idx, kv_idx):\n    diff = q_idx - kv_idx\n    return diff < WINDOW\n\n\
                 mask_mod = and_masks(causal, window)\n\nif __name__ == \"__main__\":\n    print(torch.zeros(3))\n",
                4
            ),
            ["1...", "11..", ".11.", "..11"]
        );
        assert_eq!(
            mask("a = lambda b, h, q, k: q == k\nc = lambda b, h, q, k: k == 0\nm = or_masks(a, c)\n", 3),
            ["1..", "11.", "1.1"]
        );
        assert_eq!(
            mask("def f(b,h,q,k):\n    return (\n        (q // 2 == k // 2)\n        | (k == 0)\n    )\n", 4),
            ["11..", "11..", "1.11", "1.11"]
        );
        // Calls of the text's own functions, with shifted arguments.
        assert_eq!(
            mask("def c(b,h,q,k): return k <= q\ndef mask_mod(b,h,q,k): return c(b,h,q-1,k) & c(b,h,k+1,q)\n", 3),
            ["...", "1..", ".1."]
        );
        assert_eq!(mask("m = and_masks()\n", 2), ["11", "11"]);
        assert_eq!(mask("m = or_masks()\n", 2), ["..", ".."]);
    }

    #[test]
    fn python_floor_semantics() {
        let m = MaskMod::parse("def f(b,h,q,k): return ((q - k) // 3 == -1) & ((q - k) % 3 == 2)").unwrap();
        assert!(m.eval(0, 1).unwrap());
        assert!(!m.eval(0, 3).unwrap());
        let m = MaskMod::parse("def f(b,h,q,k): return (q & 1) == (~k & 1)").unwrap();
        assert!(m.eval(1, 0).unwrap() && !m.eval(1, 1).unwrap());
    }

    #[test]
    fn picks_mask_mod_else_the_last_function() {
        let m = MaskMod::parse(
            "def a(b,h,q,k): return q == k\ndef mask_mod(b,h,q,k): return q >= k\ndef z(b,h,q,k): return k == 0",
        )
        .unwrap();
        assert_eq!(m.name(), "mask_mod");
        let m = MaskMod::parse(
            "def a(b,h,q,k): return q == k\ndef z(b,h,q,k): return k == 0\ndef helper(device):\n    return 1\n",
        )
        .unwrap();
        assert_eq!(m.name(), "z");
        let m = MaskMod::parse("N = 5\nmask_mod = lambda b, h, q, k: q >= k").unwrap();
        assert_eq!(m.declared_n(), Some(5));
        assert_eq!(m.to_mask_sized(None).unwrap().n(), 5);
        assert_eq!(m.to_mask_sized(Some(3)).unwrap().n(), 3);
        let m = MaskMod::parse("mask_mod = lambda b, h, q, k: q >= k").unwrap();
        assert_eq!(m.to_mask_sized(None).unwrap_err(), MaskModError::NeedsSize);
    }

    #[test]
    fn refusals_name_the_construct_and_place() {
        let e = refused("MASK = 1\ndef f(b, h, q, k):\n    return MASK[q, k]\n");
        assert!(e.starts_with("line 3, column 12:") && e.contains("lookup `MASK[...]`"), "{e}");
        let e = refused("import torch\ndef f(b, h, q, k):\n    return torch.where(q > k, True, False)\n");
        assert!(e.starts_with("line 3, column 12:") && e.contains("call `torch.where(...)`"), "{e}");
        assert!(refused("def f(b,h,q,k): return (q > k) and (k > 0)").contains("`and` is not supported"));
        assert!(refused("def f(b,h,q,k): return not (q > k)").contains("`not`"));
        assert!(refused("def f(b,h,q,k): return 0 <= k < q").contains("chained comparison"));
        assert!(refused("def f(b,h,q,k): return k <= q & (q < 3)").contains("mixes a boolean and an integer"));
        assert!(refused("def f(b,h,q,k): return q - k").contains("returns an integer"));
        assert!(refused("def f(b,h,q,k): return h == 0").contains("head argument `h`"));
        assert!(refused("def f(b,h,q,k):\n    if q > k:\n        return True\n    return False\n").contains("`if`"));
        assert!(refused("for i in range(3):\n    pass\ndef f(b,h,q,k): return q >= k").contains("`for` loop"));
        assert!(refused("def f(b,h,q): return q >= 0").contains("takes 3 arguments"));
        assert!(refused("def f(b,h,q,k): return q >= W").contains("`W` is not defined"));
        assert!(refused("W = 2\nW = 3\ndef f(b,h,q,k): return q - k < W").contains("bound more than once"));
        assert!(refused("def f(b,h,q,k): return f(b,h,q,k)").contains("recursion"));
        assert!(refused("def f(b,h,q,k): return (q / 2) >= k").contains("true division"));
        assert!(refused("def f(b,h,q,k): return q >= len(k)").contains("call `len(...)`"));
        assert!(refused("def f(b,h,q,k): return q >= k if q else k").contains("conditional"));
        assert!(
            refused(
                "def outer(w):\n    def inner(b,h,q,k):\n        return q - k < w\n    return inner\nm = outer(3)\n"
            )
            .contains("factory")
        );
        assert!(refused("x = 1\n").contains("no mask function"));
        assert!(refused("m = lambda b, h, q, k: True").contains("depends on neither"));
        assert!(refused("def f(b,h,q,k): return ~(1 < 2) & (q >= k)").contains("constant boolean"));
        assert!(refused("def f(b,h,q,k): return (q >= k").contains("unbalanced"));
        assert!(refused("W = 99999999999999999999\n").contains("64 bits"));
        let e = MaskMod::parse("def f(b,h,q,k): return (q // (k - 1)) >= 0").unwrap().to_mask(3).unwrap_err();
        assert_eq!(e.to_string(), "at q_idx = 0, kv_idx = 1: integer division by zero");
    }

    #[test]
    fn detection() {
        assert!(is_mask_mod(b"# a mask\ndef f(b,h,q,k): return q >= k\n"));
        assert!(is_mask_mod(b"m = lambda b, h, q, k: q >= k"));
        assert!(!is_mask_mod(b"{\"format\": \"def \"}"));
        assert!(!is_mask_mod(b"1.\n11\n"));
        assert!(!is_mask_mod(&[0x93, b'N', b'U', b'M', b'P', b'Y']));
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut rng = crate::rng::SplitMix64::new(7);
        let alphabet = b"def lambda(b,h,q,k):return&|~=<>!+-*/%0123 \n\t#\"'[].xNW_";
        for _ in 0..3000 {
            let len = (rng.next_u64() % 80) as usize;
            let text: String =
                (0..len).map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize] as char).collect();
            if let Ok(m) = MaskMod::parse(&text) {
                let _ = m.to_mask(4);
            }
        }
    }
}

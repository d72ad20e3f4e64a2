//! Expressions: types, the compiled form and the parser.

use super::lex::{Tok, Token};
use super::{MaskModError, at};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    Int,
    Bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BinOp {
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
pub(super) enum Expr {
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
    pub(super) fn is_const(&self) -> bool {
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
pub(super) enum Ast {
    Int(i64),
    Bool(bool),
    Name(String, usize, usize),
    Unary(&'static str, Box<Ast>, usize, usize),
    Bin(&'static str, Box<Ast>, Box<Ast>, usize, usize),
    Call(String, Vec<Ast>, usize, usize),
}

pub(super) struct Parser<'a> {
    pub(super) toks: &'a [Token],
    pub(super) i: usize,
}

pub(super) const CMP: [&str; 6] = ["<", "<=", ">", ">=", "==", "!="];

impl<'a> Parser<'a> {
    pub(super) fn new(toks: &'a [Token]) -> Self {
        Parser { toks, i: 0 }
    }
    pub(super) fn peek(&self) -> Option<&'a Token> {
        self.toks.get(self.i)
    }
    pub(super) fn peek_op(&self) -> Option<&'static str> {
        match self.peek() {
            Some(Token { tok: Tok::Op(o), .. }) => Some(o),
            _ => None,
        }
    }
    pub(super) fn where_(&self) -> (usize, usize) {
        match self.peek().or(self.toks.last()) {
            Some(t) => (t.line, t.col),
            None => (0, 0),
        }
    }
    pub(super) fn refuse(&self, what: impl Into<String>) -> MaskModError {
        let (l, c) = self.where_();
        at(l, c, what)
    }
    pub(super) fn expect_op(&mut self, op: &str) -> Result<(), MaskModError> {
        if self.peek_op() == Some(op) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.refuse(format!("expected `{op}`, found {}", self.describe())))
        }
    }
    pub(super) fn describe(&self) -> String {
        match self.peek() {
            None => "the end of the line".into(),
            Some(Token { tok: Tok::Name(n), .. }) => format!("`{n}`"),
            Some(Token { tok: Tok::Int(v), .. }) => format!("`{v}`"),
            Some(Token { tok: Tok::Str, .. }) => "a string".into(),
            Some(Token { tok: Tok::Op(o), .. }) => format!("`{o}`"),
        }
    }
    pub(super) fn done(&self) -> Result<(), MaskModError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.refuse(format!("unexpected {} after the expression", self.describe()))),
        }
    }

    /// Any expression (refusing `lambda`, `not`, `and`, `or`, `if ... else` with their names).
    pub(super) fn expr(&mut self) -> Result<Ast, MaskModError> {
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

    pub(super) fn comparison(&mut self) -> Result<Ast, MaskModError> {
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

    pub(super) fn left_assoc(
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

    pub(super) fn bitor(&mut self) -> Result<Ast, MaskModError> {
        self.left_assoc(&["|"], Self::bitxor)
    }
    pub(super) fn bitxor(&mut self) -> Result<Ast, MaskModError> {
        let a = self.bitand()?;
        if self.peek_op() == Some("^") {
            return Err(self.refuse("`^` is not supported (use (a | b) & ~(a & b))"));
        }
        Ok(a)
    }
    pub(super) fn bitand(&mut self) -> Result<Ast, MaskModError> {
        self.left_assoc(&["&"], Self::shift)
    }
    pub(super) fn shift(&mut self) -> Result<Ast, MaskModError> {
        let a = self.sum()?;
        if let Some(op @ ("<<" | ">>")) = self.peek_op() {
            return Err(self.refuse(format!("the shift `{op}` is not supported")));
        }
        Ok(a)
    }
    pub(super) fn sum(&mut self) -> Result<Ast, MaskModError> {
        self.left_assoc(&["+", "-"], Self::product)
    }
    pub(super) fn product(&mut self) -> Result<Ast, MaskModError> {
        let a = self.left_assoc(&["*", "//", "%"], Self::unary)?;
        if let Some(op @ ("/" | "@")) = self.peek_op() {
            return Err(self.refuse(format!(
                "`{op}` is not supported{}",
                if op == "/" { " (true division gives floats; use //)" } else { "" }
            )));
        }
        Ok(a)
    }
    pub(super) fn unary(&mut self) -> Result<Ast, MaskModError> {
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
    pub(super) fn atom(&mut self) -> Result<Ast, MaskModError> {
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

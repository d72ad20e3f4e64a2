//! The syntax tree of the Python subset the interpreter runs.

use std::rc::Rc;

/// A place in the text (1-based).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Pos {
    pub(super) line: u32,
    pub(super) col: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMul,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl BinOp {
    pub(super) fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::MatMul => "@",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        }
    }
    pub(super) fn from_symbol(s: &str) -> Option<BinOp> {
        Some(match s {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "//" => BinOp::FloorDiv,
            "%" => BinOp::Mod,
            "**" => BinOp::Pow,
            "@" => BinOp::MatMul,
            "&" => BinOp::BitAnd,
            "|" => BinOp::BitOr,
            "^" => BinOp::BitXor,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    In,
    NotIn,
    Is,
    IsNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum UnOp {
    Neg,
    Pos,
    Invert,
    Not,
}

#[derive(Clone, Debug)]
pub(super) enum Arg {
    Pos(Expr),
    Star(Expr),
    Kw(Rc<str>, Expr),
    StarStar(Expr),
}

#[derive(Clone, Debug)]
pub(super) struct Comp {
    pub(super) target: Expr,
    pub(super) iter: Expr,
    pub(super) conds: Vec<Expr>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CompKind {
    List,
    Set,
    Gen,
}

#[derive(Clone, Debug)]
pub(super) enum ExprKind {
    Name(Rc<str>),
    Int(i64),
    BigInt(usize),
    Float(f64),
    Str(Rc<str>),
    FStr,
    None,
    Bool(bool),
    Ellipsis,
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    Set(Vec<Expr>),
    Dict(Vec<(Option<Expr>, Expr)>),
    Comp(CompKind, Box<Expr>, Vec<Comp>),
    DictComp(Box<(Expr, Expr)>, Vec<Comp>),
    Attr(Box<Expr>, Rc<str>),
    Subscript(Box<Expr>, Box<Expr>),
    Slice(Option<Box<Expr>>, Option<Box<Expr>>, Option<Box<Expr>>),
    Call(Box<Expr>, Vec<Arg>),
    Unary(UnOp, Box<Expr>),
    /// A left-associative chain at one precedence level: `a + b - c`.
    Chain(Box<Expr>, Vec<(BinOp, Expr)>),
    /// `a ** b` (right-associative).
    Pow(Box<Expr>, Box<Expr>),
    /// `and` (true) / `or` (false) over two or more operands.
    BoolOp(bool, Vec<Expr>),
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    IfExp(Box<[Expr; 3]>),
    Lambda(Rc<FuncDef>),
    Starred(Box<Expr>),
    Walrus(Rc<str>, Box<Expr>),
}

#[derive(Clone, Debug)]
pub(super) struct Expr {
    pub(super) kind: ExprKind,
    pub(super) pos: Pos,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ParamKind {
    Normal,
    VarArgs,
    KwOnly,
    VarKw,
}

#[derive(Clone, Debug)]
pub(super) struct Param {
    pub(super) name: Rc<str>,
    pub(super) default: Option<Expr>,
    pub(super) annotation: Option<Expr>,
    pub(super) kind: ParamKind,
}

#[derive(Clone, Debug)]
pub(super) struct FuncDef {
    pub(super) name: Rc<str>,
    pub(super) params: Vec<Param>,
    /// The return annotation (`-> T`).
    pub(super) returns: Option<Expr>,
    pub(super) body: Vec<Stmt>,
    /// Names assigned in the body (its locals), `global`/`nonlocal` ones excluded.
    pub(super) locals: Vec<Rc<str>>,
    pub(super) globals: Vec<Rc<str>>,
    pub(super) nonlocals: Vec<Rc<str>>,
}

/// A class statement.
#[derive(Clone, Debug)]
pub(super) struct ClassDef {
    pub(super) name: Rc<str>,
    pub(super) bases: Vec<Expr>,
    pub(super) body: Vec<Stmt>,
    pub(super) decorators: Vec<Expr>,
}

#[derive(Clone, Debug)]
pub(super) enum StmtKind {
    Expr(Expr),
    Assign(Vec<Expr>, Expr),
    AugAssign(Expr, BinOp, Expr),
    /// `target: annotation [= value]`.
    AnnAssign(Expr, Expr, Option<Expr>),
    If(Vec<(Expr, Vec<Stmt>)>, Vec<Stmt>),
    For(Expr, Expr, Vec<Stmt>, Vec<Stmt>),
    While(Expr, Vec<Stmt>, Vec<Stmt>),
    Break,
    Continue,
    Pass,
    Def(Rc<FuncDef>, Vec<Expr>),
    Return(Option<Expr>),
    /// `import a.b as c`: (module path, bound name, whether `as` was given).
    Import(Vec<(Rc<str>, Rc<str>, bool)>),
    /// `from m import a as b` (`*`: empty list).
    ImportFrom(Rc<str>, Vec<(Rc<str>, Rc<str>)>),
    Assert(Expr, Option<Expr>),
    Global(Vec<Rc<str>>),
    Nonlocal(Vec<Rc<str>>),
    Del(Vec<Expr>),
    Raise(Option<Expr>),
    /// `try:` with its body, handlers, `else` and `finally`.
    Try(Vec<Stmt>, Vec<Handler>, Vec<Stmt>, Vec<Stmt>),
    /// `with ... as names:` body.
    With(Vec<Expr>, Vec<Rc<str>>, Vec<Stmt>),
    /// `class Name(bases): body`, with its decorators.
    Class(Rc<ClassDef>),
    /// A statement the interpreter does not run (a class, `match`, `async`), with the names it
    /// would bind.
    Unsupported(&'static str, Vec<Rc<str>>),
}

/// An `except` clause: its type (none for a bare `except:`), its `as` name, and its body.
#[derive(Clone, Debug)]
pub(super) struct Handler {
    pub(super) typ: Option<Expr>,
    pub(super) name: Option<Rc<str>>,
    pub(super) body: Vec<Stmt>,
    /// `except*` (exception groups).
    pub(super) star: bool,
    pub(super) pos: Pos,
}

#[derive(Clone, Debug)]
pub(super) struct Stmt {
    pub(super) kind: StmtKind,
    pub(super) pos: Pos,
}

//! The traced mask: the operations a `mask_mod` applies to its four index arguments, recorded once
//! (as torch's `vmap` runs the function once over batched indices), then evaluated over any
//! `(b, h, q, kv)`:
//! - **exactly per cell**, in columns of keys;
//! - **per query row, by interval analysis**: an abstract value (an interval per node, and whether
//!   any cell of the range could raise) decides whole key ranges at once; a range it cannot decide
//!   is halved, down to columns evaluated cell by cell. Every operation's interval rule is sound,
//!   so the rows are exact; a row of a document or window mask costs `O(boundaries · log n)`.
//!
//! Like torch, every recorded operation is evaluated at every cell, including both branches of a
//! `where`: a division by zero or an out-of-range lookup anywhere is an error, as `create_mask`
//! raises one.

use std::rc::Rc;

use super::ast::Pos;
use super::tensor::{Bin, Cmp, DType, Sc, Tensor, Un, apply_bin, apply_cmp, apply_un, cast, floor_div_i};

/// Most operations one traced mask may record.
pub(super) const MAX_NODES: usize = 200_000;
/// Ranges of at most this many keys are evaluated cell by cell.
const LEAF: usize = 32;

/// A lookup table a traced mask reads, with a min/max segment tree for 1-d tables.
#[derive(Debug)]
pub(super) struct Table {
    pub(super) t: Tensor,
    strides: Vec<usize>,
    /// `(min, max)` per segment-tree node (1-d tables only), leaves at `size..2·size`.
    seg: Vec<(Sc, Sc)>,
    size: usize,
}

fn sc_lt(a: Sc, b: Sc) -> bool {
    match (a, b) {
        (Sc::I(x), Sc::I(y)) => x < y,
        _ => a.as_f64() < b.as_f64(),
    }
}

impl Table {
    pub(super) fn new(t: Tensor) -> Table {
        let strides = t.strides();
        let (seg, size) = if t.shape.len() == 1 && !t.data.is_empty() && !t.dtype.is_float() {
            let size = t.data.len().next_power_of_two();
            let mut seg = vec![(Sc::I(i64::MAX), Sc::I(i64::MIN)); 2 * size];
            for (i, &v) in t.data.iter().enumerate() {
                seg[size + i] = (v, v);
            }
            for i in (1..size).rev() {
                let (a, b) = (seg[2 * i], seg[2 * i + 1]);
                seg[i] = (if sc_lt(b.0, a.0) { b.0 } else { a.0 }, if sc_lt(a.1, b.1) { b.1 } else { a.1 });
            }
            (seg, size)
        } else {
            (Vec::new(), 0)
        };
        Table { t, strides, seg, size }
    }
    fn range_1d(&self, lo: usize, hi: usize) -> Option<(i64, i64)> {
        if self.seg.is_empty() {
            return None;
        }
        let (mut l, mut r) = (lo + self.size, hi + self.size + 1);
        let (mut mn, mut mx) = (i64::MAX, i64::MIN);
        while l < r {
            if l & 1 == 1 {
                mn = mn.min(self.seg[l].0.as_i64());
                mx = mx.max(self.seg[l].1.as_i64());
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                mn = mn.min(self.seg[r].0.as_i64());
                mx = mx.max(self.seg[r].1.as_i64());
            }
            l >>= 1;
            r >>= 1;
        }
        Some((mn, mx))
    }
}

/// One recorded operation; operands are earlier nodes, already of the dtype the operation computes in.
#[derive(Clone, Debug)]
pub(super) enum Op {
    /// `b`, `h`, `q_idx`, `kv_idx`.
    Arg(usize),
    Const(Sc),
    Cast(usize),
    Un(Un, usize),
    Bin(Bin, usize, usize),
    Cmp(Cmp, usize, usize),
    Where(usize, usize, usize),
    /// `table[i0, i1, ...]`, one index node per dimension.
    Gather(Rc<Table>, Vec<usize>),
    /// `torch.searchsorted(table, x, right=...)` over a sorted 1-d table.
    Search(Rc<Table>, bool, usize),
}

#[derive(Clone, Debug)]
pub(super) struct Node {
    pub(super) op: Op,
    pub(super) dtype: DType,
    /// Where the text made it (for errors found when evaluating).
    pub(super) pos: Pos,
}

/// The recorded operations, in the order they ran (so operands always come first).
#[derive(Clone, Debug, Default)]
pub(super) struct Graph {
    pub(super) nodes: Vec<Node>,
}

impl Graph {
    pub(super) fn new() -> Graph {
        let mut g = Graph { nodes: Vec::new() };
        for i in 0..4 {
            g.nodes.push(Node { op: Op::Arg(i), dtype: DType::I64, pos: Pos::default() });
        }
        g
    }
    pub(super) fn push(&mut self, op: Op, dtype: DType, pos: Pos) -> Result<usize, String> {
        if self.nodes.len() >= MAX_NODES {
            return Err(format!("the mask records over {MAX_NODES} tensor operations"));
        }
        self.nodes.push(Node { op, dtype, pos });
        Ok(self.nodes.len() - 1)
    }
    /// Which of `b`, `h`, `q_idx`, `kv_idx` each node depends on (bit i for argument i).
    pub(super) fn deps(&self) -> Vec<u8> {
        let mut d = vec![0u8; self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            d[i] = match &n.op {
                Op::Arg(a) => 1 << a,
                Op::Const(_) => 0,
                Op::Cast(a) | Op::Un(_, a) | Op::Search(_, _, a) => d[*a],
                Op::Bin(_, a, b) | Op::Cmp(_, a, b) => d[*a] | d[*b],
                Op::Where(c, a, b) => d[*c] | d[*a] | d[*b],
                Op::Gather(_, idx) => idx.iter().fold(0, |acc, &j| acc | d[j]),
            };
        }
        d
    }
}

fn gather(t: &Table, idx: &[Sc]) -> Result<Sc, &'static str> {
    let mut flat = 0usize;
    for (d, i) in idx.iter().enumerate() {
        let len = t.t.shape[d] as i64;
        let mut i = i.as_i64();
        if i < 0 {
            i += len;
        }
        if i < 0 || i >= len {
            return Err("index out of range in a tensor lookup (IndexError)");
        }
        flat += i as usize * t.strides[d];
    }
    Ok(t.t.data[flat])
}

fn search(t: &Table, right: bool, x: Sc) -> Sc {
    let data = &t.t.data;
    let (mut lo, mut hi) = (0usize, data.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        let go_right = if right { !sc_lt(x, data[mid]) } else { sc_lt(data[mid], x) };
        if go_right {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Sc::I(lo as i64)
}

/// Evaluates one node from its operands' values.
fn eval_node(node: &Node, vals: &[Sc], args: [i64; 4], g: &[Node]) -> Result<Sc, &'static str> {
    Ok(match &node.op {
        Op::Arg(a) => Sc::I(args[*a]),
        Op::Const(v) => *v,
        Op::Cast(a) => cast(vals[*a], node.dtype),
        Op::Un(op, a) => apply_un(*op, node.dtype, vals[*a]),
        Op::Bin(op, a, b) => apply_bin(*op, g[*a].dtype, vals[*a], vals[*b])?,
        Op::Cmp(op, a, b) => Sc::I(i64::from(apply_cmp(*op, vals[*a], vals[*b]))),
        Op::Where(c, a, b) => {
            if vals[*c].truthy() {
                vals[*a]
            } else {
                vals[*b]
            }
        }
        Op::Gather(t, idx) => {
            let mut ix = [Sc::I(0); 8];
            for (k, &j) in idx.iter().enumerate() {
                ix[k] = vals[j];
            }
            gather(t, &ix[..idx.len()])?
        }
        Op::Search(t, right, x) => search(t, *right, vals[*x]),
    })
}

/// An abstract value over a range of keys: an interval, or nothing known; `err` when some cell of
/// the range could raise.
#[derive(Clone, Copy, Debug)]
struct Av {
    v: Abs,
    err: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Abs {
    I(i64, i64),
    F(f64, f64),
    Top,
}

fn of(v: Sc) -> Abs {
    match v {
        Sc::I(x) => Abs::I(x, x),
        Sc::F(x) if x.is_nan() => Abs::Top,
        Sc::F(x) => Abs::F(x, x),
    }
}

fn fits(dt: DType, lo: i128, hi: i128) -> Abs {
    let (mn, mx) = dt.int_range();
    if lo >= mn.into() && hi <= mx.into() { Abs::I(lo as i64, hi as i64) } else { Abs::Top }
}

fn fl(dt: DType, lo: f64, hi: f64) -> Abs {
    let (lo, hi) = (dt.round(lo), dt.round(hi));
    if lo.is_nan() || hi.is_nan() { Abs::Top } else { Abs::F(lo, hi) }
}

fn bounds_f(a: Abs) -> Option<(f64, f64)> {
    match a {
        Abs::I(l, h) => Some((l as f64, h as f64)),
        Abs::F(l, h) => Some((l, h)),
        Abs::Top => None,
    }
}

fn abs_bin(op: Bin, dt: DType, out: DType, a: Abs, b: Abs) -> Av {
    // Singletons: exact.
    if let (Some(x), Some(y)) = (single(a), single(b)) {
        return match apply_bin(op, dt, x, y) {
            Ok(v) => Av { v: of(v), err: false },
            Err(_) => Av { v: Abs::Top, err: true },
        };
    }
    let int_div_err = |b: Abs| !dt.is_float() && !matches!(b, Abs::I(l, h) if l > 0 || h < 0);
    let err = matches!(op, Bin::FloorDiv | Bin::TruncDiv | Bin::Rem | Bin::Fmod) && int_div_err(b);
    let v = match (a, b) {
        (Abs::I(al, ah), Abs::I(bl, bh)) if !dt.is_float() => {
            let (al, ah, bl, bh) = (al as i128, ah as i128, bl as i128, bh as i128);
            match op {
                Bin::Add if dt.is_bool() => Abs::I((al | bl).min(1) as i64, (ah | bh).min(1) as i64),
                Bin::Add => fits(dt, al + bl, ah + bh),
                Bin::Sub => fits(dt, al - bh, ah - bl),
                Bin::Mul => {
                    let c = [al * bl, al * bh, ah * bl, ah * bh];
                    fits(dt, *c.iter().min().unwrap_or(&0), *c.iter().max().unwrap_or(&0))
                }
                // `INT64_MIN // -1` wraps, so the quotients of a range holding it are not a range.
                Bin::FloorDiv if bl == bh && bl != 0 && !(bl == -1 && al == i64::MIN as i128) => {
                    let d = bl as i64;
                    let (x, y) = (floor_div_i(al as i64, d), floor_div_i(ah as i64, d));
                    Abs::I(x.min(y), x.max(y))
                }
                Bin::Rem if bl == bh && bl > 0 => {
                    let d = bl as i64;
                    if floor_div_i(al as i64, d) == floor_div_i(ah as i64, d) {
                        Abs::I((al as i64).rem_euclid(d), (ah as i64).rem_euclid(d))
                    } else {
                        Abs::I(0, d - 1)
                    }
                }
                Bin::Fmod if bl == bh && bl > 0 && al >= 0 => {
                    let d = bl as i64;
                    if al as i64 / d == ah as i64 / d { Abs::I(al as i64 % d, ah as i64 % d) } else { Abs::I(0, d - 1) }
                }
                Bin::Min => Abs::I(al.min(bl) as i64, ah.min(bh) as i64),
                Bin::Max => Abs::I(al.max(bl) as i64, ah.max(bh) as i64),
                Bin::And if dt.is_bool() => Abs::I((al & bl) as i64, (ah & bh) as i64),
                Bin::Or if dt.is_bool() => Abs::I((al | bl) as i64, (ah | bh) as i64),
                Bin::Xor if dt.is_bool() => {
                    if al == ah && bl == bh {
                        Abs::I((al ^ bl) as i64, (al ^ bl) as i64)
                    } else {
                        Abs::I(0, 1)
                    }
                }
                Bin::And if al >= 0 && bl >= 0 => Abs::I(0, ah.min(bh) as i64),
                Bin::Shr if bl == bh && (0..64).contains(&bl) => Abs::I((al >> bl) as i64, (ah >> bl) as i64),
                Bin::Shl if bl == bh && (0..62).contains(&bl) => fits(dt, al << bl, ah << bl),
                _ => Abs::Top,
            }
        }
        _ if dt.is_float() || op == Bin::Div => match (bounds_f(a), bounds_f(b)) {
            (Some((al, ah)), Some((bl, bh))) => {
                let o = if op == Bin::Div { out } else { dt };
                let (al, ah, bl, bh) = (o.round(al), o.round(ah), o.round(bl), o.round(bh));
                match op {
                    Bin::Add => fl(o, al + bl, ah + bh),
                    Bin::Sub => fl(o, al - bh, ah - bl),
                    Bin::Mul | Bin::Div => {
                        if op == Bin::Div && bl <= 0.0 && bh >= 0.0 {
                            Abs::Top
                        } else {
                            let f = |x: f64, y: f64| if op == Bin::Mul { x * y } else { x / y };
                            let c = [f(al, bl), f(al, bh), f(ah, bl), f(ah, bh)];
                            if c.iter().any(|v| v.is_nan()) {
                                Abs::Top
                            } else {
                                fl(
                                    o,
                                    c.iter().copied().fold(f64::INFINITY, f64::min),
                                    c.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                                )
                            }
                        }
                    }
                    Bin::Min => fl(o, al.min(bl), ah.min(bh)),
                    Bin::Max => fl(o, al.max(bl), ah.max(bh)),
                    _ => Abs::Top,
                }
            }
            _ => Abs::Top,
        },
        _ => Abs::Top,
    };
    Av { v, err }
}

fn single(a: Abs) -> Option<Sc> {
    match a {
        Abs::I(l, h) if l == h => Some(Sc::I(l)),
        Abs::F(l, h) if l == h => Some(Sc::F(l)),
        _ => None,
    }
}

fn abs_cmp(op: Cmp, a: Abs, b: Abs) -> Abs {
    let (Some((al, ah)), Some((bl, bh))) = (bounds_i_or_f(a), bounds_i_or_f(b)) else { return Abs::I(0, 1) };
    let definite = |v: bool| if v { Abs::I(1, 1) } else { Abs::I(0, 0) };
    match op {
        Cmp::Lt if ah < bl => definite(true),
        Cmp::Lt if al >= bh => definite(false),
        Cmp::Le if ah <= bl => definite(true),
        Cmp::Le if al > bh => definite(false),
        Cmp::Gt if al > bh => definite(true),
        Cmp::Gt if ah <= bl => definite(false),
        Cmp::Ge if al >= bh => definite(true),
        Cmp::Ge if ah < bl => definite(false),
        Cmp::Eq | Cmp::Ne if al == ah && bl == bh && al == bl => definite(op == Cmp::Eq),
        Cmp::Eq | Cmp::Ne if ah < bl || bh < al => definite(op == Cmp::Ne),
        _ => Abs::I(0, 1),
    }
}

/// Interval bounds in a common ordered form (integers exactly as `i128`-scaled, floats as they are).
fn bounds_i_or_f(a: Abs) -> Option<(Ord2, Ord2)> {
    match a {
        Abs::I(l, h) => Some((Ord2::I(l), Ord2::I(h))),
        Abs::F(l, h) => Some((Ord2::F(l), Ord2::F(h))),
        Abs::Top => None,
    }
}

/// An integer or a float, ordered by value (both operands of a comparison share a dtype).
#[derive(Clone, Copy, Debug)]
enum Ord2 {
    I(i64),
    F(f64),
}
impl PartialEq for Ord2 {
    fn eq(&self, o: &Ord2) -> bool {
        self.partial_cmp(o) == Some(std::cmp::Ordering::Equal)
    }
}
impl PartialOrd for Ord2 {
    fn partial_cmp(&self, o: &Ord2) -> Option<std::cmp::Ordering> {
        match (self, o) {
            (Ord2::I(a), Ord2::I(b)) => a.partial_cmp(b),
            (Ord2::I(a), Ord2::F(b)) => (*a as f64).partial_cmp(b),
            (Ord2::F(a), Ord2::I(b)) => a.partial_cmp(&(*b as f64)),
            (Ord2::F(a), Ord2::F(b)) => a.partial_cmp(b),
        }
    }
}

fn abs_un(op: Un, dt: DType, a: Abs) -> Abs {
    if let Some(x) = single(a) {
        return of(apply_un(op, dt, x));
    }
    match a {
        Abs::I(l, h) => {
            let (l, h) = (l as i128, h as i128);
            match op {
                Un::Neg => fits(dt, -h, -l),
                Un::Invert if dt.is_bool() => Abs::I(0, 1),
                Un::Invert => Abs::I(!(h as i64), !(l as i64)),
                Un::Abs if l >= 0 => Abs::I(l as i64, h as i64),
                Un::Abs if h <= 0 => fits(dt, -h, -l),
                Un::Abs => fits(dt, 0, (-l).max(h)),
                Un::Sign => Abs::I(l.signum() as i64, h.signum() as i64),
                Un::Floor | Un::Ceil | Un::Trunc | Un::Round => Abs::I(l as i64, h as i64),
            }
        }
        Abs::F(l, h) => match op {
            Un::Neg => Abs::F(-h, -l),
            Un::Abs if l >= 0.0 => Abs::F(l, h),
            Un::Abs if h <= 0.0 => Abs::F(-h, -l),
            Un::Abs => Abs::F(0.0, (-l).max(h)),
            Un::Floor => Abs::F(l.floor(), h.floor()),
            Un::Ceil => Abs::F(l.ceil(), h.ceil()),
            Un::Trunc => Abs::F(l.trunc(), h.trunc()),
            Un::Round => Abs::F(l.floor(), h.ceil()),
            Un::Sign => Abs::F(
                if l > 0.0 {
                    1.0
                } else if l < 0.0 {
                    -1.0
                } else {
                    0.0
                },
                if h > 0.0 {
                    1.0
                } else if h < 0.0 {
                    -1.0
                } else {
                    0.0
                },
            ),
            Un::Invert => Abs::Top,
        },
        Abs::Top => Abs::Top,
    }
}

fn abs_cast(to: DType, a: Abs) -> Abs {
    if let Some(x) = single(a) {
        return of(cast(x, to));
    }
    match a {
        Abs::I(l, h) if to.is_bool() => {
            if l > 0 || h < 0 {
                Abs::I(1, 1)
            } else {
                Abs::I(0, 1)
            }
        }
        Abs::I(l, h) if to.is_float() => Abs::F(to.round(l as f64), to.round(h as f64)),
        Abs::I(l, h) => fits(to, l.into(), h.into()),
        Abs::F(l, h) if to.is_float() => Abs::F(to.round(l), to.round(h)),
        Abs::F(l, h) if to.is_bool() => {
            if l > 0.0 || h < 0.0 {
                Abs::I(1, 1)
            } else {
                Abs::I(0, 1)
            }
        }
        Abs::F(l, h) if l.abs() < 9.0e18 && h.abs() < 9.0e18 => fits(to, l.trunc() as i128, h.trunc() as i128),
        _ => Abs::Top,
    }
}

fn abs_gather(t: &Table, idx: &[Abs]) -> Av {
    let mut range_dim = None;
    let mut lo = [0usize; 8];
    let mut hi = [0usize; 8];
    for (d, a) in idx.iter().enumerate() {
        let len = t.t.shape[d] as i64;
        let Abs::I(mut l, mut h) = *a else { return Av { v: Abs::Top, err: true } };
        if l < 0 && h < 0 {
            l += len;
            h += len;
        }
        if l < 0 || h >= len {
            return Av { v: Abs::Top, err: true };
        }
        if l != h {
            if range_dim.is_some() {
                return Av { v: Abs::Top, err: false };
            }
            range_dim = Some(d);
        }
        lo[d] = l as usize;
        hi[d] = h as usize;
    }
    let base: usize = lo[..idx.len()].iter().zip(&t.strides).map(|(i, s)| i * s).sum();
    let Some(d) = range_dim else { return Av { v: of(t.t.data[base]), err: false } };
    let count = hi[d] - lo[d] + 1;
    if idx.len() == 1
        && let Some((mn, mx)) = t.range_1d(lo[0], hi[0])
    {
        return Av { v: Abs::I(mn, mx), err: false };
    }
    if count > 4096 {
        return Av { v: Abs::Top, err: false };
    }
    let mut acc: Option<(Sc, Sc)> = None;
    for k in 0..count {
        let v = t.t.data[base + k * t.strides[d]];
        acc = Some(match acc {
            None => (v, v),
            Some((mn, mx)) => (if sc_lt(v, mn) { v } else { mn }, if sc_lt(mx, v) { v } else { mx }),
        });
    }
    match acc {
        Some((Sc::I(a), Sc::I(b))) => Av { v: Abs::I(a, b), err: false },
        Some((a, b)) if !a.as_f64().is_nan() && !b.as_f64().is_nan() => {
            Av { v: Abs::F(a.as_f64(), b.as_f64()), err: false }
        }
        _ => Av { v: Abs::Top, err: false },
    }
}

/// Why a row could not be computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum RowError {
    /// A cell raised, as torch would.
    Cell { q: u64, k: u64, node: usize, what: &'static str },
    /// The row has more than the allowed number of intervals.
    TooManyIntervals { q: u64 },
    /// The evaluation ran over [`MAX_EVAL_WORK`].
    OverBudget,
}

/// Most node evaluations (one node over one key range, or at one cell) one [`RowEval`] may do: the
/// time budget of evaluating a mask, about 10 s on one core.
pub(super) const MAX_EVAL_WORK: u64 = 1_000_000_000;

/// A traced mask fixed at one `(b, h)`, ready to evaluate rows.
pub(super) struct RowEval<'a> {
    g: &'a Graph,
    root: usize,
    deps: Vec<u8>,
    /// Values of nodes that depend on neither `q` nor `kv`, for this `(b, h)` (`None`: depends).
    fixed: Vec<Option<Sc>>,
    row: Vec<Sc>,
    abs: Vec<Av>,
    cols: Vec<[Sc; LEAF]>,
    b: i64,
    h: i64,
    /// The nodes the root reads, in order, that depend on `kv` (evaluated per key range or cell)...
    kv_nodes: Vec<usize>,
    /// ...and those that depend on `q` but not `kv` (evaluated once per row).
    q_nodes: Vec<usize>,
    /// The nodes the root reads that depend on neither (fixed for this `(b, h)`).
    fixed_nodes: Vec<usize>,
    /// Work done so far, against [`MAX_EVAL_WORK`].
    work: u64,
}

/// The row before as a hint for [`RowEval::row_after`] in an `n`-key mask, or none where its
/// pieces would average under a leaf ([`LEAF`] keys): a row of many short intervals is found
/// faster by halving, whose leaves take 32 keys at a time.
pub(super) fn hint_for(before: &[[u64; 2]], n: u64) -> &[[u64; 2]] {
    if (before.len() as u64).saturating_mul(4 * LEAF as u64) <= n { before } else { &[] }
}

const Q: u8 = 4;
const KV: u8 = 8;

impl<'a> RowEval<'a> {
    pub(super) fn new(g: &'a Graph, root: usize, b: i64, h: i64) -> Result<RowEval<'a>, RowError> {
        let deps = g.deps();
        let mut fixed = vec![None; g.nodes.len()];
        let mut vals = vec![Sc::I(0); g.nodes.len()];
        for (i, node) in g.nodes.iter().enumerate() {
            if deps[i] & (Q | KV) == 0 {
                let v = eval_node(node, &vals, [b, h, 0, 0], &g.nodes).map_err(|what| RowError::Cell {
                    q: 0,
                    k: 0,
                    node: i,
                    what,
                })?;
                vals[i] = v;
                fixed[i] = Some(v);
            }
        }
        let n = g.nodes.len();
        // Only the nodes the root reads are evaluated (a text may record many it never uses).
        let mut used = vec![false; n];
        used[root] = true;
        for i in (0..=root).rev() {
            if !used[i] {
                continue;
            }
            let mut mark = |j: usize| used[j] = true;
            match &g.nodes[i].op {
                Op::Arg(_) | Op::Const(_) => {}
                Op::Cast(a) | Op::Un(_, a) | Op::Search(_, _, a) => mark(*a),
                Op::Bin(_, a, b) | Op::Cmp(_, a, b) => {
                    mark(*a);
                    mark(*b);
                }
                Op::Where(c, a, b) => {
                    mark(*c);
                    mark(*a);
                    mark(*b);
                }
                Op::Gather(_, idx) => idx.iter().for_each(|&j| mark(j)),
            }
        }
        let pick = |f: &dyn Fn(u8) -> bool| (0..n).filter(|&i| used[i] && f(deps[i])).collect::<Vec<_>>();
        let kv_nodes = pick(&|d| d & KV != 0);
        let q_nodes = pick(&|d| d & KV == 0 && d & Q != 0);
        let fixed_nodes = pick(&|d| d & (Q | KV) == 0);
        Ok(RowEval {
            g,
            root,
            deps,
            fixed,
            row: vec![Sc::I(0); n],
            abs: vec![Av { v: Abs::Top, err: false }; n],
            cols: vec![[Sc::I(0); LEAF]; n],
            b,
            h,
            kv_nodes,
            q_nodes,
            fixed_nodes,
            work: 0,
        })
    }

    /// Work done so far.
    pub(super) fn work(&self) -> u64 {
        self.work
    }

    /// Charges `units` of work against [`MAX_EVAL_WORK`].
    fn spend(&mut self, units: usize) -> Result<(), RowError> {
        self.work += units as u64;
        if self.work > MAX_EVAL_WORK {
            return Err(RowError::OverBudget);
        }
        Ok(())
    }

    /// The intervals `[lo, hi]` of keys set in row `q` of an `n`-key mask, in order, at most `cap`.
    pub(super) fn row(&mut self, q: u64, n: u64, cap: usize, out: &mut Vec<[u64; 2]>) -> Result<(), RowError> {
        self.row_after(q, n, cap, &[], out)
    }

    /// Row `q` as [`RowEval::row`] gives it, found faster when it looks like `hint` (the row
    /// before it, in practice). The keys are cut, before the interval analysis, where the hint's
    /// intervals start and end and one key further (a causal row ends one key later than the row
    /// before it, a sliding window's row also starts one later): where the rows share their
    /// structure each piece is decided by one interval evaluation, instead of halving down to
    /// every boundary (about 17 levels at 131072). Any hint gives the same row, since the
    /// analysis of each piece is exact; [`hint_for`] picks the hints worth cutting at.
    pub(super) fn row_after(
        &mut self,
        q: u64,
        n: u64,
        cap: usize,
        hint: &[[u64; 2]],
        out: &mut Vec<[u64; 2]>,
    ) -> Result<(), RowError> {
        out.clear();
        if n == 0 {
            return Ok(());
        }
        self.prepare_row(q)?;
        let mut lo = 0;
        for &[a, b] in hint {
            for cut in [a, a.saturating_add(1), b.saturating_add(1), b.saturating_add(2)] {
                if cut > lo && cut < n {
                    self.split(q, lo, cut - 1, cap, out)?;
                    lo = cut;
                }
            }
        }
        self.split(q, lo, n - 1, cap, out)
    }

    /// The values of the nodes that depend on `q` but not on `kv`, for row `q`.
    fn prepare_row(&mut self, q: u64) -> Result<(), RowError> {
        self.spend(self.q_nodes.len() + 1)?;
        let args = [self.b, self.h, q as i64, 0];
        for &i in &self.fixed_nodes {
            if let Some(v) = self.fixed[i] {
                self.row[i] = v;
                self.abs[i] = Av { v: of(v), err: false };
            }
        }
        for &i in &self.q_nodes {
            let v = eval_node(&self.g.nodes[i], &self.row, args, &self.g.nodes).map_err(|what| RowError::Cell {
                q,
                k: 0,
                node: i,
                what,
            })?;
            self.row[i] = v;
            self.abs[i] = Av { v: of(v), err: false };
        }
        Ok(())
    }

    /// Row `q` evaluated cell by cell, without interval analysis (the oracle of the tests and
    /// the baseline of the benchmark).
    pub(super) fn row_cellwise(&mut self, q: u64, n: u64, out: &mut Vec<[u64; 2]>) -> Result<(), RowError> {
        out.clear();
        self.prepare_row(q)?;
        let mut lo = 0;
        while lo < n {
            let hi = (lo + LEAF as u64 - 1).min(n - 1);
            self.leaf(q, lo, hi, usize::MAX, out)?;
            lo = hi + 1;
        }
        Ok(())
    }

    fn push(out: &mut Vec<[u64; 2]>, lo: u64, hi: u64, cap: usize, q: u64) -> Result<(), RowError> {
        if let Some(last) = out.last_mut()
            && last[1] + 1 == lo
        {
            last[1] = hi;
            return Ok(());
        }
        if out.len() >= cap {
            return Err(RowError::TooManyIntervals { q });
        }
        out.push([lo, hi]);
        Ok(())
    }

    fn split(&mut self, q: u64, lo: u64, hi: u64, cap: usize, out: &mut Vec<[u64; 2]>) -> Result<(), RowError> {
        if hi - lo < LEAF as u64 {
            return self.leaf(q, lo, hi, cap, out);
        }
        self.spend(self.kv_nodes.len() + 1)?;
        match self.abstract_root(lo, hi) {
            Some(true) => Self::push(out, lo, hi, cap, q),
            Some(false) => Ok(()),
            None => {
                let mid = lo + (hi - lo) / 2;
                self.split(q, lo, mid, cap, out)?;
                self.split(q, mid + 1, hi, cap, out)
            }
        }
    }

    /// The root's value over keys `lo..=hi`, when the same for all and no cell can raise.
    fn abstract_root(&mut self, lo: u64, hi: u64) -> Option<bool> {
        let g = &self.g.nodes;
        if self.deps[self.root] & KV == 0 {
            return Some(self.row[self.root].truthy());
        }
        for &i in &self.kv_nodes {
            let node = &g[i];
            let a = |j: usize| self.abs[j];
            let av = match &node.op {
                Op::Arg(_) => Av { v: Abs::I(lo as i64, hi as i64), err: false },
                Op::Const(v) => Av { v: of(*v), err: false },
                Op::Cast(x) => Av { v: abs_cast(node.dtype, a(*x).v), err: a(*x).err },
                Op::Un(op, x) => Av { v: abs_un(*op, node.dtype, a(*x).v), err: a(*x).err },
                Op::Bin(op, x, y) => {
                    let r = abs_bin(*op, g[*x].dtype, node.dtype, a(*x).v, a(*y).v);
                    Av { v: r.v, err: r.err || a(*x).err || a(*y).err }
                }
                Op::Cmp(op, x, y) => Av { v: abs_cmp(*op, a(*x).v, a(*y).v), err: a(*x).err || a(*y).err },
                Op::Where(c, x, y) => {
                    let err = a(*c).err || a(*x).err || a(*y).err;
                    let v = match a(*c).v {
                        Abs::I(1, 1) => a(*x).v,
                        Abs::I(0, 0) => a(*y).v,
                        _ => hull(a(*x).v, a(*y).v),
                    };
                    Av { v, err }
                }
                Op::Gather(t, idx) => {
                    let mut ab = [Abs::Top; 8];
                    let mut err = false;
                    for (d, &j) in idx.iter().enumerate() {
                        ab[d] = a(j).v;
                        err |= a(j).err;
                    }
                    let r = abs_gather(t, &ab[..idx.len()]);
                    Av { v: r.v, err: r.err || err }
                }
                Op::Search(t, right, x) => {
                    let v = match a(*x).v {
                        Abs::I(l, h) => match (search(t, *right, Sc::I(l)), search(t, *right, Sc::I(h))) {
                            (Sc::I(p), Sc::I(r)) => Abs::I(p, r),
                            _ => Abs::Top,
                        },
                        Abs::F(l, h) => match (search(t, *right, Sc::F(l)), search(t, *right, Sc::F(h))) {
                            (Sc::I(p), Sc::I(r)) => Abs::I(p, r),
                            _ => Abs::Top,
                        },
                        Abs::Top => Abs::Top,
                    };
                    Av { v, err: a(*x).err }
                }
            };
            if av.err {
                return None;
            }
            self.abs[i] = av;
        }
        match self.abs[self.root].v {
            Abs::I(1, 1) => Some(true),
            Abs::I(0, 0) => Some(false),
            _ => None,
        }
    }

    fn leaf(&mut self, q: u64, lo: u64, hi: u64, cap: usize, out: &mut Vec<[u64; 2]>) -> Result<(), RowError> {
        let len = (hi - lo + 1) as usize;
        self.spend(self.kv_nodes.len() * len + 1)?;
        let g = &self.g.nodes;
        for &i in &self.kv_nodes {
            for c in 0..len {
                let k = lo + c as u64;
                let col = |j: usize| if self.deps[j] & KV == 0 { self.row[j] } else { self.cols[j][c] };
                let node = &g[i];
                let v = match &node.op {
                    Op::Arg(_) => Sc::I(k as i64),
                    Op::Const(v) => *v,
                    Op::Cast(x) => cast(col(*x), node.dtype),
                    Op::Un(op, x) => apply_un(*op, node.dtype, col(*x)),
                    Op::Bin(op, x, y) => apply_bin(*op, g[*x].dtype, col(*x), col(*y))
                        .map_err(|what| RowError::Cell { q, k, node: i, what })?,
                    Op::Cmp(op, x, y) => Sc::I(i64::from(apply_cmp(*op, col(*x), col(*y)))),
                    Op::Where(cn, x, y) => {
                        if col(*cn).truthy() {
                            col(*x)
                        } else {
                            col(*y)
                        }
                    }
                    Op::Gather(t, idx) => {
                        let mut ix = [Sc::I(0); 8];
                        for (d, &j) in idx.iter().enumerate() {
                            ix[d] = col(j);
                        }
                        gather(t, &ix[..idx.len()]).map_err(|what| RowError::Cell { q, k, node: i, what })?
                    }
                    Op::Search(t, right, x) => search(t, *right, col(*x)),
                };
                self.cols[i][c] = v;
            }
        }
        for c in 0..len {
            let v = if self.deps[self.root] & KV == 0 { self.row[self.root] } else { self.cols[self.root][c] };
            if v.truthy() {
                let k = lo + c as u64;
                Self::push(out, k, k, cap, q)?;
            }
        }
        Ok(())
    }
}

fn hull(a: Abs, b: Abs) -> Abs {
    match (a, b) {
        (Abs::I(a0, a1), Abs::I(b0, b1)) => Abs::I(a0.min(b0), a1.max(b1)),
        (Abs::F(a0, a1), Abs::F(b0, b1)) => Abs::F(a0.min(b0), a1.max(b1)),
        _ => Abs::Top,
    }
}

/// `searchsorted` of one value in a sorted 1-d table.
pub(super) fn search_value(t: &Table, right: bool, x: Sc) -> Sc {
    search(t, right, x)
}

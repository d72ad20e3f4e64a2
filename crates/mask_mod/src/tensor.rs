//! Tensors as torch computes them: dtypes, torch's type promotion, and the elementwise kernels that
//! both concrete tensors and traced mask graphs use (one definition of every operator).

use std::fmt;

/// Most elements one tensor may hold.
pub(super) const MAX_ELEMENTS: usize = 1 << 24;
/// Most dimensions of a tensor (torch.tensor of nested lists takes at most 128).
pub(super) const MAX_RANK: usize = 128;

/// The dtypes the interpreter models exactly. Integers are stored as `i64` and wrapped to their
/// width after each operation, as torch's kernels do; floats are stored as `f64` and rounded to
/// `f32` after each operation for `float32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DType {
    Bool,
    U8,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

/// Torch's error for a number written into a tensor whose dtype cannot hold it ([`DType::holds`]).
pub(super) const OVERFLOW: &str = "value cannot be converted to the tensor's dtype without overflow (RuntimeError)";

impl DType {
    /// Whether torch writes the number `v` (a Python number, or a tensor's single element where
    /// torch takes it out first) into a tensor of this dtype without its overflow error. As c10's
    /// check runs: an int into an unsigned dtype may go down to minus its largest value (it wraps),
    /// a float into an integer dtype is checked before it is truncated (from the lowest value up
    /// to, not including, the largest plus one; NaN never), a float into float32 when finite and
    /// past its range, and bool and float64 hold any.
    pub(super) fn holds(self, v: Sc) -> bool {
        let (lo, hi) = self.int_range();
        match (self, v) {
            (DType::Bool | DType::F64, _) => true,
            (DType::F32, Sc::F(f)) => !f.is_finite() || f.abs() <= f64::from(f32::MAX),
            (DType::F32, _) => true,
            (_, Sc::I(i)) => i <= hi && i >= if lo == 0 { -hi } else { lo },
            (_, Sc::F(f)) => f >= lo as f64 && f < hi as f64 + 1.0,
        }
    }
    /// The values of an integer dtype (bool's 0 and 1; those of int64 for the float dtypes).
    pub(super) fn int_range(self) -> (i64, i64) {
        match self {
            DType::Bool => (0, 1),
            DType::U8 => (0, 255),
            DType::I8 => (-128, 127),
            DType::I16 => (-32768, 32767),
            DType::I32 => (i32::MIN.into(), i32::MAX.into()),
            _ => (i64::MIN, i64::MAX),
        }
    }
    pub(super) fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
    pub(super) fn is_bool(self) -> bool {
        self == DType::Bool
    }
    pub(super) fn name(self) -> &'static str {
        match self {
            DType::Bool => "torch.bool",
            DType::U8 => "torch.uint8",
            DType::I8 => "torch.int8",
            DType::I16 => "torch.int16",
            DType::I32 => "torch.int32",
            DType::I64 => "torch.int64",
            DType::F32 => "torch.float32",
            DType::F64 => "torch.float64",
        }
    }
    pub(super) fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "bool" => DType::Bool,
            "uint8" => DType::U8,
            "int8" => DType::I8,
            "int16" | "short" => DType::I16,
            "int32" | "int" => DType::I32,
            "int64" | "long" => DType::I64,
            "float32" | "float" => DType::F32,
            "float64" | "double" => DType::F64,
            _ => return None,
        })
    }
    /// Wraps an integer to this dtype's width (bool: nonzero is 1).
    pub(super) fn wrap(self, v: i64) -> i64 {
        match self {
            DType::Bool => i64::from(v != 0),
            DType::U8 => i64::from(v as u8),
            DType::I8 => i64::from(v as i8),
            DType::I16 => i64::from(v as i16),
            DType::I32 => i64::from(v as i32),
            _ => v,
        }
    }
    pub(super) fn round(self, v: f64) -> f64 {
        if self == DType::F32 { f64::from(v as f32) } else { v }
    }
    fn rank(self) -> u8 {
        match self {
            DType::Bool => 0,
            DType::U8 => 1,
            DType::I8 => 2,
            DType::I16 => 3,
            DType::I32 => 4,
            DType::I64 => 5,
            DType::F32 => 6,
            DType::F64 => 7,
        }
    }
    /// torch's `promote_types`.
    pub(super) fn promote(a: DType, b: DType) -> DType {
        if a == b {
            return a;
        }
        match (a, b) {
            (DType::U8, DType::I8) | (DType::I8, DType::U8) => DType::I16,
            _ => {
                if a.rank() >= b.rank() {
                    a
                } else {
                    b
                }
            }
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One element: integers and booleans as `I`, floats as `F`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Sc {
    I(i64),
    F(f64),
}

impl Sc {
    pub(super) fn as_f64(self) -> f64 {
        match self {
            Sc::I(v) => v as f64,
            Sc::F(v) => v,
        }
    }
    pub(super) fn as_i64(self) -> i64 {
        match self {
            Sc::I(v) => v,
            Sc::F(v) => v as i64,
        }
    }
    pub(super) fn truthy(self) -> bool {
        match self {
            Sc::I(v) => v != 0,
            Sc::F(v) => v != 0.0,
        }
    }
}

/// The marker of an element `torch.empty` left unwritten, in an integer or bool tensor: outside
/// every narrower dtype's range, so that only an int64 write of this exact value stores it (see
/// `unset`).
pub(super) const UNSET_INT: i64 = i64::MIN + 0x5EED_0E17;
/// The marker of an unwritten float element: a signalling NaN with a payload that torch's
/// arithmetic never produces (its NaNs are quiet).
pub(super) const UNSET_FLOAT: u64 = 0x7FF4_5EED_0E17_0E17;

/// Whether an element is `torch.empty`'s marker of an unwritten one.
pub(super) fn is_unset(v: Sc) -> bool {
    match v {
        Sc::I(x) => x == UNSET_INT,
        Sc::F(x) => x.to_bits() == UNSET_FLOAT,
    }
}

/// Casts an element from one dtype to another as torch's `.to(dtype)` does on the CPU (float to
/// integer truncates toward zero; a float out of range or NaN gives the x86 conversion's
/// "integer indefinite": INT64_MIN for int64, INT32_MIN for the narrower widths, which convert
/// through int32 and are then wrapped, as torch 2.x computes them).
pub(super) fn cast(v: Sc, to: DType) -> Sc {
    if is_unset(v) {
        // An unwritten element stays one (moved into a tensor of another dtype, or of its own).
        return if to.is_float() { Sc::F(f64::from_bits(UNSET_FLOAT)) } else { Sc::I(UNSET_INT) };
    }
    match (v, to.is_float()) {
        (Sc::I(x), false) => Sc::I(to.wrap(x)),
        (Sc::I(x), true) => Sc::F(to.round(x as f64)),
        (Sc::F(x), true) => Sc::F(to.round(x)),
        (Sc::F(x), false) => {
            if to.is_bool() {
                Sc::I(i64::from(x != 0.0))
            } else {
                const TWO_63: f64 = 9_223_372_036_854_775_808.0;
                const TWO_31: f64 = 2_147_483_648.0;
                let t = x.trunc();
                if to == DType::I64 {
                    Sc::I(if x.is_nan() || !(-TWO_63..TWO_63).contains(&t) { i64::MIN } else { t as i64 })
                } else {
                    let v32 = if x.is_nan() || !(-TWO_31..TWO_31).contains(&t) { i32::MIN } else { t as i32 };
                    Sc::I(to.wrap(i64::from(v32)))
                }
            }
        }
    }
}

/// Operands' priority in torch's type promotion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    /// A tensor with at least one dimension.
    Dim,
    /// A 0-d tensor (every traced per-position value is one).
    Zero,
    /// A Python number.
    Wrapped,
}

fn combine(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    match (higher, lower) {
        (Some(h), _) if h.is_float() => Some(h),
        (Some(h), Some(l)) if h.is_bool() || l.is_float() => Some(DType::promote(h, l)),
        (Some(h), _) => Some(h),
        (None, l) => l,
    }
}

/// torch's `result_type` over operands given as (dtype, class). A wrapped float counts as the
/// default dtype, `float32`.
pub(super) fn result_type(ops: &[(DType, Class)]) -> DType {
    let mut slots: [Option<DType>; 3] = [None; 3];
    for &(dt, class) in ops {
        let (k, dt) = match class {
            Class::Dim => (0, dt),
            Class::Zero => (1, dt),
            Class::Wrapped => (2, if dt.is_float() { DType::F32 } else { dt }),
        };
        slots[k] = Some(match slots[k] {
            None => dt,
            Some(p) => DType::promote(p, dt),
        });
    }
    combine(slots[0], combine(slots[1], slots[2])).unwrap_or(DType::I64)
}

/// Binary operators of the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    /// `torch.div(..., rounding_mode="trunc")`: the quotient rounded toward zero.
    TruncDiv,
    /// Python's `%` and `torch.remainder`: the sign of the divisor.
    Rem,
    /// `torch.fmod`: the sign of the dividend.
    Fmod,
    Pow,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
}

/// Comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Cmp {
    pub(super) fn test<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Un {
    Neg,
    /// `~`: logical not on bool, bitwise not on integers.
    Invert,
    Abs,
    Floor,
    Ceil,
    Trunc,
    Round,
    Sign,
}

/// The dtype a binary operator computes in and returns, given the promoted dtype of its operands;
/// or why torch refuses it.
pub(super) fn bin_dtype(op: Bin, dt: DType) -> Result<DType, String> {
    match op {
        Bin::Div => Ok(if dt.is_float() { dt } else { DType::F32 }),
        Bin::And | Bin::Or | Bin::Xor | Bin::Shl | Bin::Shr if dt.is_float() => {
            Err(format!("bitwise operators are not implemented for {dt} (NotImplementedError)"))
        }
        Bin::Shl | Bin::Shr if dt.is_bool() => {
            Err("shifts are not implemented for torch.bool (NotImplementedError)".into())
        }
        Bin::FloorDiv | Bin::TruncDiv | Bin::Rem | Bin::Fmod | Bin::Pow if dt.is_bool() => {
            Err("this operator is not implemented for torch.bool (NotImplementedError)".into())
        }
        _ => Ok(dt),
    }
}

/// Floor division of int64s as torch computes it: `INT64_MIN // -1` wraps to `INT64_MIN`.
pub(super) fn floor_div_i(a: i64, b: i64) -> i64 {
    let q = a.wrapping_div(b);
    if (a.wrapping_rem(b) != 0) && ((a < 0) != (b < 0)) { q - 1 } else { q }
}

fn rem_i(a: i64, b: i64) -> i64 {
    let r = a.wrapping_rem(b);
    if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r }
}

fn rem_f(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && ((r < 0.0) != (b < 0.0)) { r + b } else { r }
}

/// One binary operation on elements already of dtype `dt` (the operands' promoted dtype), giving
/// an element of `bin_dtype(op, dt)`. Integer division by zero is an error, as in torch.
pub(super) fn apply_bin(op: Bin, dt: DType, a: Sc, b: Sc) -> Result<Sc, &'static str> {
    if op == Bin::Div {
        let out = if dt.is_float() { dt } else { DType::F32 };
        return Ok(Sc::F(out.round(out.round(a.as_f64()) / out.round(b.as_f64()))));
    }
    match (a, b) {
        (Sc::I(x), Sc::I(y)) => {
            let v = match op {
                Bin::Add => {
                    if dt.is_bool() {
                        i64::from(x != 0 || y != 0)
                    } else {
                        x.wrapping_add(y)
                    }
                }
                Bin::Sub => x.wrapping_sub(y),
                Bin::Mul => x.wrapping_mul(y),
                Bin::FloorDiv | Bin::TruncDiv | Bin::Rem | Bin::Fmod if y == 0 => {
                    // Torch's RuntimeError, whose message is the name of Python's error.
                    return Err("ZeroDivisionError (RuntimeError)");
                }
                Bin::FloorDiv => floor_div_i(x, y),
                Bin::TruncDiv => x.wrapping_div(y),
                Bin::Rem => rem_i(x, y),
                Bin::Fmod => x.wrapping_rem(y),
                // A negative exponent (a tensor's: a Python number's is refused before the kernel)
                // gives 1 / x truncated toward zero: x ** |y| for x = ±1, else 0 (0 too).
                Bin::Pow => {
                    let mut r: i64 = 1;
                    let mut base = if y < 0 && !matches!(x, -1 | 1) { 0 } else { x };
                    let mut e = y.unsigned_abs();
                    while e > 0 {
                        if e & 1 == 1 {
                            r = r.wrapping_mul(base);
                        }
                        base = base.wrapping_mul(base);
                        e >>= 1;
                    }
                    r
                }
                Bin::And => x & y,
                Bin::Or => x | y,
                Bin::Xor => x ^ y,
                Bin::Shl => {
                    if !(0..64).contains(&y) {
                        0
                    } else {
                        x.wrapping_shl(y as u32)
                    }
                }
                Bin::Shr => {
                    if y < 0 {
                        0
                    } else if y >= 64 {
                        if x < 0 { -1 } else { 0 }
                    } else {
                        x >> y
                    }
                }
                Bin::Min => x.min(y),
                Bin::Max => x.max(y),
                Bin::Div => unreachable!("handled above"),
            };
            Ok(Sc::I(dt.wrap(v)))
        }
        _ => {
            let (x, y) = (a.as_f64(), b.as_f64());
            let v = match op {
                Bin::Add => x + y,
                Bin::Sub => x - y,
                Bin::Mul => x * y,
                Bin::FloorDiv => (x / y).floor(),
                Bin::TruncDiv => (x / y).trunc(),
                Bin::Rem => rem_f(x, y),
                Bin::Fmod => x % y,
                Bin::Pow => x.powf(y),
                Bin::Min => {
                    if x.is_nan() || y.is_nan() {
                        f64::NAN
                    } else {
                        x.min(y)
                    }
                }
                Bin::Max => {
                    if x.is_nan() || y.is_nan() {
                        f64::NAN
                    } else {
                        x.max(y)
                    }
                }
                _ => return Err("bitwise operators are not defined for floats"),
            };
            Ok(Sc::F(dt.round(v)))
        }
    }
}

/// The dtype a unary operator returns, or why torch refuses it.
pub(super) fn un_dtype(op: Un, dt: DType) -> Result<DType, String> {
    match op {
        Un::Neg if dt.is_bool() => Err("negating a bool tensor is not supported by torch; use `~`".into()),
        Un::Invert if dt.is_float() => Err(format!("`~` is not defined for {dt}")),
        Un::Abs | Un::Floor | Un::Ceil | Un::Trunc | Un::Round if dt.is_bool() => {
            Err("this function is not defined for torch.bool".into())
        }
        _ => Ok(dt),
    }
}

pub(super) fn apply_un(op: Un, dt: DType, a: Sc) -> Sc {
    match a {
        Sc::I(x) => Sc::I(dt.wrap(match op {
            Un::Neg => x.wrapping_neg(),
            Un::Invert => {
                if dt.is_bool() {
                    i64::from(x == 0)
                } else {
                    !x
                }
            }
            Un::Abs => x.wrapping_abs(),
            Un::Sign => x.signum(),
            Un::Floor | Un::Ceil | Un::Trunc | Un::Round => x,
        })),
        Sc::F(x) => Sc::F(dt.round(match op {
            Un::Neg => -x,
            Un::Abs => x.abs(),
            Un::Floor => x.floor(),
            Un::Ceil => x.ceil(),
            Un::Trunc => x.trunc(),
            Un::Round => {
                // Round half to even, as torch.round.
                let r = x.round();
                if (x - x.trunc()).abs() == 0.5 { 2.0 * (x / 2.0).round() } else { r }
            }
            Un::Sign => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    x
                }
            }
            Un::Invert => x,
        })),
    }
}

/// Compares two elements of dtype `dt`.
pub(super) fn apply_cmp(op: Cmp, a: Sc, b: Sc) -> bool {
    match (a, b) {
        (Sc::I(x), Sc::I(y)) => op.test(x, y),
        _ => op.test(a.as_f64(), b.as_f64()),
    }
}

/// A concrete tensor: row-major elements of one dtype.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Tensor {
    pub(super) dtype: DType,
    pub(super) shape: Vec<usize>,
    pub(super) data: Vec<Sc>,
}

impl Tensor {
    pub(super) fn new(dtype: DType, shape: Vec<usize>, data: Vec<Sc>) -> Tensor {
        Tensor { dtype, shape, data }
    }
    pub(super) fn scalar(dtype: DType, v: Sc) -> Tensor {
        Tensor { dtype, shape: Vec::new(), data: vec![cast(v, dtype)] }
    }
    /// The bytes the tensor holds: each element is stored as one [`Sc`] (16 B) whatever its
    /// dtype, plus the shape and the header.
    pub(super) fn bytes(&self) -> usize {
        self.data.capacity() * std::mem::size_of::<Sc>()
            + self.shape.capacity() * std::mem::size_of::<usize>()
            + std::mem::size_of::<Tensor>()
    }
    pub(super) fn numel(&self) -> usize {
        self.data.len()
    }
    pub(super) fn strides(&self) -> Vec<usize> {
        strides_of(&self.shape)
    }
}

/// The row-major strides of a shape, in elements.
pub(super) fn strides_of(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// The number of elements of a shape, if within [`MAX_ELEMENTS`].
pub(super) fn checked_numel(shape: &[usize]) -> Result<usize, String> {
    if shape.len() > MAX_RANK {
        return Err(format!("a tensor of {} dimensions: over {MAX_RANK} dimensions is not modelled", shape.len()));
    }
    let mut n: usize = 1;
    for &d in shape {
        n = n
            .checked_mul(d)
            .filter(|&n| n <= MAX_ELEMENTS)
            .ok_or_else(|| format!("a tensor of shape {shape:?} is over the limit of {MAX_ELEMENTS} elements"))?;
    }
    Ok(n)
}

/// The broadcast shape of two shapes, as torch's broadcasting rules give it.
pub(super) fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, String> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i + a.len() >= n { a[i + a.len() - n] } else { 1 };
        let y = if i + b.len() >= n { b[i + b.len() - n] } else { 1 };
        out[i] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return Err(format!("the shapes {a:?} and {b:?} do not broadcast"));
        };
    }
    Ok(out)
}

/// The flat index into `shape` (broadcast to `out`) of the element at `out`'s flat index `i`.
pub(super) fn broadcast_index(i: usize, out: &[usize], shape: &[usize]) -> usize {
    let mut rem = i;
    let mut idx = 0;
    let mut stride = 1;
    for d in (0..out.len()).rev() {
        let coord = rem % out[d];
        rem /= out[d];
        if d + shape.len() >= out.len() {
            let sd = d + shape.len() - out.len();
            if shape[sd] != 1 {
                idx += coord * stride;
            }
            stride *= shape[sd];
        }
    }
    idx
}

//! Seeded random numbers, drawn exactly as CPython's `random` and torch's CPU generator draw them,
//! so that a module-level example batch (`torch.randint(..., generator=g)` after
//! `g.manual_seed(0)`, `random.seed(0)` then `random.randint`) gives the values Python gives.
//!
//! Both are MT19937 (32-bit Mersenne Twister). They differ in seeding and in how draws become
//! values:
//! - **CPython** seeds with `init_by_array` over the 32-bit words of `abs(seed)`, least significant
//!   first; `random()` takes 27 + 26 bits of two draws; `getrandbits(k)` keeps the top bits of each
//!   32-bit word; `randrange`, `randint`, `choice`, `shuffle` and `sample` draw indices below `n`
//!   by `getrandbits(n.bit_length())` with rejection.
//! - **torch** seeds with the plain 32-bit `init_genrand` of the seed's low word (the seed itself
//!   is kept as a 64-bit value, `initial_seed()`); a 64-bit draw is two 32-bit draws, the first
//!   the high word. `randint` takes `draw % range + low` from a 32-bit draw when the range is below
//!   2**28, else from a 64-bit one; `rand` keeps 24 bits (float32) or 53 bits (float64);
//!   `randperm` swaps each position with one at `draw % (n - i)` after it.
//!
//! Everything that cannot be reproduced is refused as not modelled at its place: a seed taken from
//! the OS (no seed call before a draw, `torch.seed()`), a seed that is not an int, a CUDA generator,
//! a draw after a skipped statement (it could have drawn or seeded), `torch.randn`, a draw inside the
//! mask function (vmap refuses random operations there).

use super::args::{Args, shape_args, to_f64, to_int};
use super::ast::Pos;
use super::mt::{Gen, Kind, Mt, TORCH_DEFAULT_SEED, python_key};
use super::rt::{Eval, Interp, MAX_ITEMS, R, exc, limit, unsup};
use super::tensor::{DType, Sc, Tensor, cast};
use super::value::{Shared, Value, shared};

/// Names under `random.` and `torch.` this module implements.
pub(super) fn is_known(full: &str) -> bool {
    matches!(
        full,
        "random.seed"
            | "random.random"
            | "random.getrandbits"
            | "random.randrange"
            | "random.randint"
            | "random.choice"
            | "random.choices"
            | "random.shuffle"
            | "random.sample"
            | "random.uniform"
            | "random.Random"
            | "torch.Generator"
            | "torch.initial_seed"
            | "torch.seed"
            | "torch.default_generator"
            | "torch.random.manual_seed"
            | "torch.random.initial_seed"
            | "torch.cuda.manual_seed"
            | "torch.cuda.manual_seed_all"
    )
}

/// Methods a generator value has.
pub(super) fn attr(g: &Shared<Gen>, o: &Value, name: &str, pos: Pos) -> R<Value> {
    let kind = g.borrow().kind;
    let known = match kind {
        Kind::Torch => matches!(name, "manual_seed" | "initial_seed" | "seed" | "get_state" | "set_state"),
        Kind::Python => is_known(&format!("random.{name}")) && name != "Random",
    };
    if name == "device" && kind == Kind::Torch {
        return Ok(Value::Device);
    }
    if !known {
        return unsup(pos, format!("the attribute `{name}` of a {} is not modelled", g.borrow().type_name()));
    }
    Ok(Value::method(&format!("rng.{name}"), o.clone()))
}

/// `random.<f>(...)`: a function of the `random` module (its hidden global instance).
pub(super) fn random_fn(it: &mut Interp, f: &str, a: Args) -> R<Value> {
    if f == "Random" {
        let g = shared(Gen::unseeded(Kind::Python, false));
        if let Some(s) = a.get(0, "x") {
            seed_python(it, &g, Some(s), a.at)?;
        }
        return Ok(Value::Rng(g));
    }
    let g = it.rng.python.clone();
    python_method(it, &g, f, a)
}

/// `torch.<f>(...)` for the random functions; `None` where `f` is not one.
pub(super) fn torch_fn(it: &mut Interp, f: &str, a: &Args) -> R<Option<Value>> {
    let pos = a.at;
    let default = it.rng.torch.clone();
    Ok(Some(match f {
        "manual_seed" | "random.manual_seed" => {
            seed_torch(it, &default, &a.need(0, "seed")?, pos)?;
            Value::Rng(default)
        }
        "initial_seed" | "random.initial_seed" => initial_seed(&default, pos)?,
        // CUDA's generators are not the CPU's: seeding them changes no CPU draw.
        "cuda.manual_seed" | "cuda.manual_seed_all" => {
            seed_int(&a.need(0, "seed")?, "seeding CUDA's generators", pos)?;
            Value::None
        }
        "seed" => return unsup(pos, "`torch.seed()` seeds torch's generator from the OS: not modelled"),
        "Generator" => {
            cpu_device(a, pos)?;
            Value::Rng(shared(Gen {
                seed: TORCH_DEFAULT_SEED,
                mt: Some(Mt::from_u32(TORCH_DEFAULT_SEED as u32)),
                skipped_then: it.skipped.len(),
                ..Gen::unseeded(Kind::Torch, false)
            }))
        }
        "randint" => randint(it, a)?,
        "rand" => rand(it, a)?,
        "randperm" => randperm(it, a)?,
        "randn" => {
            return unsup(
                pos,
                "torch.randn is not modelled (torch's normal sampler is not reproduced; randint, rand and randperm are)",
            );
        }
        _ => return Ok(None),
    }))
}

/// A method of a generator value.
pub(super) fn method(it: &mut Interp, g: &Shared<Gen>, name: &str, a: Args) -> R<Value> {
    let m = name.strip_prefix("rng.").unwrap_or(name);
    let pos = a.at;
    let kind = g.borrow().kind;
    match kind {
        Kind::Python => {}
        Kind::Torch => {
            return match m {
                "manual_seed" => {
                    seed_torch(it, g, &a.need(0, "seed")?, pos)?;
                    Ok(Value::Rng(g.clone()))
                }
                "initial_seed" => initial_seed(g, pos),
                "seed" => unsup(pos, "`Generator.seed()` seeds from the OS: not modelled"),
                _ => unsup(pos, format!("`Generator.{m}` is not modelled")),
            };
        }
    }
    python_method(it, g, m, a)
}

fn initial_seed(g: &Shared<Gen>, pos: Pos) -> R<Value> {
    let g = g.borrow();
    if g.mt.is_none() {
        return unsup(pos, "torch's default generator is seeded from the OS until `torch.manual_seed`: not modelled");
    }
    match i64::try_from(g.seed) {
        Ok(s) => Ok(Value::Int(s)),
        Err(_) => unsup(pos, "a seed of 2**63 or more is over the 64-bit integers modelled"),
    }
}

fn cpu_device(a: &Args, pos: Pos) -> R<()> {
    // `torch.Generator("cuda")` names the device positionally.
    let positional = if &*a.name == "torch.Generator" { a.pos.first().cloned() } else { None };
    match a.kw("device").or(positional) {
        None | Some(Value::None) => Ok(()),
        Some(Value::Str(s)) if &*s == "cpu" => Ok(()),
        Some(_) => unsup(
            pos,
            "a generator or random tensor on a device other than \"cpu\" is not modelled (CUDA draws differ from the CPU's)",
        ),
    }
}

/// An int argument as the draws read it (an int, a bool or an `IntEnum` member); `None` for any
/// other value, which each caller refuses in its own words.
fn int_like(v: &Value, pos: Pos) -> Option<R<i64>> {
    match v {
        Value::Int(_) | Value::Bool(_) => Some(to_int(v, pos)),
        Value::Instance(i) if i.class.is_int_enum() => Some(to_int(v, pos)),
        _ => None,
    }
}

fn seed_int(v: &Value, what: &str, pos: Pos) -> R<i64> {
    if let Some(s) = int_like(v, pos) {
        return s;
    }
    match v {
        Value::None => unsup(pos, format!("{what} with no seed seeds from the OS: not modelled")),
        other => unsup(pos, format!("{what} by a {} is not modelled (only an int seed is)", other.type_name())),
    }
}

fn seed_torch(it: &mut Interp, g: &Shared<Gen>, v: &Value, pos: Pos) -> R<()> {
    let s = seed_int(v, "seeding torch's generator", pos)?;
    let seed = s as u64; // torch maps a negative seed to 2**64 + seed.
    let mut g = g.borrow_mut();
    g.seed = seed;
    g.mt = Some(Mt::from_u32(seed as u32));
    g.seeded_at = Some(pos);
    g.skipped_then = it.skipped.len();
    Ok(())
}

fn seed_python(it: &mut Interp, g: &Shared<Gen>, v: Option<Value>, pos: Pos) -> R<()> {
    let s = seed_int(&v.unwrap_or(Value::None), "`random.seed`", pos)?;
    let mut g = g.borrow_mut();
    g.mt = Some(Mt::from_key(&python_key(s)));
    g.seeded_at = Some(pos);
    g.skipped_then = it.skipped.len();
    Ok(())
}

/// Runs `f` on the generator's engine, once the draw is known to be reproducible.
fn draw<T>(it: &Interp, g: &Shared<Gen>, what: &str, pos: Pos, f: impl FnOnce(&mut Mt) -> T) -> R<T> {
    Ok(f(&mut *engine(it, g, what, pos)?))
}

/// The generator's engine, once a draw from it is known to be reproducible, else why not: one
/// copy of the refusals for every kind of draw (inlined into each, they cost the module's size).
#[inline(never)]
fn engine<'a>(it: &Interp, g: &'a Shared<Gen>, what: &str, pos: Pos) -> R<std::cell::RefMut<'a, Mt>> {
    if it.rng.sealed {
        return unsup(
            pos,
            format!("{what} inside the mask function is not modelled (vmap refuses random operations there)"),
        );
    }
    let g = g.borrow_mut();
    if let Some((at, why)) = it.skipped.get(g.skipped_then) {
        return unsup(
            pos,
            format!(
                "{what} after the statement skipped at line {}, column {} ({why}) is not modelled: it could have drawn from or seeded the generator",
                at.line, at.col
            ),
        );
    }
    let (kind, global) = (g.kind, g.global);
    std::cell::RefMut::filter_map(g, |g| g.mt.as_mut()).or_else(|_| {
        if kind == Kind::Torch {
            unsup(
                pos,
                format!(
                    "{what} from torch's default generator before `torch.manual_seed` is not modelled (torch seeds it from the OS)"
                ),
            )
        } else if global {
            unsup(pos, format!("{what} before `random.seed(...)` is not modelled (Python seeds `random` from the OS)"))
        } else {
            unsup(
                pos,
                format!("{what} from a `random.Random()` made without a seed is not modelled (it is seeded from the OS)"),
            )
        }
    })
}

/// An index sequence for `choice` and `sample`: items, or a range read by index.
enum Seq {
    Items(Vec<Value>),
    Range(i64, i64, u64),
}

impl Seq {
    fn len(&self) -> u64 {
        match self {
            Seq::Items(v) => v.len() as u64,
            Seq::Range(_, _, n) => *n,
        }
    }
    fn at(&self, i: u64) -> Value {
        match self {
            Seq::Items(v) => v[i as usize].clone(),
            Seq::Range(start, step, _) => Value::Int(start + step * i as i64),
        }
    }
}

fn sequence(it: &mut Interp, v: &Value, what: &str, pos: Pos) -> R<Seq> {
    match v {
        Value::Range(a, b, s) => Ok(Seq::Range(*a, *s, super::rt::range_len(*a, *b, *s).max(0) as u64)),
        Value::List(_) | Value::Tuple(_) | Value::Str(_) => Ok(Seq::Items(it.iterate(v, pos)?)),
        other => {
            unsup(pos, format!("{what} of a {} is not modelled (a list, tuple, range or str is)", other.type_name()))
        }
    }
}

fn python_method(it: &mut Interp, g: &Shared<Gen>, f: &str, a: Args) -> R<Value> {
    let pos = a.at;
    let what = format!("`random.{f}`");
    let int = |i: usize, name: &str| -> R<i64> {
        let v = a.need(i, name)?;
        // CPython 3.11 still takes `int()` of what has no `__index__` (with a warning).
        int_like(&v, pos)
            .unwrap_or_else(|| unsup(pos, format!("{what} of a {} is not modelled (an int is)", v.type_name())))
    };
    Ok(match f {
        "seed" => {
            seed_python(it, g, a.get(0, "a"), pos)?;
            Value::None
        }
        "random" => Value::Float(draw(it, g, &what, pos, Mt::random)?),
        "uniform" => {
            let (ia, ib) = (a.need(0, "a")?, a.need(1, "b")?);
            let (lo, hi) = (to_f64(&ia, pos)?, to_f64(&ib, pos)?);
            let r = draw(it, g, &what, pos, Mt::random)?;
            // `a + (b - a) * random()`: `b - a` is exact when both are ints.
            let width = match (&ia, &ib) {
                (Value::Int(x), Value::Int(y)) => (i128::from(*y) - i128::from(*x)) as f64,
                _ => hi - lo,
            };
            Value::Float(lo + width * r)
        }
        "getrandbits" => {
            let k = int(0, "k")?;
            if k < 0 {
                return exc(pos, "number of bits must be non-negative (ValueError)");
            }
            if k > 63 {
                return unsup(pos, "getrandbits of over 63 bits is over the 64-bit integers modelled");
            }
            Value::Int(draw(it, g, &what, pos, |mt| mt.getrandbits(k as u32))? as i64)
        }
        "randrange" | "randint" => {
            let (start, stop, step) = if f == "randint" {
                (i128::from(int(0, "a")?), i128::from(int(1, "b")?) + 1, 1i128)
            } else if a.get(1, "stop").is_none_or(|v| matches!(v, Value::None)) {
                if a.kw("step").is_some() {
                    return exc(pos, "Missing a non-None stop argument (TypeError)");
                }
                let stop = i128::from(int(0, "start")?);
                if stop <= 0 {
                    return exc(pos, "empty range for randrange() (ValueError)");
                }
                (0, stop, 1)
            } else {
                let step = if a.get(2, "step").is_some() { i128::from(int(2, "step")?) } else { 1 };
                (i128::from(int(0, "start")?), i128::from(int(1, "stop")?), step)
            };
            let width = stop - start;
            let n = if step == 1 {
                width
            } else if step > 0 {
                (width + step - 1).div_euclid(step)
            } else if step < 0 {
                (width + step + 1).div_euclid(step)
            } else {
                return exc(pos, "zero step for randrange() (ValueError)");
            };
            if n <= 0 {
                return exc(pos, "empty range for randrange() (ValueError)");
            }
            let r = draw(it, g, &what, pos, |mt| mt.randbelow(n as u64))?;
            Value::Int((start + step * i128::from(r)) as i64)
        }
        "choice" => {
            let seq = sequence(it, &a.need(0, "seq")?, &what, pos)?;
            if seq.len() == 0 {
                return exc(pos, "Cannot choose from an empty sequence (IndexError)");
            }
            let i = draw(it, g, &what, pos, |mt| mt.randbelow(seq.len()))?;
            seq.at(i)
        }
        "choices" => {
            if a.kw("weights").is_some() || a.kw("cum_weights").is_some() || a.pos.len() > 1 {
                return unsup(pos, "`random.choices` with weights is not modelled");
            }
            let seq = sequence(it, &a.need(0, "population")?, &what, pos)?;
            let k = match a.kw("k") {
                Some(v) => to_int(&v, pos)?.max(0) as usize,
                None => 1,
            };
            if k > MAX_ITEMS {
                return limit(pos, "a list over the item limit");
            }
            it.alloc_items(pos, k)?;
            let n = seq.len() as f64;
            if k > 0 && seq.len() == 0 {
                return exc(pos, "list index out of range (IndexError)");
            }
            let idx =
                draw(it, g, &what, pos, |mt| (0..k).map(|_| (mt.random() * n).floor() as u64).collect::<Vec<_>>())?;
            Value::List(shared(idx.into_iter().map(|i| seq.at(i)).collect()))
        }
        "shuffle" => {
            let Value::List(l) = a.need(0, "x")? else {
                return unsup(pos, "`random.shuffle` of anything but a list is not modelled");
            };
            let len = l.borrow().len();
            it.charge_work(pos, len, "items shuffled")?;
            draw(it, g, &what, pos, |mt| {
                let mut v = l.borrow_mut();
                for i in (1..len).rev() {
                    let j = mt.randbelow(i as u64 + 1) as usize;
                    v.swap(i, j);
                }
            })?;
            Value::None
        }
        "sample" => {
            if a.kw("counts").is_some() {
                return unsup(pos, "`random.sample` with `counts=` is not modelled");
            }
            let seq = sequence(it, &a.need(0, "population")?, &what, pos)?;
            let k = int(1, "k")?;
            let n = seq.len();
            if k < 0 || k as u64 > n {
                return exc(pos, "Sample larger than population or is negative (ValueError)");
            }
            let k = k as u64;
            if k as usize > MAX_ITEMS {
                return limit(pos, "a list over the item limit");
            }
            it.alloc_items(pos, k as usize)?;
            // CPython's choice of method: a pool when the population is small next to `k`, else a
            // set of the indices drawn.
            let mut setsize: u64 = 21;
            if k > 5 {
                setsize += 4u64.saturating_pow(log4_ceil(k * 3));
            }
            let out: Vec<Value> = if n <= setsize {
                let mut pool: Vec<Value> = (0..n).map(|i| seq.at(i)).collect();
                it.charge_work(pos, n as usize, "items sampled")?;
                draw(it, g, &what, pos, |mt| {
                    let mut out = Vec::with_capacity(k as usize);
                    for i in 0..k {
                        let j = mt.randbelow(n - i) as usize;
                        out.push(pool[j].clone());
                        pool[j] = pool[(n - i - 1) as usize].clone();
                    }
                    out
                })?
            } else {
                it.charge_work(pos, k as usize, "items sampled")?;
                let picks = draw(it, g, &what, pos, |mt| {
                    let mut seen = std::collections::HashSet::new();
                    let mut picks = Vec::with_capacity(k as usize);
                    for _ in 0..k {
                        let mut j = mt.randbelow(n);
                        while !seen.insert(j) {
                            j = mt.randbelow(n);
                        }
                        picks.push(j);
                    }
                    picks
                })?;
                picks.into_iter().map(|j| seq.at(j)).collect()
            };
            Value::List(shared(out))
        }
        _ => return unsup(pos, format!("{what} is not modelled")),
    })
}

/// `_ceil(_log(x, 4))` as CPython computes it (`log(x) / log(4)` in floats).
fn log4_ceil(x: u64) -> u32 {
    ((x as f64).ln() / 4f64.ln()).ceil() as u32
}

fn generator_of(it: &Interp, a: &Args, pos: Pos) -> R<Shared<Gen>> {
    match a.kw("generator") {
        None | Some(Value::None) => Ok(it.rng.torch.clone()),
        Some(Value::Rng(g)) if g.borrow().kind == Kind::Torch => Ok(g),
        Some(Value::Unavailable(u)) => unsup(pos, super::rt::unavailable_msg(&u)),
        Some(other) => unsup(pos, format!("`generator=` given a {} value is not modelled", other.type_name())),
    }
}

/// `torch.randint(low=0, high, size, *, generator, dtype)`.
fn randint(it: &mut Interp, a: &Args) -> R<Value> {
    let pos = a.at;
    cpu_device(a, pos)?;
    let mut nums: Vec<Value> = Vec::new();
    let mut size = a.kw("size");
    for v in &a.pos {
        match v {
            Value::Tuple(_) | Value::List(_) if size.is_none() => size = Some(v.clone()),
            _ => nums.push(v.clone()),
        }
    }
    let (mut low, mut high) = match nums.as_slice() {
        [h] => (None, Some(h.clone())),
        [l, h] => (Some(l.clone()), Some(h.clone())),
        [] => (None, None),
        _ => return unsup(pos, "this form of torch.randint is not modelled (low, high, size)"),
    };
    if let Some(l) = a.kw("low") {
        low = Some(l);
    }
    if let Some(h) = a.kw("high") {
        high = Some(h);
    }
    let Some(size) = size else {
        return unsup(pos, "torch.randint without a tuple or list `size` is not modelled");
    };
    let Some(high) = high else { return exc(pos, "torch.randint() missing argument `high` (TypeError)") };
    let bound = |v: &Value| -> R<i64> {
        int_like(v, pos).unwrap_or_else(|| match v {
            Value::Tensor(t) if !t.borrow().dtype.is_float() && t.borrow().numel() == 1 => to_int(v, pos),
            other => unsup(pos, format!("a {} bound of torch.randint is not modelled (an int is)", other.type_name())),
        })
    };
    let low = match &low {
        Some(l) => bound(l)?,
        None => 0,
    };
    let high = bound(&high)?;
    let dtype = a.dtype()?.unwrap_or(DType::I64);
    if low >= high {
        return exc(
            pos,
            format!("random_ expects 'from' to be less than 'to', but got from={low} >= to={high} (RuntimeError)"),
        );
    }
    let (lo_ok, hi_ok) = match dtype {
        DType::Bool => (0, 2),
        DType::U8 => (0, 256),
        DType::I8 => (-128, 128),
        DType::I16 => (-32768, 32768),
        DType::I32 => (i64::from(i32::MIN), i64::from(i32::MAX) + 1),
        DType::F32 => (-(1 << 24), (1 << 24) + 1),
        DType::F64 => (-(1 << 53), (1 << 53) + 1),
        DType::I64 => (i64::MIN, i64::MAX),
    };
    if low < lo_ok || high > hi_ok {
        return unsup(pos, format!("torch.randint over the range of {} is not modelled", dtype.name()));
    }
    let shape = shape_args(&[size], pos)?;
    let range = (i128::from(high) - i128::from(low)) as u64;
    tensor_of_draws(it, a, "torch.randint", shape, dtype, |mt| {
        let v = if range >= 1 << 28 { mt.next_u64() } else { u64::from(mt.next_u32()) };
        cast(Sc::I((i128::from(v % range) + i128::from(low)) as i64), dtype)
    })
}

/// A tensor of `shape` whose elements are drawn in order, one `each` per element, from the call's
/// generator (charged to the memory budget before any is drawn).
fn tensor_of_draws(
    it: &mut Interp,
    a: &Args,
    what: &str,
    shape: Vec<usize>,
    dtype: DType,
    mut each: impl FnMut(&mut Mt) -> Sc,
) -> R<Value> {
    let pos = a.at;
    let numel: usize = shape.iter().product();
    it.charge(pos, numel)?;
    let g = generator_of(it, a, pos)?;
    let data = draw(it, &g, what, pos, |mt| (0..numel).map(|_| each(mt)).collect())?;
    Ok(Value::tensor(Tensor::new(dtype, shape, data)))
}

/// `torch.rand(*size, *, generator, dtype)`.
fn rand(it: &mut Interp, a: &Args) -> R<Value> {
    let pos = a.at;
    cpu_device(a, pos)?;
    let dims = match a.kw("size") {
        Some(s) => vec![s],
        None => a.pos.clone(),
    };
    let shape = shape_args(&dims, pos)?;
    let dtype = a.dtype()?.unwrap_or(DType::F32);
    if !dtype.is_float() {
        return unsup(pos, format!("torch.rand of {} is not modelled", dtype.name()));
    }
    tensor_of_draws(it, a, "torch.rand", shape, dtype, |mt| {
        Sc::F(if dtype == DType::F32 {
            f64::from(mt.next_u32() & 0xff_ffff) / f64::from(1u32 << 24)
        } else {
            (mt.next_u64() & ((1 << 53) - 1)) as f64 / (1u64 << 53) as f64
        })
    })
}

/// `torch.randperm(n, *, generator, dtype)`.
fn randperm(it: &mut Interp, a: &Args) -> R<Value> {
    let pos = a.at;
    cpu_device(a, pos)?;
    let n = to_int(&a.need(0, "n")?, pos)?;
    if n < 0 {
        return exc(pos, format!("n must be non-negative, got{n} (RuntimeError)"));
    }
    let dtype = a.dtype()?.unwrap_or(DType::I64);
    let max = match dtype {
        DType::Bool => return unsup(pos, "torch.randperm of torch.bool is not modelled"),
        DType::U8 => 256,
        DType::I8 => 128,
        DType::I16 => 32768,
        DType::I32 => 1 << 31,
        DType::F32 => 1 << 24,
        DType::F64 | DType::I64 => i64::MAX,
    };
    if n > max {
        return unsup(pos, format!("torch.randperm({n}) in {} is not modelled", dtype.name()));
    }
    let shape = shape_args(&[Value::Int(n)], pos)?;
    let n = n as usize;
    it.charge(pos, n)?;
    let g = generator_of(it, a, pos)?;
    // torch's other algorithm (64-bit draws, from n >= 2**32 / 20) is past the element limit
    // `shape_args` checked.
    const _: () = assert!(super::tensor::MAX_ELEMENTS < (u32::MAX / 20) as usize);
    let perm = draw(it, &g, "torch.randperm", pos, |mt| {
        let mut r: Vec<usize> = (0..n).collect();
        for i in 0..n.saturating_sub(1) {
            let z = (u64::from(mt.next_u32()) % (n - i) as u64) as usize;
            r.swap(i, i + z);
        }
        r
    })?;
    Ok(Value::tensor(Tensor::new(dtype, shape, perm.into_iter().map(|v| cast(Sc::I(v as i64), dtype)).collect())))
}

/// Both generators of an interpreter after the module has run.
pub(super) fn seal(it: &mut Interp) {
    it.rng.sealed = true;
}

#[cfg(test)]
mod tests {
    //! Every expected value below was printed by CPython 3.11.7's `random` or torch 2.15's CPU
    //! generator (the test venv), by `$PY scripts/rng_vectors.py`, with lines such as
    //! `r = random.Random(s); [r.getrandbits(32) for _ in range(3)]` and
    //! `g = torch.Generator().manual_seed(s); torch.randint(0, 2**32, (3,), generator=g).tolist()`;
    //! each test names the expression that printed its values.
    use super::*;

    fn py(seed: i64) -> Mt {
        Mt::from_key(&python_key(seed))
    }

    #[test]
    fn cpython_seeding_by_int_words() {
        // random.Random(s).getrandbits(32), three times.
        let cases: [(i64, [u64; 3]); 6] = [
            (0, [3626764237, 1654615998, 3255389356]),
            (1, [577090037, 2444712010, 3639700191]),
            (42, [2746317213, 478163327, 107420369]),
            ((1 << 32) + 5, [675479763, 2085189291, 1213270837]),
            (-7, [1390851128, 4071050724, 647892279]),
            (i64::MAX, [1359979423, 2819855560, 2711238091]),
        ];
        for (seed, want) in cases {
            let mut mt = py(seed);
            let got: Vec<u64> = (0..3).map(|_| mt.getrandbits(32)).collect();
            assert_eq!(got, want, "seed {seed}");
        }
    }

    #[test]
    fn cpython_draws() {
        // random.Random(42).random(), twice.
        let mut mt = py(42);
        assert_eq!([mt.random(), mt.random()], [0.6394267984578837, 0.025010755222666936]);
        // random.Random(0).randint(1, 6), eight times.
        let mut mt = py(0);
        let got: Vec<u64> = (0..8).map(|_| 1 + mt.randbelow(6)).collect();
        assert_eq!(got, [4, 4, 1, 3, 5, 4, 4, 3]);
        // r = random.Random(5); [r.getrandbits(40), r.getrandbits(64)]
        let mut mt = py(5);
        assert_eq!([mt.getrandbits(40), mt.getrandbits(64)], [281848216645, 6613812840851947673]);
        // r = random.Random(3); x = list(range(10)); r.shuffle(x)
        let mut mt = py(3);
        let mut x: Vec<u64> = (0..10).collect();
        for i in (1..10).rev() {
            let j = mt.randbelow(i + 1) as usize;
            x.swap(i as usize, j);
        }
        assert_eq!(x, [1, 5, 6, 0, 9, 4, 7, 2, 8, 3]);
    }

    #[test]
    fn sample_picks_cpythons_branch() {
        // CPython's set size for k = 5 is 21, for k = 6 is 21 + 4**3.
        assert_eq!(log4_ceil(18), 3);
        assert_eq!(log4_ceil(15), 2);
    }

    #[test]
    fn torch_streams() {
        // torch.randint(0, 2**32, (3,), generator=torch.Generator().manual_seed(s)): a range of
        // 2**32 takes 64-bit draws, whose low word is the second 32-bit draw.
        let cases: [(u64, [u64; 3]); 5] = [
            (0, [2546248239, 3626093760, 3684848379]),
            (1, [4282876139, 4005303368, 550290313]),
            (42, [3421126067, 787846414, 3348747335]),
            ((1 << 32) + 5, [236996814, 3570525885, 1562238070]),
            ((1 << 40) + 3, [303761048, 3607553667, 521102280]),
        ];
        for (seed, want) in cases {
            let mut mt = Mt::from_u32(seed as u32);
            let got: Vec<u64> = (0..3).map(|_| mt.next_u64() % (1 << 32)).collect();
            assert_eq!(got, want, "seed {seed}");
        }
        // ...(1000,))[620:626] at seed 0: across the engine's first twist.
        let mut mt = Mt::from_u32(0);
        let got: Vec<u64> = (0..626).map(|_| mt.next_u64() % (1 << 32)).skip(620).collect();
        assert_eq!(got, [1924758800, 4027112615, 2886394364, 1145454359, 2422637952, 4109995813]);
        // torch.randint(0, 10, (6,)) and (0, 2**30, (3,)) at seed 42: below 2**28 one 32-bit draw
        // per value, from 2**28 on a 64-bit one.
        let mut mt = Mt::from_u32(42);
        let got: Vec<u32> = (0..6).map(|_| mt.next_u32() % 10).collect();
        assert_eq!(got, [2, 7, 6, 4, 6, 5]);
        let mut mt = Mt::from_u32(42);
        let got: Vec<u64> = (0..3).map(|_| mt.next_u64() % (1 << 30)).collect();
        assert_eq!(got, [199900595, 787846414, 127521863]);
        // torch.randint(0, 100, (4,), generator=torch.Generator()): the default seed.
        let mut mt = Mt::from_u32(TORCH_DEFAULT_SEED as u32);
        let got: Vec<u32> = (0..4).map(|_| mt.next_u32() % 100).collect();
        assert_eq!(got, [10, 84, 37, 20]);
        // torch.rand(3) and torch.rand(2, dtype=torch.float64) at seed 1.
        let mut mt = Mt::from_u32(1);
        let got: Vec<f64> = (0..3).map(|_| f64::from(mt.next_u32() & 0xff_ffff) / 16_777_216.0).collect();
        assert_eq!(got, [0.7576315999031067, 0.2793108820915222, 0.40306925773620605]);
        let mut mt = Mt::from_u32(1);
        let got: Vec<f64> = (0..2).map(|_| (mt.next_u64() & ((1 << 53) - 1)) as f64 / (1u64 << 53) as f64).collect();
        assert_eq!(got, [0.06105327471962363, 0.2245545065676504]);
    }
}

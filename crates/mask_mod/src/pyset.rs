//! The iteration order of a Python set, as CPython gives it. Sets of ints (and bools) are ordered
//! by CPython's hash table: the hash of an int is the int itself (modulo 2**61 - 1, and -1 hashes
//! as -2), placed by linear probing then perturbation, the table growing fourfold when it is 60%
//! full. A set is built by adding its items one by one (a display, a comprehension, `set(list)`);
//! this module replays those additions. The order of a set of strings or floats depends on hash
//! randomisation or on more of CPython than is modelled here, so it is not given (`None`).

use super::ast::Pos;
use super::rt::{Interp, R, distinct, unsup};
use super::value::{Value, shared};

/// A set of `items` (its list, in CPython's order where that is modelled). `from` is the iterable
/// it was made from; `constant` marks a display of three or more literals, which CPython 3.11
/// compiles to a frozenset constant (built twice: from the literals, then from its own order, by
/// the compiler's constant merging) merged into a new set.
pub(super) fn make(it: &mut Interp, items: Vec<Value>, from: Option<&Value>, constant: bool, pos: Pos) -> R<Value> {
    // `set(a_set)` copies a table CPython may size differently from adding one by one.
    let from_set = from.is_some_and(|f| it.sets.find(f).is_some());
    let order = if from_set {
        None
    } else if constant {
        ordered(&items).and_then(|once| ordered(&once)).and_then(|twice| merged(&twice))
    } else {
        ordered(&items)
    };
    let known = order.is_some();
    // Distinct by hash (linear), as CPython's set is.
    let list = match order {
        Some(list) => list,
        None => distinct(items, pos)?,
    };
    let cell = shared(list);
    it.sets.push(&cell, known);
    Ok(Value::List(cell))
}

/// Refuses iterating a set whose order is not modelled, unless the consumer ignores order.
pub(super) fn check_order(it: &Interp, v: &Value, pos: Pos) -> R<()> {
    if it.sets.order_free == 0 && it.sets.find(v) == Some(false) {
        return unsup(
            pos,
            "iterating a set of values other than ints: CPython's order for them (string hashes are \
             randomised) is not modelled; sort it first",
        );
    }
    Ok(())
}

const MINSIZE: usize = 8;
const LINEAR_PROBES: usize = 9;
const PERTURB_SHIFT: u32 = 5;
const MODULUS: i128 = (1 << 61) - 1;

/// CPython's `hash()` of an int.
fn hash_int(v: i64) -> i64 {
    let m = i128::from(v).abs() % MODULUS;
    let h = if v < 0 { -m } else { m } as i64;
    if h == -1 { -2 } else { h }
}

struct Table {
    slots: Vec<Option<(i64, i64)>>,
    fill: usize,
}

impl Table {
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// `set_insert_clean`: the first empty slot of the probe sequence.
    fn insert_clean(slots: &mut [Option<(i64, i64)>], hash: i64, key: i64) {
        let mask = slots.len() - 1;
        let mut perturb = hash as u64;
        let mut i = (hash as u64 as usize) & mask;
        loop {
            if slots[i].is_none() {
                slots[i] = Some((hash, key));
                return;
            }
            if i + LINEAR_PROBES <= mask {
                for j in 1..=LINEAR_PROBES {
                    if slots[i + j].is_none() {
                        slots[i + j] = Some((hash, key));
                        return;
                    }
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i.wrapping_mul(5).wrapping_add(1).wrapping_add(perturb as usize)) & mask;
        }
    }

    fn resize(&mut self, minused: usize) {
        let mut size = MINSIZE;
        while size <= minused {
            size <<= 1;
        }
        let mut slots = vec![None; size];
        for (hash, key) in self.slots.iter().flatten() {
            Table::insert_clean(&mut slots, *hash, *key);
        }
        self.slots = slots;
        self.fill = self.slots.iter().flatten().count();
    }

    /// `set_add_entry` of an int (no deletions, so no dummy slots).
    fn add(&mut self, key: i64) {
        let hash = hash_int(key);
        let mask = self.mask();
        let mut perturb = hash as u64;
        let mut i = (hash as u64 as usize) & mask;
        loop {
            let probes = if i + LINEAR_PROBES <= mask { LINEAR_PROBES } else { 0 };
            for j in 0..=probes {
                match self.slots[i + j] {
                    None => {
                        self.slots[i + j] = Some((hash, key));
                        self.fill += 1;
                        if self.fill * 5 >= mask * 3 {
                            let used = self.fill;
                            self.resize(if used > 50_000 { used * 2 } else { used * 4 });
                        }
                        return;
                    }
                    Some((h, k)) if h == hash && k == key => return,
                    Some(_) => {}
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i.wrapping_mul(5).wrapping_add(1).wrapping_add(perturb as usize)) & mask;
        }
    }
}

/// `set_merge` of a frozenset (given in its table order) into an empty set: one resize to twice the
/// size when the empty table would be too full, then each key placed by `set_insert_clean`; when
/// the sizes agree, the table is copied as it is.
fn merged(frozen: &[Value]) -> Option<Vec<Value>> {
    let n = frozen.len();
    if n * 5 < (MINSIZE - 1) * 3 {
        return Some(frozen.to_vec());
    }
    let mut size = MINSIZE;
    while size <= n * 2 {
        size <<= 1;
    }
    // The frozenset's own size: adding n keys one by one.
    let mut t = Table { slots: vec![None; MINSIZE], fill: 0 };
    let keys: Vec<i64> = frozen
        .iter()
        .map(|v| match v {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(i64::from(*b)),
            _ => None,
        })
        .collect::<Option<_>>()?;
    for &k in &keys {
        t.add(k);
    }
    if t.slots.len() == size {
        return Some(frozen.to_vec());
    }
    let mut slots = vec![None; size];
    for &k in &keys {
        Table::insert_clean(&mut slots, hash_int(k), k);
    }
    Some(
        slots
            .iter()
            .flatten()
            .filter_map(|(_, k)| keys.iter().position(|x| x == k).map(|i| frozen[i].clone()))
            .collect(),
    )
}

/// The set CPython builds by adding `items` in order, in its iteration order; `None` when an item
/// is not an int or bool (its order is not modelled). A bool stays a bool, equal to its int.
pub(super) fn ordered(items: &[Value]) -> Option<Vec<Value>> {
    let mut t = Table { slots: vec![None; MINSIZE], fill: 0 };
    // Keyed by `Key` (the map type an enum's members use): one map's code in wasm, not two.
    let mut first: std::collections::HashMap<super::value::Key, Value> = std::collections::HashMap::new();
    for v in items {
        let k = match v {
            Value::Int(i) => *i,
            Value::Bool(b) => i64::from(*b),
            _ => return None,
        };
        first.entry(super::value::Key::Int(k)).or_insert_with(|| v.clone());
        t.add(k);
    }
    // The first-added value of each key is the one the set keeps (`{1, True}` is `{1}`).
    Some(t.slots.iter().flatten().filter_map(|&(_, k)| first.get(&super::value::Key::Int(k)).cloned()).collect())
}

//! The state of a seeded generator, below the values that hold it: the MT19937 engine that
//! CPython's `random` and torch's CPU generator both run, their seeding, and [`Gen`] (what a
//! `torch.Generator` or `random.Random` value is). How draws become values is `random`'s.

use std::cell::RefCell;
use std::rc::Rc;

use super::ast::Pos;

const N: usize = 624;
const M: usize = 397;

/// The MT19937 engine (32-bit outputs), as both CPython and torch run it.
#[derive(Clone)]
pub(super) struct Mt {
    state: Box<[u32; N]>,
    idx: usize,
}

impl std::fmt::Debug for Mt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mt(at {})", self.idx)
    }
}

impl Mt {
    /// Seeded by `init_genrand(seed)` (torch's seeding).
    pub(super) fn from_u32(seed: u32) -> Mt {
        let mut state = Box::new([0u32; N]);
        state[0] = seed;
        for i in 1..N {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32.wrapping_mul(prev ^ (prev >> 30)).wrapping_add(i as u32);
        }
        Mt { state, idx: N }
    }

    /// Seeded by `init_by_array(key)` (CPython's seeding).
    pub(super) fn from_key(key: &[u32]) -> Mt {
        let mut mt = Mt::from_u32(19_650_218);
        let s = &mut mt.state;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let prev = s[i - 1];
            s[i] = (s[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525)).wrapping_add(key[j]).wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                s[0] = s[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = s[i - 1];
            s[i] = (s[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                s[0] = s[N - 1];
                i = 1;
            }
        }
        s[0] = 0x8000_0000;
        mt
    }

    fn twist(&mut self) {
        let s = &mut self.state;
        for k in 0..N {
            let y = (s[k] & 0x8000_0000) | (s[(k + 1) % N] & 0x7fff_ffff);
            let mag = if y & 1 == 1 { 0x9908_b0df } else { 0 };
            s[k] = s[(k + M) % N] ^ (y >> 1) ^ mag;
        }
        self.idx = 0;
    }

    /// The next 32-bit output.
    pub(super) fn next_u32(&mut self) -> u32 {
        if self.idx >= N {
            self.twist();
        }
        let mut y = self.state[self.idx];
        self.idx += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// torch's 64-bit draw: two 32-bit draws, the first the high word.
    pub(super) fn next_u64(&mut self) -> u64 {
        let hi = u64::from(self.next_u32());
        (hi << 32) | u64::from(self.next_u32())
    }

    /// CPython's `getrandbits(k)` for `k <= 64`.
    pub(super) fn getrandbits(&mut self, k: u32) -> u64 {
        if k == 0 {
            return 0;
        }
        if k <= 32 {
            return u64::from(self.next_u32() >> (32 - k));
        }
        let low = u64::from(self.next_u32());
        let high = u64::from(self.next_u32() >> (64 - k));
        (high << 32) | low
    }

    /// CPython's `_randbelow(n)` for `n >= 1`: `getrandbits(n.bit_length())` until below `n`.
    pub(super) fn randbelow(&mut self, n: u64) -> u64 {
        let k = 64 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }

    /// CPython's `random()`: 53 bits from two draws.
    pub(super) fn random(&mut self) -> f64 {
        let a = f64::from(self.next_u32() >> 5);
        let b = f64::from(self.next_u32() >> 6);
        (a * 67_108_864.0 + b) * (1.0 / 9_007_199_254_740_992.0)
    }
}

/// The key CPython's `seed(int)` gives `init_by_array`: the 32-bit words of `abs(seed)`, least
/// significant first (`[0]` for 0).
pub(super) fn python_key(seed: i64) -> Vec<u32> {
    let mut n = seed.unsigned_abs();
    let mut key = vec![(n & 0xffff_ffff) as u32];
    n >>= 32;
    if n > 0 {
        key.push(n as u32);
    }
    key
}

/// torch's seed for a new `torch.Generator()` (`default_rng_seed_val`).
pub(super) const TORCH_DEFAULT_SEED: u64 = 67_280_421_310_721;

/// Whose generator it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A `torch.Generator` (CPU), or torch's default one.
    Torch,
    /// A `random.Random`, or the `random` module's own.
    Python,
}

/// A generator: its engine once seeded, where that happened, and how many statements had been
/// skipped then (a draw after a later skip is refused: the skipped statement could have drawn).
#[derive(Debug)]
pub(super) struct Gen {
    pub(super) kind: Kind,
    pub(super) mt: Option<Mt>,
    pub(super) seed: u64,
    /// Where it was seeded (`None`: at construction, or never).
    pub(super) seeded_at: Option<Pos>,
    pub(super) skipped_then: usize,
    /// Whether it is the module-level one (`random.*`, torch's default).
    pub(super) global: bool,
}

impl Gen {
    pub(super) fn unseeded(kind: Kind, global: bool) -> Gen {
        Gen { kind, mt: None, seed: 0, seeded_at: None, skipped_then: 0, global }
    }
    pub(super) fn type_name(&self) -> &'static str {
        match self.kind {
            Kind::Torch => "Generator",
            Kind::Python => "Random",
        }
    }
}

/// The module-level generators (`Rc<RefCell<_>>` is the values' `Shared`): `random`'s and torch's default.
#[derive(Debug)]
pub(super) struct Globals {
    pub(super) python: Rc<RefCell<Gen>>,
    pub(super) torch: Rc<RefCell<Gen>>,
    /// Set once the module has run: a draw while the mask function is traced is refused.
    pub(super) sealed: bool,
}

impl Default for Globals {
    fn default() -> Globals {
        Globals {
            python: Rc::new(RefCell::new(Gen::unseeded(Kind::Python, true))),
            torch: Rc::new(RefCell::new(Gen::unseeded(Kind::Torch, true))),
            sealed: false,
        }
    }
}

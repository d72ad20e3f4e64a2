//! Fuzzes the mask_mod reader in process: texts mutated from the corpus (tests/data/mask_mods),
//! the library preludes, the hostile cases of issue 30 (tests/support/hostile.rs) and hostile
//! shapes, each parsed and evaluated. None may panic, and none
//! may take over 2 s. `HASSEFLOW_FUZZ_CASES` sets the count (default 3,000 in the suite; the
//! 100,000-case run is recorded in docs/BENCHMARKS.md).

use std::time::{Duration, Instant};

use hasseflow_core::interop::mask_mod::MaskMod;
use hasseflow_core::rng::SplitMix64;

#[path = "support/hostile.rs"]
mod hostile;

const TOKENS: [&str; 40] = [
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    ".",
    "=",
    "==",
    "+",
    "-",
    "*",
    "//",
    "%",
    "**",
    "&",
    "|",
    "~",
    "<",
    ">=",
    "\n",
    "\n    ",
    "\t",
    "\\\n",
    "def ",
    "lambda ",
    "return ",
    "if ",
    "for ",
    "while ",
    "torch.",
    "q_idx",
    "kv_idx",
    "0",
    "99999999999999999999999",
    "1e-5",
    "\"",
    "#",
];

fn seeds() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mask_mods");
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().extension().is_some_and(|x| x == "py"))
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    let lib = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../mask_mod/src/library");
    for f in ["attn_gym_masks.py", "masking_utils.py", "flex_attention.py"] {
        if let Ok(t) = std::fs::read_to_string(lib.join(f)) {
            out.push(t);
        }
    }
    out.push("def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n".into());
    // The hostile cases (issue 30), each number of 4 digits or more cut to its first two (so that
    // a mutant of one is quick: at full size they run to the budgets, which take seconds), and
    // their long repetitions to 3,000 characters (mutations grow them again).
    for case in hostile::cases() {
        let text: String = case.text.chars().take(3000).collect();
        let mut cut = String::with_capacity(text.len());
        let mut run = 0;
        for c in text.replace("10 ** 6", "10 ** 4").chars() {
            run = if c.is_ascii_digit() { run + 1 } else { 0 };
            if run <= 2 || !c.is_ascii_digit() {
                cut.push(c);
            }
        }
        out.push(cut);
    }
    out.sort();
    assert!(out.len() >= 60, "the corpus is missing: {} seeds", out.len());
    out
}

fn mutate(rng: &mut SplitMix64, seeds: &[String]) -> String {
    let mut pick = |k: usize| (rng.next_u64() % k.max(1) as u64) as usize;
    let base = seeds[pick(seeds.len())].clone();
    let mut chars: Vec<char> = base.chars().collect();
    for _ in 0..1 + pick(6) {
        let len = chars.len();
        let at = pick(len + 1);
        match pick(9) {
            6 | 7 if len > 0 => {
                // Keep the syntax: another digit, or another operator character.
                let k = pick(len);
                let c = chars[k];
                if c.is_ascii_digit() {
                    chars[k] = char::from(b'0' + pick(10) as u8);
                } else if "<>+-*%&|^~".contains(c) {
                    chars[k] = "<>+-*%&|^~".chars().nth(pick(10)).unwrap_or('+');
                }
            }
            0 => {
                let tok: Vec<char> = TOKENS[pick(TOKENS.len())].chars().collect();
                chars.splice(at..at, tok);
            }
            1 if len > 0 => {
                let end = (at + 1 + pick(40)).min(len);
                chars.drain(at.min(len)..end);
            }
            2 if len > 0 => {
                let start = pick(len);
                let end = (start + 1 + pick(200)).min(len);
                let span: Vec<char> = chars[start..end].to_vec();
                for _ in 0..1 + pick(3) {
                    chars.splice(at..at, span.iter().copied());
                }
            }
            3 => {
                let other: Vec<char> = seeds[pick(seeds.len())].chars().collect();
                let start = pick(other.len());
                let end = (start + pick(300)).min(other.len());
                chars.splice(at..at, other[start..end].iter().copied());
            }
            4 if len > 0 => {
                let c = chars[pick(len)];
                chars.splice(at..at, std::iter::repeat_n(c, 1 + pick(3000)));
            }
            _ => {
                let nest = 1 + pick(400);
                let s: String = "(".repeat(nest) + "q_idx" + &")".repeat(nest);
                chars.splice(at..at, s.chars());
            }
        }
    }
    chars.into_iter().collect()
}

#[test]
fn mutated_mask_mods_never_panic_and_finish_in_bounded_time() {
    let cases: usize = std::env::var("HASSEFLOW_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let seeds = seeds();
    let mut rng = SplitMix64::new(2026);
    let (mut accepted, mut slowest, mut total) = (0usize, Duration::ZERO, Duration::ZERO);
    for i in 0..cases {
        let text = mutate(&mut rng, &seeds);
        let start = Instant::now();
        if let Ok(m) = MaskMod::parse(&text) {
            accepted += 1;
            let _ = m.to_mask(48);
            let _ = m.to_mask_at(17, 1, 2);
        }
        let took = start.elapsed();
        total += took;
        if took > slowest {
            slowest = took;
        }
        assert!(took < Duration::from_secs(2), "case {i} took {took:?}:\n{text}");
    }
    println!(
        "{cases} mutated texts: {accepted} accepted, 0 panics; slowest {:.1} ms, mean {:.3} ms",
        slowest.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e3 / cases.max(1) as f64
    );
}

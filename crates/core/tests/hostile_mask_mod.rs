//! The second round of hostile mask_mod texts (issue 30): each ends as torch's exact result or as a
//! true one-line refusal within 10 s (the interpreter's 8,000,000-step budget takes a second or two
//! on a loaded machine), on a 1 MiB stack (the app's wasm stack; Python's threads have 8 MiB),
//! never as a panic, an allocation abort or a stack overflow. The cases (tests/support/hostile.rs)
//! are seeds of the fuzz target too.

use std::time::{Duration, Instant};

use hasseflow_core::interop::mask_mod::MaskMod;

#[path = "support/hostile.rs"]
mod hostile;
use hostile::{Expect, cases};

/// The app's wasm stack (1 MiB); the dev profile is optimised (opt-level 2), as release is.
const STACK_BYTES: usize = 1 << 20;

fn budget() -> Duration {
    Duration::from_secs(10)
}

/// Parses and evaluates on a thread with a small stack; the outcome as text.
fn run(text: String, n: usize) -> (Result<Vec<String>, String>, Duration) {
    std::thread::Builder::new()
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let start = Instant::now();
            let r = MaskMod::parse(&text).and_then(|m| m.to_mask(n)).map(|m| m.to_row_strings());
            (r.map_err(|e| e.to_string()), start.elapsed())
        })
        .expect("a thread")
        .join()
        .expect("the reader panicked")
}

#[test]
fn every_hostile_text_ends_as_torch_does_or_as_a_true_refusal_in_bounded_time() {
    let mut failures = Vec::new();
    for case in cases() {
        let (got, took) = run(case.text.clone(), case.n);
        let ok = match (&case.expect, &got) {
            (Expect::Rows(want), Ok(rows)) => rows == want,
            (Expect::Refused(part), Err(msg)) => msg.contains(part) && !msg.contains('\n'),
            _ => false,
        };
        if !ok {
            let short = |s: String| s.chars().take(300).collect::<String>();
            failures.push(format!(
                "{}: expected {}, got {}",
                case.name,
                short(format!("{:?}", case.expect)),
                short(format!("{got:?}"))
            ));
        }
        if took > budget() {
            failures.push(format!("{}: took {took:?}", case.name));
        }
        println!(
            "{:<40} {:>8.1} ms  {}",
            case.name,
            took.as_secs_f64() * 1e3,
            match &got {
                Ok(_) => "read".to_string(),
                Err(e) => e.chars().take(110).collect(),
            }
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

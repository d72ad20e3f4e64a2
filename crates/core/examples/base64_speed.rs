//! `core::base64` against the `base64` crate on the packed bits of a 16384 x 16384 mask (32 MiB,
//! a mask file's `packed` at the largest size the app draws), best of 5:
//! `cargo run --release -p hasseflow-core --example base64_speed`.

use std::time::{Duration, Instant};

use base64::Engine as _;

fn best<T>(mut run: impl FnMut() -> T) -> (T, Duration) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..5 {
        let t = Instant::now();
        out = Some(run());
        best = best.min(t.elapsed());
    }
    (out.expect("five runs"), best)
}

fn main() {
    let mut rng = hasseflow_core::rng::SplitMix64::new(16384);
    let bytes: Vec<u8> = (0..16384 * 16384 / 8).map(|_| rng.next_u64() as u8).collect();
    let (ours, encode) = best(|| hasseflow_core::base64::STANDARD.encode(&bytes));
    let (theirs, crate_encode) = best(|| base64::engine::general_purpose::STANDARD.encode(&bytes));
    assert_eq!(ours, theirs);
    let (back, decode) = best(|| hasseflow_core::base64::STANDARD.decode(&ours));
    let (crate_back, crate_decode) = best(|| base64::engine::general_purpose::STANDARD.decode(&ours));
    assert_eq!(back.ok().as_ref(), Some(&bytes));
    assert_eq!(crate_back.ok().as_ref(), Some(&bytes));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "base64 of {} bytes: encode {:.1} ms (crate {:.1} ms), decode {:.1} ms (crate {:.1} ms)",
        bytes.len(),
        ms(encode),
        ms(crate_encode),
        ms(decode),
        ms(crate_decode)
    );
}

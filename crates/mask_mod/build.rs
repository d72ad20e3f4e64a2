//! The library preludes (`src/library/*.py`) as the interpreter embeds them: each full-line
//! comment emptied, its line kept, so every position the interpreter reports is the same as in
//! the source file. The comments are for readers of the source; the module the app loads on first
//! use carried them (about 6.5 KB of its gzipped size).

use std::{env, fs, path::Path};

/// The preludes, by file name in `src/library/`.
const PRELUDES: [&str; 7] = [
    "attn_gym_masks",
    "attn_gym_utils",
    "torch_nested",
    "masking_utils",
    "flex_attention",
    "block_mask",
    "torch_nn_module",
];

fn main() {
    let out = env::var("OUT_DIR").expect("cargo sets OUT_DIR for a build script");
    for name in PRELUDES {
        let src = format!("src/library/{name}.py");
        println!("cargo::rerun-if-changed={src}");
        let text = fs::read_to_string(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let mut kept = String::with_capacity(text.len());
        for line in text.lines() {
            if !line.trim_start().starts_with('#') {
                kept.push_str(line);
            }
            kept.push('\n');
        }
        let to = Path::new(&out).join(format!("{name}.py"));
        fs::write(&to, kept).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    }
}

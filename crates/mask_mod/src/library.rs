//! The table of library masks: Python preludes, written for hasseflow from the libraries'
//! documented semantics, run by the same interpreter when a text imports from them. They are
//! embedded without their comment lines (`build.rs`), their line numbers unchanged. Each is
//! checked against the library itself by `tests/python/test_library_masks.py`.

/// A library module hasseflow provides.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lib {
    /// The module's canonical name.
    pub(super) module: &'static str,
    pub(super) source: &'static str,
}

/// A prelude as `build.rs` wrote it (`src/library/NAME.py` without its comment lines).
macro_rules! prelude {
    ($name:literal) => {
        include_str!(concat!(env!("OUT_DIR"), "/", $name, ".py"))
    };
}

const ATTN_GYM: Lib = Lib { module: "attn_gym.masks", source: prelude!("attn_gym_masks") };
const ATTN_GYM_UTILS: Lib = Lib { module: "attn_gym.utils", source: prelude!("attn_gym_utils") };
const TORCH_NESTED: Lib = Lib { module: "torch.nested", source: prelude!("torch_nested") };
const MASKING_UTILS: Lib = Lib { module: "transformers.masking_utils", source: prelude!("masking_utils") };
/// `torch.nn.Module`, a base class of mask code (not a library of masks: not in [`LIBRARIES`]).
const TORCH_NN_MODULE: Lib = Lib { module: "torch.nn.modules.module", source: prelude!("torch_nn_module") };
const FLEX: Lib = Lib {
    module: "torch.nn.attention.flex_attention",
    source: concat!(prelude!("flex_attention"), "\n", prelude!("block_mask")),
};

/// The libraries, for documentation and listing.
pub const LIBRARIES: [&str; 5] = [
    "attn_gym.masks",
    "attn_gym.utils",
    "transformers.masking_utils",
    "torch.nn.attention.flex_attention",
    "torch.nested",
];

/// The prelude that serves `module`, if any.
pub(super) fn prelude_for(module: &str) -> Option<Lib> {
    if module == "attn_gym" || module == "attn_gym.masks" || module.starts_with("attn_gym.masks.") {
        return Some(ATTN_GYM);
    }
    match module {
        "attn_gym.utils" => Some(ATTN_GYM_UTILS),
        "torch.nested" => Some(TORCH_NESTED),
        "transformers.masking_utils" => Some(MASKING_UTILS),
        "torch.nn.attention.flex_attention" => Some(FLEX),
        "torch.nn.modules.module" => Some(TORCH_NN_MODULE),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded preludes are the source files, line for line, with each full-line comment
    /// emptied: the interpreter's positions are the source file's.
    #[test]
    fn preludes_are_their_files_without_comment_lines() {
        let files = [
            (ATTN_GYM.source, include_str!("library/attn_gym_masks.py")),
            (ATTN_GYM_UTILS.source, include_str!("library/attn_gym_utils.py")),
            (TORCH_NESTED.source, include_str!("library/torch_nested.py")),
            (MASKING_UTILS.source, include_str!("library/masking_utils.py")),
            (TORCH_NN_MODULE.source, include_str!("library/torch_nn_module.py")),
            (
                FLEX.source,
                concat!(include_str!("library/flex_attention.py"), "\n", include_str!("library/block_mask.py")),
            ),
        ];
        for (embedded, file) in files {
            let (a, b): (Vec<&str>, Vec<&str>) = (embedded.lines().collect(), file.lines().collect());
            assert_eq!(a.len(), b.len());
            let mut emptied = 0;
            for (e, f) in a.iter().zip(&b) {
                if f.trim_start().starts_with('#') {
                    assert_eq!(*e, "");
                    emptied += 1;
                } else {
                    assert_eq!(e, f);
                }
            }
            assert!(emptied > 0, "a prelude without comments: {}", &file[..40]);
        }
    }
}

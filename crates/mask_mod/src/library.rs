//! The table of library masks: Python preludes, written for hasseflow from the libraries'
//! documented semantics, run by the same interpreter when a text imports from them. Each is
//! checked against the library itself by `tests/python/test_library_masks.py`.

/// A library module hasseflow provides.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lib {
    /// The module's canonical name.
    pub(super) module: &'static str,
    pub(super) source: &'static str,
}

const ATTN_GYM: Lib = Lib { module: "attn_gym.masks", source: include_str!("library/attn_gym_masks.py") };
const ATTN_GYM_UTILS: Lib = Lib { module: "attn_gym.utils", source: include_str!("library/attn_gym_utils.py") };
const TORCH_NESTED: Lib = Lib { module: "torch.nested", source: include_str!("library/torch_nested.py") };
const MASKING_UTILS: Lib =
    Lib { module: "transformers.masking_utils", source: include_str!("library/masking_utils.py") };
const FLEX: Lib = Lib {
    module: "torch.nn.attention.flex_attention",
    source: concat!(include_str!("library/flex_attention.py"), "\n", include_str!("library/block_mask.py")),
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
        _ => None,
    }
}

//! The kernels' uniform parameters: one `#[repr(C)]` struct per `struct Params` in
//! `src/shaders/*.wgsl`, field for field, with its size checked at compile time against the
//! WGSL layout (uniform structs round up to 16 bytes).

use bytemuck::{Pod, Zeroable};

/// `embed.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct EmbedParams {
    /// Copies times `n`.
    pub rows: u32,
    pub n: u32,
    pub d: u32,
    /// First perturbed input of this batch.
    pub first: u32,
}

/// `matmul.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct MatmulParams {
    pub rows: u32,
    pub din: u32,
    pub dout: u32,
    /// Offset of W in the weights.
    pub w: u32,
    /// Offset of the bias in the weights.
    pub b: u32,
    /// [`MatmulMode`] as the kernel reads it.
    pub mode: u32,
    pub _pad: [u32; 2],
}

/// What `matmul.wgsl` does with its product.
#[derive(Clone, Copy, Debug)]
#[repr(u32)]
pub(crate) enum MatmulMode {
    /// `dst = x W + b`.
    Write = 0,
    /// `dst = gelu(x W + b)`.
    Gelu = 1,
    /// `dst += x W + b`.
    ResidualAdd = 2,
}

/// `attention.wgsl` (both entry points).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct AttentionParams {
    /// Copies times `n` (`main`) or `n` (`record`).
    pub rows: u32,
    pub n: u32,
    pub d: u32,
    pub heads: u32,
    pub dh: u32,
    /// `u32` words per mask row.
    pub words: u32,
    /// Offset of this layer in the probability buffer (`record`).
    pub probs: u32,
    /// `1 / sqrt(dh)`.
    pub scale: f32,
    /// Per head: offset of its mask in the mask buffer (`array<vec4<u32>, 2>`).
    pub mask_offset: [u32; 8],
}

/// `layernorm.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct LayerNormParams {
    pub rows: u32,
    pub d: u32,
    /// Offset of the gain in the weights.
    pub gain: u32,
    /// Offset of the bias in the weights.
    pub bias: u32,
}

/// `influence.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct InfluenceParams {
    /// Perturbed copies times `n`.
    pub rows: u32,
    pub n: u32,
    pub d: u32,
    pub first: u32,
    /// Offset of this layer in the influence buffer.
    pub layer: u32,
    pub _pad: [u32; 3],
}

const _: () = assert!(size_of::<EmbedParams>() == 16);
const _: () = assert!(size_of::<MatmulParams>() == 32);
const _: () = assert!(size_of::<AttentionParams>() == 64);
const _: () = assert!(size_of::<LayerNormParams>() == 16);
const _: () = assert!(size_of::<InfluenceParams>() == 32);

/// The largest of the parameter structs: every uniform slot holds one.
pub(crate) const MAX_PARAMS: usize = size_of::<AttentionParams>();
const _: () = assert!(
    MAX_PARAMS >= size_of::<EmbedParams>()
        && MAX_PARAMS >= size_of::<MatmulParams>()
        && MAX_PARAMS >= size_of::<LayerNormParams>()
        && MAX_PARAMS >= size_of::<InfluenceParams>()
);

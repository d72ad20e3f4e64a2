// y = bias + x W for every row (W input-major, din x dout, inside the weights buffer).
// mode 0: dst = y; mode 1: dst = gelu(y); mode 2: dst += y (the residual), summed in the CPU
// reference's order: dst + bias first, then the products.

struct Params {
    rows: u32,
    din: u32,
    dout: u32,
    w: u32,      // offset of W in weights
    b: u32,      // offset of the bias
    mode: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<storage, read> weights: array<f32>;

fn gelu(x: f32) -> f32 {
    let c = 0.7978846;
    return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * nw.x + wg.x) * 64u + li;
    if (i >= p.rows * p.dout) {
        return;
    }
    let row = i / p.dout;
    let j = i % p.dout;
    var acc = weights[p.b + j];
    if (p.mode == 2u) {
        acc = dst[i] + acc;
    }
    let xbase = row * p.din;
    for (var k = 0u; k < p.din; k = k + 1u) {
        acc = acc + src[xbase + k] * weights[p.w + k * p.dout + j];
    }
    if (p.mode == 1u) {
        acc = gelu(acc);
    }
    dst[i] = acc;
}

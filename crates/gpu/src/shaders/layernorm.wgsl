// LayerNorm of every d-wide row, in place (biased variance, eps 1e-5), one invocation per row.

struct Params {
    rows: u32,
    d: u32,
    gain: u32,   // offset of the gain in weights
    bias: u32,   // offset of the bias
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> h: array<f32>;
@group(0) @binding(2) var<storage, read> weights: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let row = (wg.y * nw.x + wg.x) * 64u + li;
    if (row >= p.rows) {
        return;
    }
    let base = row * p.d;
    var sum = 0.0;
    for (var j = 0u; j < p.d; j = j + 1u) {
        sum = sum + h[base + j];
    }
    let mean = sum / f32(p.d);
    var sq = 0.0;
    for (var j = 0u; j < p.d; j = j + 1u) {
        let c = h[base + j] - mean;
        sq = sq + c * c;
    }
    let inv = 1.0 / sqrt(sq / f32(p.d) + 1e-5);
    for (var j = 0u; j < p.d; j = j + 1u) {
        h[base + j] = (h[base + j] - mean) * inv * weights[p.gain + j] + weights[p.bias + j];
    }
}

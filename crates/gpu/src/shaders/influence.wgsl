// influence[layer][q][k] = || h(copy of k)[q] - h(copy 0)[q] ||_2 for the batch's perturbed
// copies c = 1..copies (copy c perturbs input first + c - 1).

struct Params {
    rows: u32,       // (copies - 1) * n
    n: u32,
    d: u32,
    first: u32,
    layer: u32,      // offset of this layer in the influence buffer
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> h: array<f32>;
@group(0) @binding(2) var<storage, read_write> influence: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * nw.x + wg.x) * 64u + li;
    if (i >= p.rows) {
        return;
    }
    let c = i / p.n + 1u;
    let q = i % p.n;
    let k = p.first + c - 1u;
    let a = (c * p.n + q) * p.d;
    let b = q * p.d;
    var sq = 0.0;
    for (var j = 0u; j < p.d; j = j + 1u) {
        let diff = h[a + j] - h[b + j];
        sq = sq + diff * diff;
    }
    influence[p.layer + q * p.n + k] = sqrt(sq);
}

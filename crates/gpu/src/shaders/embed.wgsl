// Input states of one batch of copies: copy 0 is the unperturbed pass, copy c >= 1 adds the
// perturbation (stored after the n x d inputs) to input `first + c - 1`.

struct Params {
    rows: u32,   // copies * n
    n: u32,
    d: u32,
    first: u32,  // first perturbed input of this batch
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> inputs: array<f32>;
@group(0) @binding(2) var<storage, read_write> h: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * nw.x + wg.x) * 64u + li;
    if (i >= p.rows * p.d) {
        return;
    }
    let row = i / p.d;
    let j = i % p.d;
    let c = row / p.n;
    let pos = row % p.n;
    var x = inputs[pos * p.d + j];
    if (c > 0u && pos == p.first + c - 1u) {
        x = x + inputs[p.n * p.d + j];
    }
    h[i] = x;
}

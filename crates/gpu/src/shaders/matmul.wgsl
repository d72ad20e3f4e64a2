// y = bias + x W for every row (W input-major, din x dout, inside the weights buffer), by 16 x 16
// tiles staged in workgroup memory: one invocation per output element, 2D grid (x: output
// columns, y: rows). mode 0: dst = y; mode 1: dst = gelu(y); mode 2: dst += y (the residual).
// Sums run in the CPU reference's order: bias (after dst for mode 2) first, then the products
// by increasing input index.

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

var<workgroup> tile_x: array<f32, 256>;
var<workgroup> tile_w: array<f32, 256>;

fn gelu(x: f32) -> f32 {
    let c = 0.7978846;
    return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wg.y * 16u + lid.y;
    let col = wg.x * 16u + lid.x;
    let valid = row < p.rows && col < p.dout;
    let i = row * p.dout + col;
    var acc = 0.0;
    if (valid) {
        acc = weights[p.b + col];
        if (p.mode == 2u) {
            acc = dst[i] + acc;
        }
    }
    for (var t = 0u; t < p.din; t = t + 16u) {
        let xk = t + lid.x;
        var xv = 0.0;
        if (row < p.rows && xk < p.din) {
            xv = src[row * p.din + xk];
        }
        tile_x[lid.y * 16u + lid.x] = xv;
        let wk = t + lid.y;
        var wv = 0.0;
        if (wk < p.din && col < p.dout) {
            wv = weights[p.w + wk * p.dout + col];
        }
        tile_w[lid.y * 16u + lid.x] = wv;
        workgroupBarrier();
        let end = min(16u, p.din - t);
        for (var k = 0u; k < end; k = k + 1u) {
            acc = acc + tile_x[lid.y * 16u + k] * tile_w[k * 16u + lid.x];
        }
        workgroupBarrier();
    }
    if (valid) {
        if (p.mode == 1u) {
            acc = gelu(acc);
        }
        dst[i] = acc;
    }
}

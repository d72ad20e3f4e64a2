// y = bias + x W for every row (W input-major, din x dout, inside the weights buffer).
// Each workgroup of 16 x 16 invocations computes a 64 x 64 output tile, 4 x 4 per invocation,
// from 64 x 16 slices of x and 16 x 64 slices of W staged in workgroup memory (register and
// shared-memory blocking: 16 multiply-adds per 8 loads). 2D grid: x over output columns, y over
// rows. mode 0: dst = y; mode 1: dst = gelu(y); mode 2: dst += y (the residual).
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

const TILE: u32 = 64u;
const STEP: u32 = 16u;

var<workgroup> tile_x: array<f32, 1024>;  // TILE rows x STEP inputs
var<workgroup> tile_w: array<f32, 1024>;  // STEP inputs x TILE columns

fn gelu(x: f32) -> f32 {
    let c = 0.7978846;
    return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let rows = p.rows;
    let din = p.din;
    let dout = p.dout;
    let row0 = wg.y * TILE + lid.y * 4u;
    let col0 = wg.x * TILE + lid.x * 4u;
    var acc: array<array<f32, 4>, 4>;
    for (var r = 0u; r < 4u; r = r + 1u) {
        for (var c = 0u; c < 4u; c = c + 1u) {
            let row = row0 + r;
            let col = col0 + c;
            var a = 0.0;
            if (row < rows && col < dout) {
                a = weights[p.b + col];
                if (p.mode == 2u) {
                    a = dst[row * dout + col] + a;
                }
            }
            acc[r][c] = a;
        }
    }
    for (var t = 0u; t < din; t = t + STEP) {
        // 256 invocations stage 1024 + 1024 values, 4 each.
        for (var e = 0u; e < 4u; e = e + 1u) {
            let slot = li * 4u + e;
            let xr = slot / STEP;
            let xk = slot % STEP;
            let grow = wg.y * TILE + xr;
            var xv = 0.0;
            if (grow < rows && t + xk < din) {
                xv = src[grow * din + t + xk];
            }
            tile_x[slot] = xv;
            let wk = slot / TILE;
            let wc = slot % TILE;
            let gcol = wg.x * TILE + wc;
            var wv = 0.0;
            if (t + wk < din && gcol < dout) {
                wv = weights[p.w + (t + wk) * dout + gcol];
            }
            tile_w[slot] = wv;
        }
        workgroupBarrier();
        let end = min(STEP, din - t);
        for (var k = 0u; k < end; k = k + 1u) {
            var xs: array<f32, 4>;
            var ws: array<f32, 4>;
            for (var i = 0u; i < 4u; i = i + 1u) {
                xs[i] = tile_x[(lid.y * 4u + i) * STEP + k];
                ws[i] = tile_w[k * TILE + lid.x * 4u + i];
            }
            for (var r = 0u; r < 4u; r = r + 1u) {
                for (var c = 0u; c < 4u; c = c + 1u) {
                    acc[r][c] = acc[r][c] + xs[r] * ws[c];
                }
            }
        }
        workgroupBarrier();
    }
    for (var r = 0u; r < 4u; r = r + 1u) {
        for (var c = 0u; c < 4u; c = c + 1u) {
            let row = row0 + r;
            let col = col0 + c;
            if (row < rows && col < dout) {
                var y = acc[r][c];
                if (p.mode == 1u) {
                    y = gelu(y);
                }
                dst[row * dout + col] = y;
            }
        }
    }
}

// Masked multi-head softmax attention, one invocation per (row, head), where a row is one
// position of one copy. Keys are the set bits of the head's mask row (M[q][k] = 1: q reads k);
// a fully masked row writes 0 (FlexAttention's convention), never 0/0.
// `record` writes the unperturbed copy's attention probabilities averaged over heads.

struct Params {
    rows: u32,       // copies * n (main) or n (record)
    n: u32,
    d: u32,
    heads: u32,
    dh: u32,
    words: u32,      // u32 words per mask row
    probs: u32,      // offset of this layer in the probability buffer (record)
    scale: f32,      // 1 / sqrt(dh)
    mask_offset: array<vec4<u32>, 2>,  // per head: offset of its mask in the mask buffer
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<storage, read> masks: array<u32>;
@group(0) @binding(4) var<storage, read_write> probs: array<f32>;

fn mask_base(head: u32, q: u32) -> u32 {
    return p.mask_offset[head / 4u][head % 4u] + q * p.words;
}

fn score(row: u32, key_row: u32, head: u32) -> f32 {
    let qb = row * 3u * p.d + head * p.dh;
    let kb = key_row * 3u * p.d + p.d + head * p.dh;
    var s = 0.0;
    for (var t = 0u; t < p.dh; t = t + 1u) {
        s = s + qkv[qb + t] * qkv[kb + t];
    }
    return s * p.scale;
}

fn row_max(row: u32, copy_base: u32, q: u32, head: u32) -> vec2<f32> {
    let mb = mask_base(head, q);
    var mx = -3.0e38;
    var count = 0.0;
    for (var w = 0u; w < p.words; w = w + 1u) {
        var bits = masks[mb + w];
        while (bits != 0u) {
            let k = w * 32u + countTrailingZeros(bits);
            bits = bits & (bits - 1u);
            mx = max(mx, score(row, copy_base + k, head));
            count = count + 1.0;
        }
    }
    return vec2<f32>(mx, count);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * nw.x + wg.x) * 64u + li;
    if (i >= p.rows * p.heads) {
        return;
    }
    let row = i / p.heads;
    let head = i % p.heads;
    let q = row % p.n;
    let copy_base = row - q;
    let dh = p.dh;
    let d3 = 3u * p.d;
    // The query is read once; keys and values stream by.
    var query: array<f32, 128>;
    var acc: array<f32, 128>;
    let qb = row * d3 + head * dh;
    for (var t = 0u; t < dh; t = t + 1u) {
        query[t] = qkv[qb + t];
        acc[t] = 0.0;
    }
    // One pass, online softmax (Milakov & Gimelshein): when the running maximum grows, the
    // partial sums are rescaled. Same result as the CPU's two passes up to rounding.
    let mb = mask_base(head, q);
    var mx = -3.0e38;
    var sum = 0.0;
    for (var w = 0u; w < p.words; w = w + 1u) {
        var bits = masks[mb + w];
        while (bits != 0u) {
            let k = w * 32u + countTrailingZeros(bits);
            bits = bits & (bits - 1u);
            let kb = (copy_base + k) * d3 + p.d + head * dh;
            var s = 0.0;
            for (var t = 0u; t < dh; t = t + 1u) {
                s = s + query[t] * qkv[kb + t];
            }
            s = s * p.scale;
            if (s > mx) {
                let shrink = exp(mx - s);
                sum = sum * shrink;
                for (var t = 0u; t < dh; t = t + 1u) {
                    acc[t] = acc[t] * shrink;
                }
                mx = s;
            }
            let e = exp(s - mx);
            sum = sum + e;
            let vb = kb + p.d;
            for (var t = 0u; t < dh; t = t + 1u) {
                acc[t] = acc[t] + e * qkv[vb + t];
            }
        }
    }
    // A fully masked row keeps sum = 0 and writes zeros (FlexAttention), never 0/0.
    var inv = 0.0;
    if (sum > 0.0) {
        inv = 1.0 / sum;
    }
    let ob = row * p.d + head * dh;
    for (var t = 0u; t < dh; t = t + 1u) {
        dst[ob + t] = acc[t] * inv;
    }
}

// One invocation per query of copy 0 (the unperturbed pass): probs[q][k] = mean over heads.
@compute @workgroup_size(64)
fn record(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    let q = (wg.y * nw.x + wg.x) * 64u + li;
    if (q >= p.n) {
        return;
    }
    let pb = p.probs + q * p.n;
    for (var k = 0u; k < p.n; k = k + 1u) {
        probs[pb + k] = 0.0;
    }
    for (var head = 0u; head < p.heads; head = head + 1u) {
        let m = row_max(q, 0u, q, head);
        if (m.y == 0.0) {
            continue;
        }
        let mb = mask_base(head, q);
        var sum = 0.0;
        for (var w = 0u; w < p.words; w = w + 1u) {
            var bits = masks[mb + w];
            while (bits != 0u) {
                let k = w * 32u + countTrailingZeros(bits);
                bits = bits & (bits - 1u);
                sum = sum + exp(score(q, k, head) - m.x);
            }
        }
        for (var w = 0u; w < p.words; w = w + 1u) {
            var bits = masks[mb + w];
            while (bits != 0u) {
                let k = w * 32u + countTrailingZeros(bits);
                bits = bits & (bits - 1u);
                probs[pb + k] = probs[pb + k] + exp(score(q, k, head) - m.x) / sum;
            }
        }
    }
    for (var k = 0u; k < p.n; k = k + 1u) {
        probs[pb + k] = probs[pb + k] / f32(p.heads);
    }
}

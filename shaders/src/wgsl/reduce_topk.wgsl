// TopK (§2.5.4) of rows that fit workgroup memory: one workgroup per row maps every element to an
// order-preserving key of the §1.7 total order (NaN greatest, -0 = +0), complemented for
// `largest`, and bitonic-sorts (key, index) pairs ascending with ties to the smaller index over
// `pow2` slots (padding sorts last). The first k pairs are the answer; values are re-read from x
// so they keep their exact bits.

struct TopkParams {
    rows: u32,
    len: u32,
    inner: u32,
    k: u32,
    pow2: u32,
    largest: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: TopkParams;
{{TENSORS}}

alias R = {{R}};
alias K = {{K}};

const SORT_N: u32 = {{SORT_N}}u;
const KMAX: K = {{KMAX}};

// Order-preserving unsigned key of v.
fn key(v: R) -> K {
    {{KEY}}
}

var<workgroup> wk: array<K, SORT_N>;
var<workgroup> wi: array<u32, SORT_N>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.rows) {
        return;
    }
    let base = (w / p.inner) * p.len * p.inner + w % p.inner;
    for (var i = lid; i < p.pow2; i = i + WG) {
        if (i < p.len) {
            let kv = key(ld_x(base + i * p.inner));
            wk[i] = select(kv, ~kv, p.largest != 0u);
            wi[i] = i;
        } else {
            wk[i] = KMAX;
            wi[i] = 0xffffffffu;
        }
    }
    for (var kk = 2u; kk <= p.pow2; kk = kk << 1u) {
        for (var j = kk >> 1u; j > 0u; j = j >> 1u) {
            workgroupBarrier();
            for (var t = lid; t < p.pow2 / 2u; t = t + WG) {
                let a = 2u * t - (t & (j - 1u));
                let b = a + j;
                let ka = wk[a];
                let kb = wk[b];
                let ia = wi[a];
                let ib = wi[b];
                let gt = ka > kb || (ka == kb && ia > ib);
                if (gt == ((a & kk) == 0u)) {
                    wk[a] = kb;
                    wk[b] = ka;
                    wi[a] = ib;
                    wi[b] = ia;
                }
            }
        }
    }
    workgroupBarrier();
    let obase = (w / p.inner) * p.k * p.inner + w % p.inner;
    for (var m = lid; m < p.k; m = m + WG) {
        let i = wi[m];
        let o = obase + m * p.inner;
        st_val(o, ld_x(base + i * p.inner));
        st_idx(o, {{IDX}}(i));
    }
}

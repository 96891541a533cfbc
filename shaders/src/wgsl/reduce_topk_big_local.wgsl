// TopK long rows: one workgroup per block of SORT_N slots runs the stages kk_lo..kk_hi (steps
// with j < SORT_N) in workgroup memory. The direction of a pair comes from its position in the
// row, so blocks of one row alternate as the bitonic network requires.

@group(0) @binding(1) var<storage, read_write> tk: array<K>;
@group(0) @binding(2) var<storage, read_write> ti: array<u32>;

var<workgroup> wk: array<K, SORT_N>;
var<workgroup> wi: array<u32, SORT_N>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let wg = wid.x + wid.y * nwg.x;
    let nblk = p.pow2 / SORT_N;
    if (wg >= p.rows * nblk) {
        return;
    }
    let start = (wg % nblk) * SORT_N;
    let base = (wg / nblk) * p.pow2 + start;
    for (var i = lid; i < SORT_N; i = i + WG) {
        wk[i] = tk[base + i];
        wi[i] = ti[base + i];
    }
    for (var kk = p.kk_lo; kk <= p.kk_hi; kk = kk << 1u) {
        for (var j = min(kk >> 1u, SORT_N >> 1u); j > 0u; j = j >> 1u) {
            workgroupBarrier();
            for (var t = lid; t < SORT_N / 2u; t = t + WG) {
                let a = 2u * t - (t & (j - 1u));
                let b = a + j;
                let ka = wk[a];
                let kb = wk[b];
                let ia = wi[a];
                let ib = wi[b];
                if (after(ka, ia, kb, ib) == (((start + a) & kk) == 0u)) {
                    wk[a] = kb;
                    wk[b] = ka;
                    wi[a] = ib;
                    wi[b] = ia;
                }
            }
        }
    }
    workgroupBarrier();
    for (var i = lid; i < SORT_N; i = i + WG) {
        tk[base + i] = wk[i];
        ti[base + i] = wi[i];
    }
}

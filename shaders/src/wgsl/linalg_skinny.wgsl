// Skinny product for few rows (a batch-1 layer, a GEMV): each workgroup of 256 threads computes
// 4 output rows x TNS columns over one K range. L = 256 / TNS threads ("lanes") split K for each
// column; their sums are added through workgroup memory at the end. The weight operand B, the
// bulk of the bytes, is read once per 4 rows with consecutive threads on consecutive addresses:
// along columns when B is N-contiguous (NFAST: TNS = 64, 4 lanes), else along K (TNS = 4,
// 64 lanes). Each iteration issues 4 independent loads of B per thread (raw words, converted
// only after all were issued) so that enough memory requests are in flight to reach the device
// bandwidth. Addressing, split-K and the epilogue:
// see `linalg_common.wgsl`.

const TNS: u32 = {{TNS}}u;
const L: u32 = 256u / TNS;
const NFAST: bool = {{NFAST}};

var<workgroup> red: array<R4, 256>;

// Raw storage access: `RAW`, `raw_a(i)`, `raw_b(i)` and `cvt(x, i) -> R`.
{{RAW}}

// Indices of rows row0 .. row0+3 of A at k. Rows past M re-read row M-1 (their sums are never
// stored): a load of an address the warp already reads costs less than a branch or a select.
fn a4_index(base: u32, row0: u32, k: u32) -> vec4<u32> {
    let r = min(vec4<u32>(row0, row0 + 1u, row0 + 2u, row0 + 3u), vec4<u32>(p.m - 1u));
    return base + k * p.a_cs + r * p.a_rs;
}

fn a4_raw(i: vec4<u32>) -> vec4<RAW> {
    return vec4<RAW>(raw_a(i.x), raw_a(i.y), raw_a(i.z), raw_a(i.w));
}

fn a4_cvt(x: vec4<RAW>, i: vec4<u32>) -> R4 {
    return R4(cvt(x.x, i.x), cvt(x.y, i.y), cvt(x.z, i.z), cvt(x.w, i.w));
}

// Stores the finished sum of output row gi, column j when it lies in the matrix.
fn store1(obase: u32, bbase: u32, gi: u32, j: u32, v: R) {
    if (gi < p.m && j < p.n) {
        st_out(obase + gi * p.n + j, finish(bbase + gi * p.bias_rs + j * p.bias_cs, v));
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    var c = li / L;
    var lane = li % L;
    if (NFAST) {
        c = li % TNS;
        lane = li / TNS;
    }
    let j = (p.tile_n0 + wg.x) * TNS + c;
    let row0 = (p.tile_m0 + wg.y) * 4u;
    let z = p.batch0 + wg.z;
    let off = batch_offsets(z % p.nbatch);
    let kbeg = (z / p.nbatch) * p.kc;
    let kend = max(kbeg, min(p.k, kbeg + p.kc));
    // Columns past N read column N-1; they are never stored.
    let bj = off.y + min(j, p.n - 1u) * p.b_cs;
    var acc = R4(R(0.0));
    var k = kbeg + lane;
    // All loads of an iteration are issued before any of them is converted or used.
    for (; k + 3u * L < kend; k = k + 4u * L) {
        let ib0 = bj + k * p.b_rs;
        let ib1 = bj + (k + L) * p.b_rs;
        let ib2 = bj + (k + 2u * L) * p.b_rs;
        let ib3 = bj + (k + 3u * L) * p.b_rs;
        let ia0 = a4_index(off.x, row0, k);
        let ia1 = a4_index(off.x, row0, k + L);
        let ia2 = a4_index(off.x, row0, k + 2u * L);
        let ia3 = a4_index(off.x, row0, k + 3u * L);
        let w0 = raw_b(ib0);
        let w1 = raw_b(ib1);
        let w2 = raw_b(ib2);
        let w3 = raw_b(ib3);
        let x0 = a4_raw(ia0);
        let x1 = a4_raw(ia1);
        let x2 = a4_raw(ia2);
        let x3 = a4_raw(ia3);
        acc = acc + a4_cvt(x0, ia0) * cvt(w0, ib0);
        acc = acc + a4_cvt(x1, ia1) * cvt(w1, ib1);
        acc = acc + a4_cvt(x2, ia2) * cvt(w2, ib2);
        acc = acc + a4_cvt(x3, ia3) * cvt(w3, ib3);
    }
    for (; k < kend; k = k + L) {
        let ib = bj + k * p.b_rs;
        let ia = a4_index(off.x, row0, k);
        acc = acc + a4_cvt(a4_raw(ia), ia) * cvt(raw_b(ib), ib);
    }
    red[li] = acc;
    workgroupBarrier();
    if (lane != 0u) {
        return;
    }
    var s = R4(R(0.0));
    for (var l = 0u; l < L; l = l + 1u) {
        s = s + red[select(c * L + l, l * TNS + c, NFAST)];
    }
    let obase = z * p.m * p.n;
    store1(obase, off.z, row0, j, s.x);
    store1(obase, off.z, row0 + 1u, j, s.y);
    store1(obase, off.z, row0 + 2u, j, s.z);
    store1(obase, off.z, row0 + 3u, j, s.w);
}

// Implicit-GEMM Conv: whether the weight holds a non-finite value (NaN or ±∞). Padding taps
// must contribute nothing even against such a weight (docs/DECISIONS.md), which the fast kernels
// (tensor cores, or scalar tiles without the per-product mask) get only by multiplying them by
// zero: the control gate (`control_gate.wgsl`, the OR of the slots written here) dispatches them
// when no workgroup here found one, the masked scalar kernel otherwise.
//
// Each invocation tests a grid-strided run of the weight's storage words: a word is flagged when
// one of the elements it holds has an all-ones exponent (NON_FINITE). A word shared with a
// neighbouring tensor may flag that tensor's element: a false alarm only sends the convolution
// to the masked kernel, which is exact for every weight. Workgroup w writes its verdict to
// slot w (every slot is written, so the slots need no zeroing).

struct ConvCheckParams {
    // Storage words of the weight.
    words: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: ConvCheckParams;
@group(0) @binding(1) var<storage, read_write> w: array<u32>;
@group(0) @binding(2) var<storage, read_write> slots: array<u32>;

// Whether any invocation of the workgroup found a non-finite element (zero-initialised).
var<workgroup> found: atomic<u32>;

// Whether storage word v holds a non-finite element of the weight's dtype.
fn non_finite(v: u32) -> bool {
    return {{NON_FINITE}};
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let total = nwg.x * nwg.y * WG;
    var bad = false;
    for (var i = linear_id(gid, nwg); i < p.words; i = i + total) {
        // `|`, not `||`: every load is issued, none waits on the previous test
        bad = bad | non_finite(w[i]);
    }
    if (bad) {
        atomicOr(&found, 1u);
    }
    workgroupBarrier();
    if (li == 0u) {
        slots[wg.x + wg.y * nwg.x] = atomicLoad(&found);
    }
}

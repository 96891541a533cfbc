// Tensor-core product with fragments loaded straight from the operands: no workgroup staging and
// no barrier in the K loop. Each subgroup of the WM x WN grid loads its FM fragments of A and FN
// of B for every F-wide slice of the K step BK directly from storage (row-major loads with the
// operands' row strides) and multiplies them into FM·FN f32 accumulators; the shared epilogue
// stages each accumulator through workgroup memory as `linalg_coop_vec.wgsl` does. F16 only.
//
// Memory safety by construction (runtime checks off, see docs/WGPU-KERNELS.md and
// `linalg_common.wgsl`): the lowering selects this kernel only for a K-contiguous A and an
// N-contiguous B when M and N are multiples of the tile (TM, TN), K and every split's K range are
// multiples of BK, and K > 0, so every fragment a workgroup loads lies inside its batch matrix
// and K range: rows row0 + wr + i·F + (0 .. F) < M, columns < N, k < kend. The subgroup index is
// clamped to the subgroups the kernel was sized for; the trip count is the split's steps.

const F: u32 = {{F}}u;
const WM: u32 = {{WM}}u;
const WN: u32 = {{WN}}u;
const FM: u32 = {{FM}}u;
const FN: u32 = {{FN}}u;
const BK: u32 = {{BK}}u;
// Invocations per subgroup the workgroup is sized for (the device's only subgroup size).
const SG: u32 = {{SG}}u;
const NT: u32 = WM * WN * SG;
const TM: u32 = WM * FM * F;
const TN: u32 = WN * FN * F;

@group(0) @binding(1) var<storage, read_write> a: array<f16>;
@group(0) @binding(2) var<storage, read_write> b: array<f16>;

// One F x F f32 fragment per subgroup, for the epilogue.
var<workgroup> sc: array<f32, WM * WN * F * F>;

alias FragA = coop_mat{{F}}x{{F}}<f16, A>;
alias FragB = coop_mat{{F}}x{{F}}<f16, B>;
alias FragC = coop_mat{{F}}x{{F}}<f32, C>;

// Finishes and stores fragment `sc[s·F·F ..]` (row-major) at output (gi, gj): invocation `lane`
// of the subgroup handles every SG-th group of 4 consecutive elements of a row.
fn store_frag(obase: u32, bbase: u32, s: u32, gi: u32, gj: u32, lane: u32) {
    let base = s * F * F;
    for (var e = lane * 4u; e < F * F; e = e + SG * 4u) {
        let v = vec4<f32>(sc[base + e], sc[base + e + 1u], sc[base + e + 2u], sc[base + e + 3u]);
        store4(obase, bbase, gi + e / F, gj + e % F, v);
    }
}

@compute @workgroup_size(NT)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(subgroup_id) sgid: u32,
        @builtin(subgroup_invocation_id) lane: u32) {
    let s = min(sgid, WM * WN - 1u);
    let wr = (s / WN) * FM * F;
    let wc = (s % WN) * FN * F;
    let row0 = (p.tile_m0 + wg.y) * TM;
    let col0 = (p.tile_n0 + wg.x) * TN;
    let z = p.batch0 + wg.z;
    let off = batch_offsets(z % p.nbatch);
    let kbeg = (z / p.nbatch) * p.kc;
    let kend = max(kbeg, min(p.k, kbeg + p.kc));
    // First element of this subgroup's rows of A and columns of B.
    let abase = off.x + (row0 + wr) * p.a_rs;
    let bbase = off.y + col0 + wc;
{{DECLS}}
    let nk = (kend - kbeg) / BK;
    var k0 = kbeg;
    for (var t = 0u; t < nk; t = t + 1u) {
{{COMPUTE}}
        k0 = k0 + BK;
    }
    let obase = z * p.m * p.n;
{{STORE}}
}

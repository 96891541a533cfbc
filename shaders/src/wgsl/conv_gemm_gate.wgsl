// Implicit-GEMM Conv: writes the workgroup counts of the fast and the masked GEMM dispatches from
// the weight check's slots (`conv_gemm_check.wgsl`): a fast dispatch (grids[j].w == 0) gets its
// grid when no slot is set and zeros otherwise, a masked one (grids[j].w == 1) the reverse. So
// exactly one of the two kernels runs, chosen on the GPU with no value sent to the host.

struct ConvGateParams {
    // Slots the check wrote (its workgroups, at most 1024).
    nslots: u32,
    // Dispatches whose counts this writes (at most 16).
    count: u32,
    pad0: u32,
    pad1: u32,
    // Grid of dispatch j in xyz; w: 1 for a masked dispatch, 0 for a fast one.
    grids: array<vec4<u32>, 16>,
}

@group(0) @binding(0) var<uniform> p: ConvGateParams;
@group(0) @binding(1) var<storage, read_write> slots: array<u32>;
@group(0) @binding(2) var<storage, read_write> args: array<u32>;

var<workgroup> found: atomic<u32>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32) {
    var any = 0u;
    for (var i = li; i < p.nslots; i = i + 256u) {
        any = any | slots[i];
    }
    if (any != 0u) {
        atomicOr(&found, 1u);
    }
    workgroupBarrier();
    let bad = atomicLoad(&found) != 0u;
    if (li < min(p.count, 16u)) {
        let g = p.grids[li];
        let run = (g.w != 0u) == bad;
        let c = select(vec3<u32>(0u), g.xyz, run);
        args[3u * li] = c.x;
        args[3u * li + 1u] = c.y;
        args[3u * li + 2u] = c.z;
    }
}

// GroupedMatMul grouping, step 1: one invocation per row resolves its expert (§1.6) and takes the
// next slot of that expert with an atomic add on its count; rows of an out-of-range expert take
// no slot (NONE). Slots within an expert are in no particular order: each row's product does not
// depend on where in its expert's tiles it lands.

@group(0) @binding(2) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> slot: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let m = linear_id(gid, nwg);
    if (m >= p.m) {
        return;
    }
    let e = index_at(m, p.e);
    if (e == OUT_OF_RANGE) {
        slot[m] = NONE;
        return;
    }
    slot[m] = atomicAdd(&counts[e], 1u);
}

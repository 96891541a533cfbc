// Column sums of `linalg_quant_vec.wgsl` with subgroup operations (needs SUBGROUP): the lowering
// picks this form only where every subgroup has exactly L invocations, so the L lanes of a
// lane group are one subgroup (group = subgroup_id, lane = subgroup_invocation_id) and one
// subgroupAdd gives its sum. This relies on full subgroups: with a single subgroup size that
// divides the workgroup, the 256 invocations form 256 / L subgroups of L (as the cooperative
// kernels also assume). subgroup_id < 256 / L; it is clamped all the same.

struct ColIds {
    @builtin(subgroup_id) id: u32,
    @builtin(subgroup_invocation_id) lane: u32,
}

// (lane group of the workgroup, lane within the group).
fn col_lane(ids: ColIds, lid: u32) -> vec2<u32> {
    return vec2<u32>(min(ids.id, 256u / L - 1u), ids.lane);
}

fn col_sum(ids: ColIds, cl: vec2<u32>, v: f32) -> f32 {
    return subgroupAdd(v);
}

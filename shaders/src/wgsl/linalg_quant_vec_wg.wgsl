// Column sums of `linalg_quant_vec.wgsl` without subgroup operations: lane group lid / L, lane
// lid % L, and a tree over the L lanes of each group in workgroup memory (log2 L barriers).
// `ColIds` carries no id this form needs (the subgroup form's does).

struct ColIds {
    @builtin(local_invocation_id) unused: vec3<u32>,
}

var<workgroup> red: array<f32, 256>;

// (lane group of the workgroup, lane within the group).
fn col_lane(ids: ColIds, lid: u32) -> vec2<u32> {
    return vec2<u32>(lid / L, lid % L);
}

fn col_sum(ids: ColIds, cl: vec2<u32>, v: f32) -> f32 {
    let i = cl.x * L + cl.y;
    red[i] = v;
    workgroupBarrier();
    for (var s = L / 2u; s > 0u; s = s >> 1u) {
        if (cl.y < s) {
            red[i] = red[i] + red[i + s];
        }
        workgroupBarrier();
    }
    let t = red[cl.x * L];
    // nobody may overwrite red before every lane has read its column's sum
    workgroupBarrier();
    return t;
}

// Row reductions of the single-pass norm kernels with subgroup operations (needs SUBGROUP): each
// subgroup reduces in registers, its first invocation writes the result to slot subgroup_id, and
// every invocation combines the num_subgroups slots in slot order. Correct for any subgroup size
// and any assignment of invocations to subgroups (nothing assumes lid / size is the subgroup), and
// deterministic for a given device. F is f32 here (subgroup arithmetic on f64 is not portable).
// The slot index and the slot count are clamped to the 256 slots (subgroup_id < num_subgroups <=
// 256 for a workgroup of 256 anyway), so the trusted kernels index wsub in bounds.

struct RowIds {
    @builtin(subgroup_id) id: u32,
    @builtin(num_subgroups) count: u32,
    @builtin(subgroup_invocation_id) lane: u32,
}

var<workgroup> wsub: array<F, 256>;

fn row_sum(ids: RowIds, lid: u32, v: F) -> F {
    let r = subgroupAdd(v);
    if (ids.lane == 0u) {
        wsub[min(ids.id, 255u)] = r;
    }
    workgroupBarrier();
    var t = wsub[0];
    for (var j = 1u; j < min(ids.count, 256u); j = j + 1u) {
        t = t + wsub[j];
    }
    // nobody may overwrite wsub before everyone has read it
    workgroupBarrier();
    return t;
}

// NaN-propagating maximum: subgroupMax leaves NaN undefined, so a NaN becomes +inf first. Either
// makes the softmax row NaN (the only caller: a NaN or infinite max marks the row bad), so the
// result is the same as with `fmax`.
fn row_max(ids: RowIds, lid: u32, v: F) -> F {
    let r = subgroupMax(select(v, finf(), fisnan(v)));
    if (ids.lane == 0u) {
        wsub[min(ids.id, 255u)] = r;
    }
    workgroupBarrier();
    var t = wsub[0];
    for (var j = 1u; j < min(ids.count, 256u); j = j + 1u) {
        t = max(t, wsub[j]);
    }
    workgroupBarrier();
    return t;
}

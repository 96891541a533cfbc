// Row reductions of the single-pass norm kernels without subgroup operations: workgroup memory
// in the two fixed-order levels of `wg_sum2` / `wg_max2`. `RowIds` carries no id these need (the
// subgroup form's does); local_invocation_id is otherwise unused.

struct RowIds {
    @builtin(local_invocation_id) unused: vec3<u32>,
}

fn row_sum(ids: RowIds, lid: u32, v: F) -> F {
    return wg_sum2(lid, v);
}

fn row_max(ids: RowIds, lid: u32, v: F) -> F {
    return wg_max2(lid, v);
}

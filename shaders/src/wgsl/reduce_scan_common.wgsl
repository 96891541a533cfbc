// Cumsum scans of the reduce family, shared part (§2.5.5–2.5.6). A row is `len` elements at
// stride `inner`; the scan runs over logical positions q (physical position len-1-q when
// `reverse`). An exclusive scan is the inclusive scan of the input shifted by one (never
// `inclusive - x`, which breaks on inf). Sums use the accumulator type A (f32 for F32/F16/BF16,
// i32 for I32/I8, u32 for U32/U8; wrapping for integers) and are trees: a workgroup scan per block
// of WG elements, then the block totals.

struct ScanParams {
    rows: u32,
    len: u32,
    inner: u32,
    nb: u32,
    exclusive: u32,
    reverse: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: ScanParams;

alias A = {{A}};

// Input/output address of logical position q of row r.
fn addr(r: u32, q: u32) -> u32 {
    let pq = select(q, p.len - 1u - q, p.reverse != 0u);
    return (r / p.inner) * p.len * p.inner + r % p.inner + pq * p.inner;
}

var<workgroup> ws: array<A, 256>;

// Inclusive scan of every invocation's v (Hillis–Steele: each prefix is a tree of partial sums);
// afterwards ws[l] holds the inclusive prefix of invocation l. Uniform control flow only.
fn wg_scan(lid: u32, v: A) -> A {
    ws[lid] = v;
    var acc = v;
    for (var s = 1u; s < WG; s = s << 1u) {
        workgroupBarrier();
        if (lid >= s) {
            acc = ws[lid - s] + acc;
        }
        workgroupBarrier();
        ws[lid] = acc;
    }
    workgroupBarrier();
    return acc;
}

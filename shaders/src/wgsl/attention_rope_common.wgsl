// Rope / RopeBackward addressing shared by the scalar and four-wide kernels (§2.8.3–2.8.4).
//
// x is [rows, heads, D] where a row is one (pre, pos, mid) index of x viewed as
// [pre, S, mid, heads·D] around the position axis. A head has `per_head` units: units j < r rotate
// the pair (j·step, j·step + gap) with table entry j (NeoX: step 1, gap r; GptJ: step 2, gap 1)
// and units j ≥ r copy element j + r (the part past R). The scalar kernel counts in elements; the
// four-wide kernel in 4-vectors (d, r, gap and the copy offset are then in vectors). The sine is
// read times `sign` (+1 Rope, −1 RopeBackward: the transpose flips every sine term, exactly).

struct RopeParams {
    units: u32,
    per_head: u32,
    heads: u32,
    d: u32,
    r: u32,
    step: u32,
    gap: u32,
    mid: u32,
    s: u32,
    tdiv: u32,
    batched: u32,
    sign: f32,
}

@group(0) @binding(0) var<uniform> p: RopeParams;

struct RopeUnit {
    // first element (or vector) of the unit's head
    base: u32,
    // the unit inside the head
    j: u32,
    // the first table entry of the unit's row: (pos, or batch · S + pos) · r
    tab: u32,
}

fn rope_unit(t: u32) -> RopeUnit {
    let row_units = p.per_head * p.heads;
    let row = t / row_units;
    let w = t - row * row_units;
    let h = w / p.per_head;
    let pos = (row / p.mid) % p.s;
    // per-batch tables: the batch is x's first index, tdiv = rows per first index
    let b = select(0u, row / p.tdiv, p.batched != 0u);
    return RopeUnit(row * (p.heads * p.d) + h * p.d, w - h * p.per_head, (b * p.s + pos) * p.r);
}

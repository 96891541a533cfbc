// ArgMax / ArgMin (§2.5.2–2.5.3), shared part: rows of `len` elements at stride `inner`, and the
// candidate order: a NaN beats everything (first NaN wins), then the extreme, ties going to the
// smaller index. Index NONE marks "no candidate yet".

struct ArgParams {
    rows: u32,
    len: u32,
    inner: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: ArgParams;
{{TENSORS}}

alias R = {{R}};

const NONE: u32 = 0xffffffffu;

fn r_is_nan(x: R) -> bool {
    return {{ISNAN}};
}

// Whether candidate (a, ia) beats (b, ib).
fn beats(a: R, ia: u32, b: R, ib: u32) -> bool {
    if (ib == NONE) {
        return ia != NONE;
    }
    if (ia == NONE) {
        return false;
    }
    let na = r_is_nan(a);
    let nb = r_is_nan(b);
    if (na || nb) {
        return na && (!nb || ia < ib);
    }
    return ({{CMP}}) || (a == b && ia < ib);
}

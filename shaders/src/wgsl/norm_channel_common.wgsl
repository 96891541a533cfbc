// Channel norms (GroupNorm, LayerNorm2d), shared part: params and per-channel gamma / beta.
//
// x is [N, C, S] (S = numel(spatial)), element (n, c, s) at (n C + c) S + s. GroupNorm's group
// (n, g) is the contiguous run of len = (C / G) S elements from (n G + g) len, its element i in
// channel g (C / G) + i / S. LayerNorm2d's column (n, s) is the C elements from n C S + s at
// stride S. The lowering keeps every index below 2^31.

struct ChannelNormParams {
    rows: u32,
    len: u32,
    spatial: u32,
    groups: u32,
    eps: f32,
    chunks: u32,
    span: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: ChannelNormParams;
{{TENSORS}}

// beta[c], or 0 without beta.
fn chan_beta(c: u32) -> F {
    return {{BETA}};
}

// 1 / sqrt(v), +inf where that is 0 (eps = 0 on a constant run then gives 0 * inf = NaN, the
// spec's 0/0).
fn inv_std(v: F) -> F {
    let den = sqrt(v);
    return select(F(1) / den, finf(), den == F(0));
}

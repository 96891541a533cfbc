// Fused residual norms with a bias: the bias element of flat element e of x. The lowering
// collapses x's dims with the bias's broadcast strides (0 on the axes the bias stretches) into
// at most 8 axes (bias_rank of them, bias_dims and bias_strides), innermost last; e is decomposed
// along them from the innermost axis out.

fn bias_index(e: u32) -> u32 {
    var r = e;
    var at = 0u;
    for (var k = min(p.bias_rank, 8u); k > 0u; k = k - 1u) {
        let a = k - 1u;
        let d = max(p.bias_dims[a / 4u][a % 4u], 1u);
        at = at + (r % d) * p.bias_strides[a / 4u][a % 4u];
        r = r / d;
    }
    return at;
}

fn bias4(j: u32) -> vec4<F> {
    let e = 4u * j;
    return vec4<F>(ld_bias(bias_index(e)), ld_bias(bias_index(e + 1u)), ld_bias(bias_index(e + 2u)),
                   ld_bias(bias_index(e + 3u)));
}

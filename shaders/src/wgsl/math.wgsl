// Scalar maths with the special values the spec demands where WGSL built-ins leave results
// undefined (log(0), sqrt(-x), inverseSqrt(0), NaN in max/min, ...).

// NaN-propagating maximum with max(-0, +0) = +0 (numpy maximum).
fn max_f32(a: f32, b: f32) -> f32 {
    if (f32_is_nan(a) || f32_is_nan(b)) {
        return f32_nan();
    }
    if (a == b) {
        return bitcast<f32>(bitcast<u32>(a) & bitcast<u32>(b));
    }
    return select(b, a, a > b);
}

// NaN-propagating minimum with min(-0, +0) = -0.
fn min_f32(a: f32, b: f32) -> f32 {
    if (f32_is_nan(a) || f32_is_nan(b)) {
        return f32_nan();
    }
    if (a == b) {
        return bitcast<f32>(bitcast<u32>(a) | bitcast<u32>(b));
    }
    return select(b, a, a < b);
}

fn relu_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    return select(0.0, x, x > 0.0);
}

fn exp_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    if (x > 88.8) {
        return f32_inf(false);
    }
    if (x < -104.0) {
        return 0.0;
    }
    return exp(x);
}

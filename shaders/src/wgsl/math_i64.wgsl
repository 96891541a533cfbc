// 64-bit integer helpers of the elementwise family (SHADER_INT64): the i32 rules of
// math_int.wgsl for I64 (wrapping arithmetic, x / 0 = 0, MIN / -1 = MIN, MIN % -1 = 0).

fn sign_i64(a: i64) -> i64 {
    return select(select(0li, -1li, a < 0li), 1li, a > 0li);
}

fn abs_i64(a: i64) -> i64 {
    return select(a, 0li - a, a < 0li);
}

fn div_i64(a: i64, b: i64) -> i64 {
    if (b == 0li) {
        return 0li;
    }
    if (b == -1li) {
        return 0li - a;
    }
    return a / b;
}

fn rem_i64(a: i64, b: i64) -> i64 {
    if (b == 0li || b == -1li) {
        return 0li;
    }
    return a % b;
}

fn mod_i64(a: i64, b: i64) -> i64 {
    let r = rem_i64(a, b);
    if (r != 0li && ((r < 0li) != (b < 0li))) {
        return r + b;
    }
    return r;
}

fn pow_i64(x: i64, e: i64) -> i64 {
    if (e == 0li) {
        return 1li;
    }
    if (e < 0li) {
        if (x == 1li) {
            return 1li;
        }
        if (x == -1li) {
            return select(-1li, 1li, (e & 1li) == 0li);
        }
        return 0li;
    }
    var result = 1li;
    var base = x;
    var n = e;
    while (n != 0li) {
        if ((n & 1li) == 1li) {
            result = result * base;
        }
        base = base * base;
        n = n >> 1u;
    }
    return result;
}

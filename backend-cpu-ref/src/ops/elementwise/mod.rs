//! Unary, Binary, Compare, Where and Fma (§2.2.1–2.2.5): decode each element, apply the scalar
//! rule for its kind (float / int / Bool / C64), encode into the output dtype. Cast (§2.2.6) is in
//! `cast`.

use crate::layout::{broadcast_map, broadcast_shape, element};
use crate::mem::{try_bytes, try_vec};
use crate::ops::math;
use crate::value::{decode, from_scalars, scalars, Scalar};
use backend_api::op::{BinaryOp, CompareOp, UnaryOp};
use backend_api::{bail, DType, Result, Tensor};

pub mod cast;

/// `y = f(x)` elementwise.
pub fn unary(op: UnaryOp, x: &Tensor) -> Result<Tensor> {
    let dt = x.dtype();
    let ys = scalars(x)?.into_iter().map(|s| unary_scalar(op, s)).collect::<Result<Vec<_>>>()?;
    from_scalars(dt, x.shape(), &ys)
}

/// `g(a, b)` with broadcasting; the output has `a`'s dtype.
pub fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let dt = a.dtype();
    zip2(a, b, dt, |x, y| binary_scalar(op, dt, x, y))
}

/// Bool comparison with broadcasting.
pub fn compare(op: CompareOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    zip2(a, b, DType::Bool, |x, y| compare_scalar(op, x, y).map(Scalar::B))
}

/// `cond ? x : y` with broadcasting; the selected element's bytes are copied unchanged.
pub fn where_(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    if cond.dtype() != DType::Bool || x.dtype() != y.dtype() {
        bail!(
            DType,
            "Where needs a Bool cond and equal x, y dtypes; got {}, {}, {}",
            cond.dtype(),
            x.dtype(),
            y.dtype()
        );
    }
    let shape = broadcast_shape(&[cond.shape(), x.shape(), y.shape()])?;
    let (mc, mx, my) =
        (broadcast_map(cond.shape(), &shape)?, broadcast_map(x.shape(), &shape)?, broadcast_map(y.shape(), &shape)?);
    let mut data = try_bytes(x.dtype(), &shape)?;
    for ((&c, &i), &j) in mc.iter().zip(&mx).zip(&my) {
        let pick = decode(DType::Bool, element(cond, c)?) == Scalar::B(true);
        data.extend_from_slice(if pick { element(x, i)? } else { element(y, j)? });
    }
    Tensor::from_bytes(x.dtype(), &shape, data)
}

/// `a·b + c` with broadcasting and a single rounding (F16/BF16: one f32 rounding, then the
/// dtype's, as §2.2.5 defines it).
pub fn fma(a: &Tensor, b: &Tensor, c: &Tensor) -> Result<Tensor> {
    let dt = a.dtype();
    if !dt.is_float() || b.dtype() != dt || c.dtype() != dt {
        bail!(DType, "Fma needs three equal float dtypes; got {}, {}, {}", dt, b.dtype(), c.dtype());
    }
    let shape = broadcast_shape(&[a.shape(), b.shape(), c.shape()])?;
    let (ma, mb, mc) =
        (broadcast_map(a.shape(), &shape)?, broadcast_map(b.shape(), &shape)?, broadcast_map(c.shape(), &shape)?);
    let (va, vb, vc) = (scalars(a)?, scalars(b)?, scalars(c)?);
    let mut out = try_vec(ma.len())?;
    for ((&i, &j), &k) in ma.iter().zip(&mb).zip(&mc) {
        let (Some(Scalar::F(x)), Some(Scalar::F(y)), Some(Scalar::F(z))) = (va.get(i), vb.get(j), vc.get(k)) else {
            bail!(DType, "Fma operands must be floats");
        };
        out.push(Scalar::F(if dt == DType::F64 { x.mul_add(*y, *z) } else { math::fma_f32(*x, *y, *z) }));
    }
    from_scalars(dt, &shape, &out)
}

/// Broadcasts `a` and `b`, applies `f` to each pair of elements and encodes into `out`.
fn zip2(a: &Tensor, b: &Tensor, out: DType, mut f: impl FnMut(Scalar, Scalar) -> Result<Scalar>) -> Result<Tensor> {
    if a.dtype() != b.dtype() {
        bail!(DType, "operands differ in dtype: {} and {}", a.dtype(), b.dtype());
    }
    let shape = broadcast_shape(&[a.shape(), b.shape()])?;
    let (ma, mb) = (broadcast_map(a.shape(), &shape)?, broadcast_map(b.shape(), &shape)?);
    let (va, vb) = (scalars(a)?, scalars(b)?);
    let mut ys = try_vec(ma.len())?;
    for (&i, &j) in ma.iter().zip(&mb) {
        match (va.get(i), vb.get(j)) {
            (Some(&x), Some(&y)) => ys.push(f(x, y)?),
            _ => bail!(Shape, "broadcast index out of range"),
        }
    }
    from_scalars(out, &shape, &ys)
}

fn not_for(op: &str, kind: &str) -> backend_api::Error {
    backend_api::Error::new(backend_api::ErrorKind::DType, format!("{op} is not defined for {kind} operands"))
}

/// One element of `Unary`.
fn unary_scalar(op: UnaryOp, s: Scalar) -> Result<Scalar> {
    match s {
        Scalar::F(x) => float_unary(op, x).map(Scalar::F),
        Scalar::I(i) => int_unary(op, i).map(Scalar::I),
        Scalar::B(b) => match op {
            UnaryOp::Not => Ok(Scalar::B(!b)),
            _ => Err(not_for(op.name(), "Bool")),
        },
        Scalar::C(re, im) => match op {
            UnaryOp::Neg => Ok(Scalar::C(-re, -im)),
            _ => Err(not_for(op.name(), "C64")),
        },
    }
}

/// Float unary functions with the special values of §2.2.1; NaN in gives NaN out.
pub(crate) fn float_unary(op: UnaryOp, x: f64) -> Result<f64> {
    let y = match op {
        UnaryOp::Relu => {
            if x > 0.0 {
                x
            } else {
                0.0
            }
        }
        UnaryOp::Sigmoid => math::sigmoid(x),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Exp => x.exp(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Sqrt => x.sqrt(),
        // sqrt(−0) = −0, so 1/sqrt gives −∞ there as §2.2.1 requires.
        UnaryOp::Rsqrt => 1.0 / x.sqrt(),
        UnaryOp::Neg => -x,
        UnaryOp::Abs => x.abs(),
        UnaryOp::Gelu => math::gelu(x),
        UnaryOp::GeluApprox => math::gelu_tanh(x),
        UnaryOp::Silu => math::silu(x),
        UnaryOp::Round => x.round_ties_even(),
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::Sign => {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                x
            }
        }
        UnaryOp::Reciprocal => 1.0 / x,
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
        UnaryOp::Tan => x.tan(),
        UnaryOp::Atan => x.atan(),
        UnaryOp::Erf => math::erf(x),
        UnaryOp::Softplus => math::softplus(x),
        UnaryOp::Not => return Err(not_for("Unary.Not", "float")),
    };
    Ok(if x.is_nan() { f64::NAN } else { y })
}

/// Integer unary functions; results are exact and wrap when encoded (`Neg(MIN) = MIN`,
/// `Abs(MIN) = MIN`, unsigned `Neg` wraps, `Not` complements the low bits).
fn int_unary(op: UnaryOp, i: i128) -> Result<i128> {
    Ok(match op {
        UnaryOp::Relu => i.max(0),
        UnaryOp::Neg => i.wrapping_neg(),
        UnaryOp::Abs => i.wrapping_abs(),
        UnaryOp::Sign => i.signum(),
        UnaryOp::Not => !i,
        UnaryOp::Sigmoid
        | UnaryOp::Tanh
        | UnaryOp::Exp
        | UnaryOp::Log
        | UnaryOp::Sqrt
        | UnaryOp::Rsqrt
        | UnaryOp::Gelu
        | UnaryOp::GeluApprox
        | UnaryOp::Silu
        | UnaryOp::Round
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Reciprocal
        | UnaryOp::Sin
        | UnaryOp::Cos
        | UnaryOp::Tan
        | UnaryOp::Atan
        | UnaryOp::Erf
        | UnaryOp::Softplus => return Err(not_for(op.name(), "integer")),
    })
}

/// One element of `Binary`; `dt` is the operands' dtype (integer results wrap to it).
fn binary_scalar(op: BinaryOp, dt: DType, a: Scalar, b: Scalar) -> Result<Scalar> {
    match (a, b) {
        (Scalar::F(x), Scalar::F(y)) => float_binary(op, x, y).map(Scalar::F),
        (Scalar::I(x), Scalar::I(y)) => int_binary(op, dt, x, y).map(Scalar::I),
        (Scalar::B(x), Scalar::B(y)) => match op {
            BinaryOp::And => Ok(Scalar::B(x && y)),
            BinaryOp::Or => Ok(Scalar::B(x || y)),
            BinaryOp::Xor => Ok(Scalar::B(x != y)),
            _ => Err(not_for(op.name(), "Bool")),
        },
        (Scalar::C(p, q), Scalar::C(r, s)) => complex_binary(op, (p, q), (r, s)),
        _ => Err(not_for(op.name(), "mixed")),
    }
}

fn float_binary(op: BinaryOp, a: f64, b: f64) -> Result<f64> {
    Ok(match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::Rem => a % b, // C fmod, exact
        BinaryOp::Mod => math::floor_mod(a, b),
        BinaryOp::Pow => math::pow(a, b),
        BinaryOp::Max => math::max(a, b),
        BinaryOp::Min => math::min(a, b),
        BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => return Err(not_for(op.name(), "float")),
    })
}

fn int_binary(op: BinaryOp, dt: DType, a: i128, b: i128) -> Result<i128> {
    Ok(match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::Div => math::int_div(a, b),
        BinaryOp::Rem => math::int_rem(a, b),
        BinaryOp::Mod => math::int_mod(a, b),
        BinaryOp::Pow => math::int_pow(a, b, dt),
        BinaryOp::Max => a.max(b),
        BinaryOp::Min => a.min(b),
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
    })
}

/// C64 arithmetic (§2.2.2). Products of F32 parts are exact in f64; each component is rounded to
/// F32 once, when encoded.
fn complex_binary(op: BinaryOp, (p, q): (f64, f64), (r, s): (f64, f64)) -> Result<Scalar> {
    Ok(match op {
        BinaryOp::Add => Scalar::C(p + r, q + s),
        BinaryOp::Sub => Scalar::C(p - r, q - s),
        BinaryOp::Mul => Scalar::C(p * r - q * s, p * s + q * r),
        BinaryOp::Div => {
            let d = r * r + s * s;
            Scalar::C((p * r + q * s) / d, (q * r - p * s) / d)
        }
        BinaryOp::Rem
        | BinaryOp::Mod
        | BinaryOp::Pow
        | BinaryOp::Max
        | BinaryOp::Min
        | BinaryOp::And
        | BinaryOp::Or
        | BinaryOp::Xor => return Err(not_for(op.name(), "C64")),
    })
}

/// One element of `Compare` (IEEE for floats: NaN compares false except `Ne`).
fn compare_scalar(op: CompareOp, a: Scalar, b: Scalar) -> Result<bool> {
    let ord = |x: f64, y: f64| match op {
        CompareOp::Eq => x == y,
        CompareOp::Ne => x != y,
        CompareOp::Lt => x < y,
        CompareOp::Le => x <= y,
        CompareOp::Gt => x > y,
        CompareOp::Ge => x >= y,
    };
    match (a, b) {
        (Scalar::F(x), Scalar::F(y)) => Ok(ord(x, y)),
        (Scalar::I(x), Scalar::I(y)) => Ok(match op {
            CompareOp::Eq => x == y,
            CompareOp::Ne => x != y,
            CompareOp::Lt => x < y,
            CompareOp::Le => x <= y,
            CompareOp::Gt => x > y,
            CompareOp::Ge => x >= y,
        }),
        (Scalar::B(x), Scalar::B(y)) => match op {
            CompareOp::Eq => Ok(x == y),
            CompareOp::Ne => Ok(x != y),
            CompareOp::Lt | CompareOp::Le | CompareOp::Gt | CompareOp::Ge => Err(not_for(op.name(), "Bool")),
        },
        (Scalar::C(p, q), Scalar::C(r, s)) => match op {
            CompareOp::Eq => Ok(p == r && q == s),
            CompareOp::Ne => Ok(!(p == r && q == s)),
            CompareOp::Lt | CompareOp::Le | CompareOp::Gt | CompareOp::Ge => Err(not_for(op.name(), "C64")),
        },
        _ => Err(not_for(op.name(), "mixed")),
    }
}

#[cfg(test)]
mod tests;

//! The elementwise family on the GPU against `cpu-ref`: every Unary, Binary, Compare, Where, Fma
//! and Cast op on every dtype the spec allows, on shapes that straddle a workgroup (257), with
//! broadcasting, rank 0 and empty tensors, and with the special values of §2.2 placed first in
//! every input. Outputs are compared with the op's tolerance class (§1.11). Each test collects
//! every failing (op, dtype) before failing, and prints the worst error of each variant
//! (`cargo test -p backend-wgpu --test elementwise -- --nocapture`).

mod binary;
mod bits;
mod cast;
mod harness;
mod values;

use backend_api::op::{CompareOp, UnaryOp};
use backend_api::spec::Tolerance;
use backend_api::{DType, Tensor};
use backend_cpu_ref as _;
use harness::Harness;
use values::*;

// ---------------------------------------------------------------------------------------------
// Unary

fn unary_domain(op: UnaryOp, d: DType) -> Dom {
    let sub = min_normal(d) / 4.0;
    let any = dom(
        &[Piece::Uni(-100.0, 100.0), Piece::Log(1e-20, 1e20, true), Piece::Ints(5)],
        &[max_finite(d), -max_finite(d), min_normal(d), -min_normal(d), 0.5, -0.5, 1.0, -1.0],
    );
    match op {
        UnaryOp::Relu | UnaryOp::Neg | UnaryOp::Abs => {
            let mut a = any.clone();
            a.specials.extend_from_slice(&[sub, -sub, min_normal(d) / 2.0]);
            a
        }
        UnaryOp::Sign | UnaryOp::Not => any,
        UnaryOp::Sigmoid | UnaryOp::Silu | UnaryOp::Softplus => {
            dom(&[Piece::Uni(-30.0, 30.0)], &[1000.0, -1000.0, 1e-8, -1e-8])
        }
        UnaryOp::Tanh => dom(&[Piece::Uni(-20.0, 20.0), Piece::Log(1e-6, 1.0, true)], &[1000.0, -1000.0, 1e-8, -1e-30]),
        UnaryOp::Exp if d == DType::F16 => dom(&[Piece::Uni(-10.0, 10.0)], &[1000.0, -1000.0, 11.5, -17.0]),
        UnaryOp::Exp => dom(&[Piece::Uni(-80.0, 80.0)], &[1000.0, -1000.0, 88.7, 709.7, -745.0, 1e-10]),
        UnaryOp::Log => dom(&[Piece::Log(1e-6, 1e6, false)], &[-1.0, -1e-3, 1.0, sub, 1e-300, max_finite(d)]),
        UnaryOp::Sqrt => {
            dom(&[Piece::Uni(0.0, 1e6), Piece::Log(1e-6, 1e6, false)], &[-1.0, 4.0, sub, 1e-300, max_finite(d)])
        }
        UnaryOp::Rsqrt => dom(&[Piece::Log(1e-6, 1e6, false)], &[-1.0, 4.0, sub, 1e-300]),
        UnaryOp::Gelu | UnaryOp::GeluApprox => dom(&[Piece::Uni(-10.0, 10.0)], &[1e5, -1e5, 30.0, -30.0, 1e-8]),
        UnaryOp::Round => dom(
            &[Piece::Uni(-1e4, 1e4), Piece::Halves(1e4), Piece::Halves(4.0)],
            &[-0.4, -0.5, 0.5, 1.5, 2.5, -2.5, 1e10, -1e10, 8388607.5, 4503599627370495.5],
        ),
        UnaryOp::Floor | UnaryOp::Ceil => dom(
            &[Piece::Uni(-1e4, 1e4), Piece::Halves(10.0), Piece::Ints(100)],
            &[-0.5, 0.5, -0.1, 0.1, 1e10, -1e10, 4503599627370495.5],
        ),
        UnaryOp::Reciprocal => dom(&[Piece::Log(1e-6, 1e6, true)], &[1.0, -3.0]),
        UnaryOp::Sin | UnaryOp::Cos => dom(
            &[Piece::Uni(-10.0, 10.0), Piece::Log(1e5, 1e30, true)],
            &[100.0, -1000.0, 3.0, 1e-8, 3e4, -9.9e4, 1e6, 1e22, 3.4e38, 1e300, -1.7e308],
        ),
        UnaryOp::Tan => {
            let mut t = dom(&[Piece::Uni(-10.0, 10.0)], &[1e-8, 1.0, -1.0, 1e22]);
            t.accept = Some(|x| x.cos().abs() >= 0.1);
            t
        }
        UnaryOp::Atan => dom(&[Piece::Uni(-1e3, 1e3), Piece::Log(1e-6, 1e6, true)], &[1.0, -1.0, 1e30, -1e-30]),
        UnaryOp::Erf => dom(&[Piece::Uni(-6.0, 6.0), Piece::Log(1e-6, 1.0, true)], &[2.5, -2.5, 3.0, 30.0, -30.0]),
    }
}

fn unary_case(h: &mut Harness, op: UnaryOp, d: DType) {
    let mut r = Rng::new(op as u64 * 131 + d as u64);
    let fd = unary_domain(op, d);
    let x = tensor_of(&mut r, d, &[N], &fd, (-100, 100), &[]);
    let x2 = tensor_of(&mut r, d, &[2, 3], &fd, (-100, 100), &[]);
    let x0 = tensor_of(&mut r, d, &[], &fd, (-100, 100), &[]);
    let empty = tensor_of(&mut r, d, &[0, 4], &fd, (-100, 100), &[]);
    let tol = op.tolerance(d);
    h.check(&format!("Unary.{} {d}", op.name()), &[x, x2, x0, empty], tol, |g, v| {
        v.iter().map(|&x| g.unary(op, x).unwrap()).collect()
    });
}

#[test]
fn unary_ops_match_cpu_ref() {
    let mut h = Harness::new();
    for &op in UnaryOp::ALL {
        let set = op.dtypes();
        let dts: Vec<DType> = DType::ALL.iter().copied().filter(|&d| set.contains(d) && h.has(d)).collect();
        for d in dts {
            unary_case(&mut h, op, d);
        }
    }
    h.finish("unary");
}

// ---------------------------------------------------------------------------------------------
// Compare, Where, Fma

/// Operands drawn from a small pool so that ties, ±0 and NaN meet each other.
fn pooled(d: DType, r: &mut Rng, n: usize) -> Tensor {
    let pool_f = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 2.5, 1e-3, -7.0];
    match d {
        DType::C64 => {
            let v: Vec<(f64, f64)> = (0..n).map(|_| (pool_f[r.below(4) + 5], pool_f[r.below(7)])).collect();
            c64_tensor(&[n], &v)
        }
        _ if d.is_float() => float_tensor(d, &[n], &(0..n).map(|_| pool_f[r.below(pool_f.len())]).collect::<Vec<_>>()),
        DType::Bool => int_tensor(d, &[n], &(0..n).map(|_| (r.next() & 1) as i128).collect::<Vec<_>>()),
        _ => {
            let (lo, hi) = int_range(d);
            let pool = [0, 1, -1, 5, lo, hi, 100];
            int_tensor(d, &[n], &(0..n).map(|_| wrap(d, pool[r.below(pool.len())])).collect::<Vec<_>>())
        }
    }
}

#[test]
fn compare_ops_match_cpu_ref() {
    let mut h = Harness::new();
    for &op in CompareOp::ALL {
        let set = op.dtypes();
        let dts: Vec<DType> = DType::ALL.iter().copied().filter(|&d| set.contains(d) && h.has(d)).collect();
        for d in dts {
            let mut r = Rng::new(op as u64 * 31 + d as u64);
            let (a, b) = (pooled(d, &mut r, 600), pooled(d, &mut r, 600));
            let fd = dom(&[Piece::Uni(-3.0, 3.0)], &[]);
            let p = tensor_of(&mut r, d, &[5, 1, 60], &fd, (-3, 3), &[]);
            let q = tensor_of(&mut r, d, &[3, 60], &fd, (-3, 3), &[]);
            let e = tensor_of(&mut r, d, &[2, 0], &fd, (-3, 3), &[]);
            h.check(&format!("Compare.{} {d}", op.name()), &[a, b, p, q, e], Tolerance::Exact, |g, v| {
                vec![
                    g.compare(op, v[0], v[1]).unwrap(),
                    g.compare(op, v[2], v[3]).unwrap(),
                    g.compare(op, v[4], v[4]).unwrap(),
                ]
            });
        }
    }
    h.finish("compare");
}

#[test]
fn where_matches_cpu_ref_for_every_dtype() {
    let mut h = Harness::new();
    let dts: Vec<DType> = DType::ALL.iter().copied().filter(|&d| h.has(d)).collect();
    for d in dts {
        let mut r = Rng::new(d as u64 + 5);
        let fd = dom(&[Piece::Uni(-100.0, 100.0), Piece::Log(1e-30, 1e30, true)], &[]);
        let cond = tensor_of(&mut r, DType::Bool, &[1, N], &fd, (0, 1), &[]);
        let x = tensor_of(&mut r, d, &[2, N], &fd, (-100, 100), &[]);
        let y = tensor_of(&mut r, d, &[2, 1], &fd, (-100, 100), &[]);
        let c0 = tensor_of(&mut r, DType::Bool, &[], &fd, (0, 1), &[]);
        let e = tensor_of(&mut r, d, &[0], &fd, (-100, 100), &[]);
        h.check(&format!("Where {d}"), &[cond, x, y, c0, e], Tolerance::Exact, |g, v| {
            vec![
                g.where_(v[0], v[1], v[2]).unwrap(),
                g.where_(v[3], v[2], v[1]).unwrap(),
                g.where_(v[3], v[4], v[4]).unwrap(),
            ]
        });
    }
    h.finish("where");
}

#[test]
fn fma_matches_cpu_ref() {
    let mut h = Harness::new();
    for d in FLOATS {
        if !h.has(d) {
            continue;
        }
        let mut r = Rng::new(d as u64 + 77);
        let ab = dom(&[Piece::Uni(-2.0, 2.0)], &[1.0, -1.0]);
        let cd = dom(&[Piece::Uni(-4.0, 4.0)], &[]);
        let a = tensor_of(&mut r, d, &[N], &ab, (0, 0), &[]);
        let b = tensor_of(&mut r, d, &[N], &ab, (0, 0), &[]);
        let mut c = tensor_of(&mut r, d, &[N + 2], &cd, (0, 0), &[]);
        c = Tensor::from_bytes(d, &[N], c.bytes()[2 * d.size()..].to_vec()).unwrap();
        let p = tensor_of(&mut r, d, &[4, 1, 1], &ab, (0, 0), &[]);
        let q = tensor_of(&mut r, d, &[1, 5, 1], &ab, (0, 0), &[]);
        let s = tensor_of(&mut r, d, &[60], &cd, (0, 0), &[]);
        h.check(&format!("Fma {d}"), &[a, b, c, p, q, s], Tolerance::Close, |g, v| {
            vec![g.fma(v[0], v[1], v[2]).unwrap(), g.fma(v[3], v[4], v[5]).unwrap()]
        });
    }
    h.finish("fma");
}

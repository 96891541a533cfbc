//! Binary ops: special pairs, the test domains, broadcasting, rank 0 and empty operands.

use crate::harness::Harness;
use crate::values::*;
use backend_api::op::BinaryOp;
use backend_api::DType;

/// Paired operands (a[i], b[i]) for op on float dtype d: special pairs first, then the test domain.
fn binary_float_pairs(op: BinaryOp, d: DType, r: &mut Rng, n: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut pairs = |sa: &[f64], sb: &[f64]| {
        for &x in sa {
            for &y in sb {
                a.push(round_to(d, x));
                b.push(round_to(d, y));
            }
        }
    };
    let any = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.5, 3.0];
    match op {
        BinaryOp::Pow => pairs(
            &[0.0, -0.0, 1.0, -1.0, INF, -INF, NAN, 2.0, -2.0, 0.5, -0.5],
            &[0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5],
        ),
        BinaryOp::Rem | BinaryOp::Mod => {
            pairs(&[INF, -INF, NAN, 0.0, -0.0, 5.5, -5.5, 4.0, -4.0], &[0.0, -0.0, INF, -INF, NAN, 2.0, -2.0])
        }
        _ => pairs(&any, &any),
    }
    let k = a.len();
    let (mut a, mut b) = (a, b);
    for _ in k..n.max(k) {
        let (x, y) = match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Max | BinaryOp::Min => {
                let p = [Piece::Uni(-100.0, 100.0), Piece::Log(1e-20, 1e20, true), Piece::Ints(5)];
                (p[r.below(3)].draw(r), p[r.below(3)].draw(r))
            }
            BinaryOp::Div => {
                let p = [Piece::Log(1e-3, 1e3, true), Piece::Uni(-10.0, 10.0)];
                (p[r.below(2)].draw(r), p[r.below(2)].draw(r))
            }
            BinaryOp::Rem | BinaryOp::Mod => remainder_pair(d, r),
            BinaryOp::Pow => {
                if r.unit() < 0.5 {
                    let e = if d == DType::F16 { 2.0 } else { 4.0 };
                    (Piece::Log(0.01, 100.0, false).draw(r), r.uniform(-e, e))
                } else {
                    (Piece::Log(0.1, 10.0, true).draw(r), Piece::Ints(4).draw(r))
                }
            }
            BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => (0.0, 0.0),
        };
        a.push(round_to(d, x));
        b.push(round_to(d, y));
    }
    (a, b)
}

/// `|a/b| <= 1000` and a/b at least 1e-3 away from an integer, after rounding to d.
fn remainder_pair(d: DType, r: &mut Rng) -> (f64, f64) {
    for _ in 0..100 {
        let b = round_to(d, Piece::Log(0.01, 100.0, true).draw(r));
        let q = r.uniform(-1000.0, 1000.0);
        let a = round_to(d, q * b);
        let t = a / b;
        if t.abs() <= 1000.0 && (t - t.round()).abs() >= 1e-3 {
            return (a, b);
        }
    }
    (2.5, 1.0)
}

/// Integer operand pairs for op on dtype d: every boundary against every boundary, then random.
fn binary_int_pairs(op: BinaryOp, d: DType, r: &mut Rng, n: usize) -> (Vec<i128>, Vec<i128>) {
    let (lo, hi) = int_range(d);
    let bounds = [0, 1, -1, 2, -2, 7, -7, lo, hi, lo + 1, hi - 1];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &bounds {
        for &y in &bounds {
            a.push(wrap(d, x));
            b.push(wrap(d, y));
        }
    }
    let (sa, sb) = match op {
        BinaryOp::Pow => ((-10, 10), (-5, 70)),
        _ => ((-100, 100), (-100, 100)),
    };
    let ra = ints(r, d, n, sa, &[]);
    let rb = ints(r, d, n + 5, sb, &[]);
    a.extend_from_slice(&ra);
    b.extend_from_slice(&rb[5..]);
    (a, b)
}

fn binary_case(h: &mut Harness, op: BinaryOp, d: DType) {
    let mut r = Rng::new(op as u64 * 977 + d as u64);
    let tol = op.tolerance(d);
    // paired operands (specials x specials), same shape
    let (a, b) = if d.is_float() {
        let (a, b) = binary_float_pairs(op, d, &mut r, N);
        let n = a.len();
        (float_tensor(d, &[n], &a), float_tensor(d, &[n], &b))
    } else if d == DType::C64 {
        let comp = [Piece::Halves(64.0), Piece::Ints(127), Piece::Log(1e-3, 1e15, true)];
        let mut c = || -> (f64, f64) { (comp[r.below(3)].draw(&mut r), comp[r.below(3)].draw(&mut r)) };
        let av: Vec<_> = (0..N).map(|_| c()).collect();
        let mut bv: Vec<_> = (0..N).map(|_| c()).collect();
        bv[0] = (0.0, 0.0);
        bv[1] = (-0.0, 0.0);
        (c64_tensor(&[N], &av), c64_tensor(&[N], &bv))
    } else if d == DType::Bool {
        let v: Vec<i128> = (0..N).map(|i| (i & 1) as i128).collect();
        let w: Vec<i128> = (0..N).map(|i| ((i >> 1) & 1) as i128).collect();
        (int_tensor(d, &[N], &v), int_tensor(d, &[N], &w))
    } else {
        let (a, b) = binary_int_pairs(op, d, &mut r, N);
        let n = a.len();
        (int_tensor(d, &[n], &a), int_tensor(d, &[n], &b))
    };
    // broadcast shapes [3, 1, 70] x [4, 70], a rank-0 operand and an empty one
    let fd = dom(&[Piece::Uni(-10.0, 10.0), Piece::Log(0.01, 100.0, true)], &[]);
    let small = if op == BinaryOp::Pow { (-3, 3) } else { (-50, 50) };
    let mk = |r: &mut Rng, shape: &[usize]| tensor_of(r, d, shape, &fd, small, &[]);
    let (p, q) = (mk(&mut r, &[3, 1, 70]), mk(&mut r, &[4, 70]));
    let (s, t) = (mk(&mut r, &[]), mk(&mut r, &[N]));
    let (e, f) = (mk(&mut r, &[0, 3]), mk(&mut r, &[1, 3]));
    h.check(&format!("Binary.{} {d}", op.name()), &[a, b, p, q, s, t, e, f], tol, |g, v| {
        (0..4).map(|k| g.binary(op, v[2 * k], v[2 * k + 1]).unwrap()).collect()
    });
}

#[test]
fn binary_ops_match_cpu_ref() {
    let mut h = Harness::new();
    for &op in BinaryOp::ALL {
        let set = op.dtypes();
        let dts: Vec<DType> = DType::ALL.iter().copied().filter(|&d| set.contains(d) && h.has(d)).collect();
        for d in dts {
            binary_case(&mut h, op, d);
        }
    }
    h.finish("binary");
}

/// BF16 Mul/Div results that round up to BF16's smallest normal 2^-126 from just below it: the f32
/// intermediate is subnormal there, and drivers that flush f32 subnormals (NVIDIA) returned 0.
/// Expected bits are worked by hand (bf16 = the high half of the f32 bits).
#[test]
fn bf16_mul_div_round_up_to_the_smallest_normal() {
    use backend_api::{GraphBuilder, Tensor};
    let bits = |v: &[u16]| {
        Tensor::from_bytes(DType::BF16, &[v.len()], v.iter().flat_map(|x| x.to_le_bytes()).collect()).unwrap()
    };
    // Mul: (1.9921875·2^-63)·2^-64 = 2^-126 − 2^-134, a tie → even → 2^-126 (0x0080);
    // (1.4140625·2^-63)·(1.4140625·2^-64) ≈ 0.99979·2^-126 → 2^-126; negated operands → −2^-126;
    // 2^-63·2^-64 = 2^-127 is a BF16 subnormal (0x0040), which may flush to 0.
    let a = bits(&[0x207f, 0x2035, 0xa035, 0x2000, 0x3f80]);
    let b = bits(&[0x1f80, 0x1fb5, 0x1fb5, 0x1f80, 0x3f80]);
    // Div: (1.9921875·2^-126) / 2 = 2^-126 − 2^-134 → 2^-126; (−1.9921875·2^-126) / 2 → −2^-126.
    let c = bits(&[0x00ff, 0x80ff, 0x0080, 0x3f80, 0x4000]);
    let d = bits(&[0x4000, 0x4000, 0x4000, 0x4000, 0x4000]);
    let mut g = GraphBuilder::new();
    let (xa, xb) = (g.input("a", DType::BF16, [5]).unwrap(), g.input("b", DType::BF16, [5]).unwrap());
    let (xc, xd) = (g.input("c", DType::BF16, [5]).unwrap(), g.input("d", DType::BF16, [5]).unwrap());
    let m = g.binary(BinaryOp::Mul, xa, xb).unwrap();
    let q = g.binary(BinaryOp::Div, xc, xd).unwrap();
    g.output(m).unwrap();
    g.output(q).unwrap();
    let be = backend_api::create("wgpu").unwrap();
    let mut exe = be.compile(&g.build().unwrap(), &Default::default()).unwrap();
    let out = exe.run(&[("a", a.view()), ("b", b.view()), ("c", c.view()), ("d", d.view())]).unwrap();
    let words = |t: &Tensor| -> Vec<u16> { t.bytes().chunks(2).map(|w| u16::from_le_bytes([w[0], w[1]])).collect() };
    let (m, q) = (words(&out[0]), words(&out[1]));
    assert_eq!(&m[..3], &[0x0080, 0x0080, 0x8080], "mul {m:04x?}");
    assert!(m[3] == 0x0040 || m[3] == 0x0000, "mul of a subnormal result: {:04x}", m[3]);
    assert_eq!(m[4], 0x3f80);
    assert_eq!(&q[..2], &[0x0080, 0x8080], "div {q:04x?}");
    assert!(q[2] == 0x0040 || q[2] == 0x0000, "div of a subnormal result: {:04x}", q[2]);
    assert_eq!(&q[3..], &[0x3f00, 0x3f80], "div {q:04x?}");
}

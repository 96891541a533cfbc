//! Fixed `Attention` cases (§2.8.1) at the edges the property tests reach only by chance, run on
//! the backend under test (`CONFORMANCE_BACKEND`, default `wgpu`) against `cpu-ref`: fully masked
//! rows, no keys, queries before the first key (`δ < 0`), a +∞ bias, head widths that are not a
//! multiple of 4, and long key ranges for decode rows (3000 keys, and 33,000 keys, more than any
//! one workgroup's share). Each case also checks that the reference shows the edge (zeros, NaN)
//! so that it cannot silently stop testing it. An `Unsupported` passes only while
//! `conformance::expected` lists Attention for the backend.

use backend_api::op::{AttentionAttrs, AttnLayout, MaskAlign, MaskKind};
use backend_api::{DType, Tensor};
use conformance::problem::{nth, LeafKind};
use conformance::problems::attention::sdpa::{layout_shape, magnitude, Sizes};
use conformance::values::{bool_tensor, float_tensor, FloatDomain, Piece, Rng, Values};
use conformance::{expected_unsupported, CaseOutcome, Problem, ProblemBuilder, Runner, DEFAULT_BACKEND, REFERENCE};
use std::sync::OnceLock;

use backend_cpu_ref as _;
#[cfg(feature = "wgpu")]
use backend_wgpu as _;

fn runner() -> &'static Runner {
    static RUNNER: OnceLock<Runner> = OnceLock::new();
    RUNNER.get_or_init(|| {
        let name = std::env::var("CONFORMANCE_BACKEND").unwrap_or_else(|_| DEFAULT_BACKEND.to_string());
        Runner::new(&name, REFERENCE).unwrap_or_else(|e| panic!("cannot create {name:?} or the reference: {e}"))
    })
}

/// One fixed case: sizes, layout, attributes, and the optional keep-mask and bias.
struct Case {
    dtype: DType,
    layout: AttnLayout,
    s: Sizes,
    attrs: AttentionAttrs,
    keep: Option<Tensor>,
    bias: Option<Tensor>,
}

fn sizes(b: usize, (hq, hkv): (usize, usize), (sq, sk): (usize, usize), (d, dv): (usize, usize)) -> Sizes {
    Sizes { b, hkv, group: hq / hkv, sq, sk, d, dv }
}

impl Case {
    fn new(dtype: DType, layout: AttnLayout, s: Sizes) -> Case {
        let attrs = AttentionAttrs { num_kv_heads: s.hkv as u32, ..AttentionAttrs::new(layout, s.hq() as u32) };
        Case { dtype, layout, s, attrs, keep: None, bias: None }
    }

    /// The problem, with `q`, `k`, `v` uniform in [−1, 1] from `seed`.
    fn problem(&self, seed: u64) -> Problem {
        let (s, l) = (&self.s, self.layout);
        let mut rng = Rng::new(seed);
        let vals = Values::floats(FloatDomain::new(&[Piece::Uniform(-1.0, 1.0)], &[]));
        let mut tensor = |shape: [usize; 4]| vals.tensor(&mut rng, self.dtype, &layout_shape(l, shape), 0.0).unwrap();
        let (q, k, v) =
            (tensor([s.b, s.hq(), s.sq, s.d]), tensor([s.b, s.hkv, s.sk, s.d]), tensor([s.b, s.hkv, s.sk, s.dv]));
        let mut pb = ProblemBuilder::new();
        let [q, k, v] = [q, k, v].map(|t| pb.leaf(LeafKind::Input, t).unwrap());
        let keep = self.keep.clone().map(|t| pb.leaf(LeafKind::Input, t).unwrap());
        let bias = self.bias.clone().map(|t| pb.leaf(LeafKind::Input, t).unwrap());
        let y = pb.g().attention(q, k, v, keep, bias, self.attrs).unwrap();
        pb.finish_with_magnitude(&[y], |g, abs| Ok(vec![magnitude(g, nth(abs, 2)?, s, l)?])).unwrap()
    }

    /// Runs the case on the backend under test against the reference; returns the reference
    /// output in logical `[B, Hq, Sq, Dv]` order as f64.
    fn check(&self, name: &str) -> Vec<f64> {
        let p = self.problem(0x5eed ^ name.len() as u64);
        let backend = runner().backend_name();
        match runner().check(&p) {
            CaseOutcome::Pass { .. } => {}
            CaseOutcome::Unsupported(m) if expected_unsupported(backend, "Attention", self.dtype).is_some() => {
                eprintln!("{name} [{}]: unsupported on {backend}, as expected: {m}", self.dtype)
            }
            other => panic!("{name} [{}] on {backend}: {other:?}", self.dtype),
        }
        self.reference(&p)
    }

    fn reference(&self, p: &Problem) -> Vec<f64> {
        let be = backend_api::create(REFERENCE).unwrap();
        let mut exe = be.compile(&p.graph, &Default::default()).unwrap();
        let inputs: Vec<_> = p.inputs.iter().map(|(n, t)| (n.as_str(), t.view())).collect();
        let out = exe.run(&inputs).unwrap().remove(0);
        let f32s = backend_api::Tensor::to_vec::<f32>;
        let flat: Vec<f64> = match self.dtype {
            DType::F32 => f32s(&out).unwrap().into_iter().map(f64::from).collect(),
            DType::F16 => out.to_vec::<half::f16>().unwrap().into_iter().map(f64::from).collect(),
            _ => out.to_vec::<half::bf16>().unwrap().into_iter().map(f64::from).collect(),
        };
        self.logical(&flat)
    }

    /// The output in logical `[B, Hq, Sq, Dv]` order.
    fn logical(&self, flat: &[f64]) -> Vec<f64> {
        let s = &self.s;
        let mut out = Vec::new();
        for b in 0..s.b {
            for h in 0..s.hq() {
                for i in 0..s.sq {
                    for e in 0..s.dv {
                        let at = match self.layout {
                            AttnLayout::Bhsd | AttnLayout::FlatHeads => ((b * s.hq() + h) * s.sq + i) * s.dv + e,
                            AttnLayout::Bshd | AttnLayout::BsPacked => ((b * s.sq + i) * s.hq() + h) * s.dv + e,
                        };
                        out.push(flat[at]);
                    }
                }
            }
        }
        out
    }

    /// The `Dv` outputs of logical row `[b, h, i]` from a logical output.
    fn row<'a>(&self, out: &'a [f64], [b, h, i]: [usize; 3]) -> &'a [f64] {
        let start = ((b * self.s.hq() + h) * self.s.sq + i) * self.s.dv;
        &out[start..start + self.s.dv]
    }
}

const DTYPES: [DType; 3] = [DType::F32, DType::F16, DType::BF16];

#[test]
fn fully_masked_rows_are_zero() {
    for dtype in DTYPES {
        // Keep-mask [Sq, Sk]: query row 1 keeps no key; bias [Hq, Sq, 1]: row 2 of head 1 is −∞.
        let mut c = Case::new(dtype, AttnLayout::Bhsd, sizes(2, (2, 1), (3, 37), (8, 8)));
        let mut keep = bool_tensor(&mut Rng::new(3), &[3, 37], 0.999).unwrap().to_vec::<bool>().unwrap();
        keep[37..74].iter_mut().for_each(|x| *x = false);
        c.keep = Some(Tensor::from_slice(&[3, 37], &keep).unwrap());
        let mut bias = vec![0.0; 6];
        bias[5] = f64::NEG_INFINITY;
        c.bias = Some(float_tensor(DType::F32, &[2, 3, 1], &bias).unwrap());
        c.attrs = AttentionAttrs { has_keep_mask: true, has_bias: true, ..c.attrs };
        let out = c.check("fully masked rows");
        for b in 0..2 {
            for h in 0..2 {
                assert!(c.row(&out, [b, h, 1]).iter().all(|x| *x == 0.0));
                assert!(c.row(&out, [b, h, 0]).iter().any(|x| *x != 0.0));
            }
            assert!(c.row(&out, [b, 1, 2]).iter().all(|x| *x == 0.0));
        }
    }
}

#[test]
fn no_keys_give_zeros() {
    for (dtype, layout) in [(DType::F32, AttnLayout::Bshd), (DType::F16, AttnLayout::BsPacked)] {
        let c = Case::new(dtype, layout, sizes(2, (4, 2), (5, 0), (6, 3)));
        let out = c.check("Sk = 0");
        assert_eq!(out.len(), 2 * 4 * 5 * 3);
        assert!(out.iter().all(|x| *x == 0.0));
    }
}

#[test]
fn queries_before_the_first_key_see_nothing() {
    // Sq = 9, Sk = 4, End: δ = −5, so rows 0..=4 have no key under Causal; a window of 2 too.
    for (dtype, mask) in [(DType::F32, MaskKind::Causal), (DType::BF16, MaskKind::SlidingWindow { window: 2 })] {
        let mut c = Case::new(dtype, AttnLayout::FlatHeads, sizes(1, (3, 3), (9, 4), (16, 5)));
        c.attrs = AttentionAttrs { mask, mask_align: MaskAlign::End, ..c.attrs };
        let out = c.check("δ < 0");
        for h in 0..3 {
            for i in 0..9 {
                let zero = c.row(&out, [0, h, i]).iter().all(|x| *x == 0.0);
                assert_eq!(zero, i < 5, "{mask:?} row {i}");
            }
        }
    }
}

#[test]
fn an_infinite_bias_gives_nan_rows() {
    for dtype in DTYPES {
        // Bias [Sk]: key 3 gets +∞ for every row; key 2 gets −∞ (allowed, weight 0).
        let mut c = Case::new(dtype, AttnLayout::Bshd, sizes(1, (2, 2), (4, 20), (4, 4)));
        let mut bias = vec![0.5; 20];
        bias[3] = f64::INFINITY;
        bias[2] = f64::NEG_INFINITY;
        c.bias = Some(float_tensor(dtype, &[20], &bias).unwrap());
        c.attrs = AttentionAttrs { has_bias: true, mask: MaskKind::Causal, mask_align: MaskAlign::Start, ..c.attrs };
        let out = c.check("+∞ bias");
        for h in 0..2 {
            for i in 0..4 {
                // Rows 0..=2 do not reach key 3 under the causal mask.
                assert_eq!(c.row(&out, [0, h, i]).iter().all(|x| x.is_nan()), i == 3, "row {i}");
            }
        }
    }
}

#[test]
fn head_widths_off_the_vector_width() {
    let shapes = [(5, 7), (3, 1), (1, 9), (13, 6), (67, 33)];
    for (n, (d, dv)) in shapes.into_iter().enumerate() {
        let dtype = DTYPES[n % 3];
        let layout = [AttnLayout::Bhsd, AttnLayout::Bshd, AttnLayout::BsPacked, AttnLayout::FlatHeads][n % 4];
        let mut c = Case::new(dtype, layout, sizes(2, (6, 2), (17, 33), (d, dv)));
        c.attrs = AttentionAttrs { mask: MaskKind::Causal, softcap: Some(5.0), ..c.attrs };
        let out = c.check("odd head width");
        assert!(out.iter().all(|x| x.is_finite()));
    }
}

#[test]
fn long_key_ranges() {
    for (dtype, sq) in [(DType::F32, 1), (DType::F16, 1), (DType::BF16, 5), (DType::F32, 5)] {
        let mut c = Case::new(dtype, AttnLayout::Bshd, sizes(1, (2, 1), (sq, 3000), (4, 4)));
        c.attrs = AttentionAttrs { mask: MaskKind::Causal, ..c.attrs };
        let out = c.check("Sk = 3000");
        assert!(out.iter().all(|x| x.is_finite() && x.abs() < 1.0));
    }
    // 33,000 keys for one query: more than any single workgroup's share, so the split over key
    // chunks and its merge are exercised with scratch bounded by the chunk count.
    let mut c = Case::new(DType::F32, AttnLayout::Bhsd, sizes(1, (1, 1), (1, 33_000), (8, 8)));
    c.attrs = AttentionAttrs { scale: Some(2.0), ..c.attrs };
    let out = c.check("Sk = 33000");
    assert!(out.iter().all(|x| x.is_finite()) && out.iter().any(|x| *x != 0.0));
}

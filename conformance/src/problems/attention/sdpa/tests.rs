//! Tests of the Attention generator: the magnitude graph in every layout, the caps, and that the
//! drawn cases reach every attribute.

use super::*;
use crate::problem::LeafKind;
use backend_api::op::Op;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

const LAYOUTS: [AttnLayout; 4] = [AttnLayout::Bhsd, AttnLayout::Bshd, AttnLayout::BsPacked, AttnLayout::FlatHeads];

fn skel(seed: u64) -> Skeleton {
    Skeleton { shape: vec![], kinds: vec![LeafKind::Input; 5], seed, rate: 0.0 }
}

/// Offset of logical `[b, h, s, w]` in a tensor of `layout` with logical sizes `[_, nh, ns, nw]`,
/// strides written out per layout.
fn offset(layout: AttnLayout, [_, nh, ns, nw]: [usize; 4], [b, h, s, w]: [usize; 4]) -> usize {
    match layout {
        AttnLayout::Bhsd => b * nh * ns * nw + h * ns * nw + s * nw + w,
        AttnLayout::Bshd => b * ns * nh * nw + s * nh * nw + h * nw + w,
        AttnLayout::BsPacked => b * ns * (nh * nw) + s * (nh * nw) + (h * nw + w),
        AttnLayout::FlatHeads => (b * nh + h) * ns * nw + s * nw + w,
    }
}

fn magnitudes(p: &crate::Problem) -> Vec<f64> {
    let be = backend_api::create("cpu-ref").unwrap();
    let mut exe = be.compile(p.magnitude.as_ref().unwrap(), &Default::default()).unwrap();
    let inputs: Vec<(&str, backend_api::TensorView<'_>)> =
        p.inputs.iter().map(|(n, t)| (n.as_str(), t.view())).collect();
    exe.run(&inputs).unwrap()[0].to_vec::<f64>().unwrap()
}

#[test]
fn the_magnitude_is_the_largest_value_of_the_kv_head_in_every_layout() {
    let shapes = [
        Sizes { b: 2, hkv: 2, group: 3, sq: 3, sk: 5, d: 3, dv: 4 },
        Sizes { b: 1, hkv: 1, group: 4, sq: 2, sk: 7, d: 2, dv: 1 },
        Sizes { b: 2, hkv: 3, group: 1, sq: 1, sk: 0, d: 4, dv: 2 },
    ];
    for s in shapes {
        for layout in LAYOUTS {
            let p = case(DType::F32, &skel(7), s, Some(layout)).unwrap();
            let v = p.inputs[2].1.to_vec::<f32>().unwrap();
            let (hq, m) = (s.hq(), magnitudes(&p));
            assert_eq!(m.len(), s.b * hq * s.sq * s.dv, "{layout:?} {s:?}");
            for (b, h, i, e) in itertools(s.b, hq, s.sq, s.dv) {
                let g = h / s.group;
                let want = (0..s.sk)
                    .map(|j| f64::from(v[offset(layout, [s.b, s.hkv, s.sk, s.dv], [b, g, j, e])].abs()))
                    .fold(0.0, f64::max);
                let got = m[offset(layout, [s.b, hq, s.sq, s.dv], [b, h, i, e])];
                assert_eq!(got, want, "{layout:?} {s:?} at [{b}, {h}, {i}, {e}]");
            }
        }
    }
}

/// Every `(b, h, i, e)` of the logical output.
fn itertools(b: usize, h: usize, s: usize, w: usize) -> Vec<(usize, usize, usize, usize)> {
    let mut all = Vec::new();
    for bi in 0..b {
        for hi in 0..h {
            for si in 0..s {
                for wi in 0..w {
                    all.push((bi, hi, si, wi));
                }
            }
        }
    }
    all
}

#[test]
fn fitted_sizes_respect_the_caps_and_keep_decode_rows() {
    let mut runner = TestRunner::deterministic();
    let (mut decode, mut long) = (0, 0);
    for seed in 0..2000u64 {
        let mut s = sizes().new_tree(&mut runner).unwrap().current();
        let before = s;
        s.fit(&mut Rng::new(seed));
        assert!(s.work() <= WORK_CAP && s.largest() <= MAX_NUMEL, "{before:?} -> {s:?}");
        assert!((1..=8).contains(&s.hq()) && (1..=3).contains(&s.b), "{s:?}");
        assert!(s.d >= 1 && s.dv >= 1 && s.d <= 130 && s.dv <= 130, "{s:?}");
        if s.sq == 1 && s.sk > 256 {
            decode += 1;
            long = long.max(s.sk);
        }
    }
    assert!(decode > 50 && long >= 1024, "{decode} decode cases, longest {long}");
}

/// What a sample of cases has reached.
#[derive(Default)]
struct Seen {
    layouts: Vec<AttnLayout>,
    masks: [bool; 3],
    aligns: [bool; 2],
    scale: [bool; 4],
    softcap: [bool; 2],
    heads: [bool; 3],
    keep: bool,
    f32_bias: bool,
    own_bias: bool,
    ragged: [bool; 2],
    long_window: bool,
}

fn record(seen: &mut Seen, p: &crate::Problem, dtype: DType) {
    let Some(n) = p.graph.nodes().iter().find(|n| matches!(n.op, Op::Attention(_))) else { panic!("no Attention") };
    let Op::Attention(a) = n.op else { unreachable!() };
    if !seen.layouts.contains(&a.layout) {
        seen.layouts.push(a.layout);
    }
    match a.mask {
        MaskKind::None => seen.masks[0] = true,
        MaskKind::Causal => seen.masks[1] = true,
        MaskKind::SlidingWindow { window } => {
            seen.masks[2] = true;
            seen.long_window |= window > 1 << 32;
        }
    }
    seen.aligns[usize::from(a.mask_align == MaskAlign::Start)] = true;
    let si = match a.scale {
        None => 0,
        Some(0.0) => 1,
        Some(x) if x < 0.0 => 2,
        Some(_) => 3,
    };
    seen.scale[si] = true;
    seen.softcap[usize::from(a.softcap.is_some())] = true;
    let hi = if a.num_kv_heads == a.num_heads {
        0
    } else if a.num_kv_heads == 1 {
        1
    } else {
        2
    };
    seen.heads[hi] = true;
    seen.keep |= a.has_keep_mask;
    if a.has_bias {
        let t = p.graph.value_type(*n.inputs.last().unwrap()).unwrap();
        seen.f32_bias |= t.dtype == DType::F32 && dtype != DType::F32;
        seen.own_bias |= t.dtype == dtype;
    }
    let out = p.graph.value_type(p.graph.outputs()[0]).unwrap();
    let k = p.graph.value_type(n.inputs[1]).unwrap();
    let seq = |t: &backend_api::TensorType| match a.layout {
        AttnLayout::Bhsd => t.shape.0[2].clone(),
        AttnLayout::Bshd | AttnLayout::BsPacked | AttnLayout::FlatHeads => t.shape.0[1].clone(),
    };
    let (sq, sk) = (seq(out).as_static().unwrap(), seq(k).as_static().unwrap());
    seen.ragged[usize::from(sq < sk)] |= sq != sk && sq > 0 && sk > 0;
}

#[test]
fn samples_reach_every_attribute() {
    for dtype in [DType::F16, DType::BF16] {
        let strategy = &variants("Attention").unwrap().into_iter().find(|v| v.dtype == dtype).unwrap().strategy;
        let mut runner = TestRunner::deterministic();
        let mut seen = Seen::default();
        for _ in 0..300 {
            let p = strategy.new_tree(&mut runner).unwrap().current().unwrap();
            record(&mut seen, &p, dtype);
        }
        assert_eq!(seen.layouts.len(), 4);
        assert!(seen.masks.iter().chain(&seen.aligns).chain(&seen.scale).chain(&seen.softcap).all(|x| *x));
        assert!(seen.heads.iter().chain(&seen.ragged).all(|x| *x));
        assert!(seen.keep && seen.f32_bias && seen.own_bias && seen.long_window);
    }
}

//! Attention on the wgpu backend against cpu-ref, through both fused kernels: the blocked kernel
//! (query blocks straddling its 32/64-row tiles, key blocks of 32, head widths around its
//! chunks) and the split kernel for few rows per key/value head (decoding, key ranges split over
//! workgroups, long key ranges); every layout, GQA and MQA, every structural mask and alignment,
//! broadcast keep-masks and biases, soft-cap and given scales, Dv ≠ D.

use backend_api::op::{AttentionAttrs, AttnLayout, MaskAlign, MaskKind};
use backend_api::{DType, Graph, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu as _;

mod common;
use common::*;

/// One problem: (B, Hq, Hkv, Sq, Sk, D, Dv), the attributes besides the heads, and the shapes
/// of the keep-mask and bias when present.
#[derive(Clone, Debug)]
struct Case {
    dims: [usize; 7],
    layout: AttnLayout,
    mask: MaskKind,
    align: MaskAlign,
    scale: Option<f32>,
    softcap: Option<f32>,
    keep: Option<Vec<usize>>,
    bias: Option<(Vec<usize>, DType)>,
}

fn case(dims: [usize; 7], layout: AttnLayout) -> Case {
    Case {
        dims,
        layout,
        mask: MaskKind::None,
        align: MaskAlign::End,
        scale: None,
        softcap: None,
        keep: None,
        bias: None,
    }
}

fn shapes(c: &Case) -> [Vec<usize>; 3] {
    let [b, hq, hkv, sq, sk, d, dv] = c.dims;
    match c.layout {
        AttnLayout::Bhsd => [vec![b, hq, sq, d], vec![b, hkv, sk, d], vec![b, hkv, sk, dv]],
        AttnLayout::Bshd => [vec![b, sq, hq, d], vec![b, sk, hkv, d], vec![b, sk, hkv, dv]],
        AttnLayout::BsPacked => [vec![b, sq, hq * d], vec![b, sk, hkv * d], vec![b, sk, hkv * dv]],
        AttnLayout::FlatHeads => [vec![b * hq, sq, d], vec![b * hkv, sk, d], vec![b * hkv, sk, dv]],
    }
}

fn graph(c: &Case, d: DType) -> Graph {
    let [_, hq, hkv, ..] = c.dims;
    let [qs, ks, vs] = shapes(c);
    let mut g = GraphBuilder::new();
    let q = g.input("q", d, qs.as_slice()).unwrap();
    let k = g.input("k", d, ks.as_slice()).unwrap();
    let v = g.input("v", d, vs.as_slice()).unwrap();
    let keep = c.keep.as_ref().map(|s| g.input("keep", DType::Bool, s.as_slice()).unwrap());
    let bias = c.bias.as_ref().map(|(s, bd)| g.input("bias", *bd, s.as_slice()).unwrap());
    let mut a = AttentionAttrs::new(c.layout, hq as u32);
    a.num_kv_heads = hkv as u32;
    a.mask = c.mask;
    a.mask_align = c.align;
    a.scale = c.scale;
    a.softcap = c.softcap;
    let y = g.attention(q, k, v, keep, bias, a).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

fn bools(shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut s = seed | 1;
    let v: Vec<bool> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            !s.is_multiple_of(4)
        })
        .collect();
    Tensor::from_slice(shape, &v).unwrap()
}

fn compare(name: &str, c: &Case, d: DType) {
    let g = graph(c, d);
    let [qs, ks, vs] = shapes(c);
    let q = random(d, &qs, -2.0, 2.0, 1);
    let k = random(d, &ks, -2.0, 2.0, 2);
    let v = random(d, &vs, -1.0, 1.0, 3);
    let keep = c.keep.as_ref().map(|s| bools(s, 4));
    let bias = c.bias.as_ref().map(|(s, bd)| random(*bd, s, -1.0, 1.0, 5));
    let mut ins: Vec<(&str, &Tensor)> = vec![("q", &q), ("k", &k), ("v", &v)];
    if let Some(t) = &keep {
        ins.push(("keep", t));
    }
    if let Some(t) = &bias {
        ins.push(("bias", t));
    }
    let got = run(wgpu(), &g, &ins);
    let want = run(cpu(), &g, &ins);
    // |V| <= 1: the (M) class with M = 1.
    check(&format!("{name} {d:?} {c:?}"), &got[0], &want[0], Some(approx(d)), None);
}

fn dtypes() -> Vec<DType> {
    [DType::F32, DType::F16, DType::BF16].into_iter().filter(|&d| supported(d)).collect()
}

#[test]
fn blocked_kernel_every_layout_and_grouping() {
    for layout in [AttnLayout::Bhsd, AttnLayout::Bshd, AttnLayout::BsPacked, AttnLayout::FlatHeads] {
        for dims in [[2, 4, 2, 70, 45, 20, 12], [1, 3, 1, 33, 33, 8, 8], [1, 2, 2, 65, 100, 40, 136]] {
            for d in dtypes() {
                compare("blocked", &case(dims, layout), d);
            }
        }
    }
}

#[test]
fn blocked_kernel_masks_and_alignment() {
    for mask in [MaskKind::Causal, MaskKind::SlidingWindow { window: 1 }, MaskKind::SlidingWindow { window: 17 }] {
        for align in [MaskAlign::End, MaskAlign::Start] {
            for dims in [[1, 2, 1, 70, 50, 16, 16], [1, 2, 2, 40, 90, 16, 8]] {
                let mut c = case(dims, AttnLayout::Bhsd);
                c.mask = mask;
                c.align = align;
                compare("masked", &c, DType::F32);
            }
        }
    }
}

#[test]
fn keep_mask_bias_softcap_and_scale() {
    let mut c = case([2, 4, 2, 40, 37, 12, 12], AttnLayout::Bshd);
    c.keep = Some(vec![2, 1, 40, 37]);
    c.bias = Some((vec![4, 1, 37], DType::F32));
    c.softcap = Some(2.5);
    c.scale = Some(0.7);
    for d in dtypes() {
        compare("keep+bias", &c, d);
        let mut c2 = c.clone();
        c2.bias = Some((vec![37], d));
        c2.keep = Some(vec![1, 4, 40, 1]);
        c2.mask = MaskKind::Causal;
        compare("keep+bias 2", &c2, d);
    }
}

#[test]
fn split_kernel_for_decoding() {
    // Sq = 1 (and 2) with GQA groups of 4, MQA, MHA; key ranges longer than one split.
    for dims in [[1, 8, 2, 1, 700, 32, 32], [2, 4, 1, 2, 300, 20, 130], [1, 3, 3, 1, 1, 5, 5], [1, 1, 1, 1, 2500, 8, 8]]
    {
        for d in dtypes() {
            compare("split", &case(dims, AttnLayout::Bhsd), d);
        }
    }
    let mut c = case([1, 4, 2, 2, 500, 16, 16], AttnLayout::BsPacked);
    c.mask = MaskKind::SlidingWindow { window: 100 };
    c.keep = Some(vec![1, 1, 2, 500]);
    c.bias = Some((vec![2, 500], DType::F32));
    compare("split masked", &c, DType::F32);
    c.mask = MaskKind::Causal;
    c.align = MaskAlign::Start;
    compare("split start-aligned", &c, DType::F32);
}

#[test]
fn empty_key_ranges_give_zeros() {
    for dims in [[1, 2, 1, 3, 0, 8, 8], [1, 2, 1, 70, 0, 8, 8]] {
        compare("no keys", &case(dims, AttnLayout::Bhsd), DType::F32);
    }
    // δ < 0 under Causal: the first rows see no key.
    let mut c = case([1, 2, 1, 70, 20, 8, 8], AttnLayout::Bhsd);
    c.mask = MaskKind::Causal;
    compare("δ < 0", &c, DType::F32);
}

//! The tensor-core attention kernel (`attention_flash_coop.wgsl`) against cpu-ref, for F16 on
//! adapters with 16 x 16 f16 -> f32 cooperative matrices: query blocks straddling its 64-row
//! tile, key ranges straddling its 64- and 32-key blocks, head widths from 16 to 256 with
//! Dv ≠ D, every layout, GQA and MQA, every structural mask and alignment, broadcast keep-masks
//! and biases of both dtypes, soft-cap, a large scale (the reference max moves often, so output
//! rows are rescaled) and rows that see no key.
//!
//! Adapters without such cooperative matrices (lavapipe) skip with a printed message: there the
//! scalar kernel runs, which `tests/attention.rs` covers.

use backend_api::op::{AttentionAttrs, AttnLayout, MaskAlign, MaskKind};
use backend_api::{DType, Graph, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu::{DeviceCaps, WgpuBackend, WgpuOptions};
use wgpu::wgt::CooperativeScalarType;

mod common;
use common::{approx, check, cpu, random, run};

/// Whether the lowering picks the tensor-core kernel for F16 on `caps` (mirrors
/// `lower::attention::coop::choose`: f16, one subgroup size of 16, 32 or 64, a 16 x 16
/// f16 x f16 -> f32 configuration).
fn coop_ready(caps: &DeviceCaps) -> bool {
    let Some(sizes) = caps.subgroups.as_ref() else { return false };
    caps.f16
        && sizes.min == sizes.max
        && matches!(sizes.max, 16 | 32 | 64)
        && caps.cooperative_matrix.iter().any(|c| {
            c.ab_type == CooperativeScalarType::F16
                && c.cr_type == CooperativeScalarType::F32
                && (c.m_size, c.n_size, c.k_size) == (16, 16, 16)
        })
}

/// The default backend if it runs the tensor-core kernel, else `None` after saying why.
fn coop_backend() -> Option<WgpuBackend> {
    let be = WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter (install mesa-vulkan-drivers)");
    let caps = be.device_caps();
    if coop_ready(caps) {
        eprintln!("{}: 16x16 f16 cooperative matrices, subgroups {:?}", caps.description, caps.subgroups);
        Some(be)
    } else {
        eprintln!(
            "SKIPPED: {} has no 16x16 f16 -> f32 cooperative matrix (configurations {:?}, f16 {}, subgroups {:?}); \
             the scalar attention kernel runs there instead",
            caps.description, caps.cooperative_matrix, caps.f16, caps.subgroups
        );
        None
    }
}

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

fn graph(c: &Case) -> Graph {
    let d = DType::F16;
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

fn compare(be: &WgpuBackend, name: &str, c: &Case) {
    let d = DType::F16;
    let g = graph(c);
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
    let got = run(be, &g, &ins);
    let want = run(cpu(), &g, &ins);
    // |V| <= 1: the (M) class with M = 1.
    check(&format!("{name} {c:?}"), &got[0], &want[0], Some(approx(d)), None);
}

#[test]
fn every_layout_grouping_and_width() {
    let Some(be) = coop_backend() else { return };
    let be = &be;
    let layouts = [AttnLayout::Bhsd, AttnLayout::Bshd, AttnLayout::BsPacked, AttnLayout::FlatHeads];
    let dims = [
        [1, 2, 2, 70, 45, 16, 16],
        [2, 4, 2, 130, 100, 32, 48],
        [1, 3, 1, 65, 129, 64, 32],
        [1, 2, 1, 33, 200, 144, 16],
        [1, 2, 2, 64, 64, 128, 128],
        [1, 1, 1, 70, 70, 256, 256],
        [1, 2, 1, 9, 300, 16, 256],
    ];
    for layout in layouts {
        for dims in dims {
            compare(be, "coop", &case(dims, layout));
        }
    }
}

#[test]
fn masks_and_alignment() {
    let Some(be) = coop_backend() else { return };
    let be = &be;
    for mask in [MaskKind::Causal, MaskKind::SlidingWindow { window: 1 }, MaskKind::SlidingWindow { window: 70 }] {
        for align in [MaskAlign::End, MaskAlign::Start] {
            for dims in [[1, 2, 1, 150, 130, 64, 64], [1, 2, 2, 40, 190, 32, 16], [1, 1, 1, 70, 20, 16, 16]] {
                let mut c = case(dims, AttnLayout::Bhsd);
                c.mask = mask;
                c.align = align;
                compare(be, "masked", &c);
            }
        }
    }
}

#[test]
fn keep_mask_bias_softcap_and_scale() {
    let Some(be) = coop_backend() else { return };
    let be = &be;
    let mut c = case([2, 4, 2, 80, 77, 32, 48], AttnLayout::Bshd);
    c.keep = Some(vec![2, 1, 80, 77]);
    c.bias = Some((vec![4, 1, 77], DType::F32));
    c.softcap = Some(2.5);
    c.scale = Some(0.7);
    compare(be, "keep+bias", &c);
    c.bias = Some((vec![77], DType::F16));
    c.keep = Some(vec![1, 4, 80, 1]);
    c.mask = MaskKind::Causal;
    compare(be, "keep+bias causal", &c);
    // Rows whose every key is masked out output 0.
    c.keep = Some(vec![1, 4, 80, 1]);
    c.mask = MaskKind::SlidingWindow { window: 3 };
    compare(be, "keep+bias window", &c);
}

#[test]
fn large_logits_rescale_the_output() {
    let Some(be) = coop_backend() else { return };
    let be = &be;
    // Logits spread over ±60: the reference max moves by more than e^8 across key blocks.
    for mask in [MaskKind::None, MaskKind::Causal] {
        let mut c = case([1, 2, 1, 100, 400, 64, 64], AttnLayout::Bhsd);
        c.scale = Some(1.0);
        c.mask = mask;
        compare(be, "large logits", &c);
    }
}

//! The form choice, the direct and implicit-GEMM lowerings' params, grids and errors, without a
//! GPU.

use super::*;
use crate::lower::builder::{Buf, Lowering};
use crate::lower::Grid;
use backend_api::ErrorKind;
use shaders::conv::gemm::ConvGemmParams;
use shaders::conv::ConvParams;
use shaders::linalg::{CoopShape, CoopTile, Tile};
use wgpu::wgt::{CooperativeMatrixProperties, CooperativeScalarType};

fn op(buf: Buf, d: DType, dims: &[usize]) -> Operand {
    Operand::whole(buf, d, dims.to_vec()).unwrap()
}

fn attrs(s: usize, stride: usize, dilation: usize, pads: (usize, usize), groups: u32) -> ConvAttrs {
    ConvAttrs {
        stride: vec![stride; s],
        dilation: vec![dilation; s],
        pads_begin: vec![pads.0; s],
        pads_end: vec![pads.1; s],
        groups,
        has_bias: false,
    }
}

/// The lowering of one Conv (or ConvTranspose with `op_pad`) on a test device.
fn lowered(
    caps: &DeviceCaps,
    a: &ConvAttrs,
    transpose: Option<&[usize]>,
    d: DType,
    [x, w, out]: [&[usize]; 3],
) -> Result<Lowering> {
    let mut b = Lower::new(caps, 1);
    let (x, w, out) = (op(Buf::In(0), d, x), op(Buf::In(1), d, w), op(Buf::Out(0), d, out));
    match transpose {
        None => conv(&mut b, a, &x, &w, None, &out)?,
        Some(p) => {
            let t = ConvTransposeAttrs { conv: a.clone(), output_padding: p.to_vec() };
            conv_transpose(&mut b, &t, &x, &w, None, &out)?
        }
    }
    Ok(b.finish())
}

fn params_of(l: &Lowering) -> ConvParams {
    let k = l.kernels().last().copied().cloned().unwrap();
    *bytemuck::from_bytes::<ConvParams>(&k.params)
}

fn shape(op: ConvOp, n: usize, cin: usize, cout: usize, groups: usize) -> ConvShape {
    ConvShape {
        op,
        dtype: DType::F32,
        n,
        cin,
        cout,
        groups,
        input: [1, 8, 8],
        kernel: [1, 3, 3],
        output: [1, 8, 8],
        stride: [1; 3],
        dilation: [1; 3],
        pads_begin: [0, 1, 1],
        bias: false,
    }
}

#[test]
fn the_form_follows_the_op_and_the_groups() {
    let mut caps = DeviceCaps::for_tests();
    // workgroup memory for the staged depthwise form (wgpu's default limit is 16 KiB)
    caps.limits.max_compute_workgroup_storage_size = 32768;
    assert_eq!(choose_form(&shape(ConvOp::Conv, 8, 256, 256, 256), &caps), ConvForm::DepthwiseTile);
    assert_eq!(choose_form(&shape(ConvOp::Conv, 1, 1, 1, 1), &caps), ConvForm::DepthwiseTile);
    // depthwise with a window past the staged tile (3x3 at stride 3: 96 x 192 inputs), 1-D, 3-D
    // or F64: four outputs per invocation
    let wide = ConvShape { stride: [1, 3, 3], output: [1, 2, 2], ..shape(ConvOp::Conv, 1, 4, 4, 4) };
    assert_eq!(choose_form(&wide, &caps), ConvForm::Depthwise);
    let one = ConvShape { input: [1, 1, 8], kernel: [1, 1, 3], output: [1, 1, 8], ..shape(ConvOp::Conv, 1, 4, 4, 4) };
    assert_eq!(choose_form(&one, &caps), ConvForm::Depthwise);
    let deep = ConvShape { input: [3, 8, 8], output: [3, 8, 8], ..shape(ConvOp::Conv, 1, 4, 4, 4) };
    assert_eq!(choose_form(&deep, &caps), ConvForm::Depthwise);
    let f64 = ConvShape { dtype: DType::F64, ..shape(ConvOp::Conv, 1, 4, 4, 4) };
    assert_eq!(choose_form(&f64, &caps), ConvForm::Depthwise);
    // a device without the staged form's workgroup memory
    let mut small = DeviceCaps::for_tests();
    small.limits.max_compute_workgroup_storage_size = 16384;
    assert_eq!(choose_form(&shape(ConvOp::Conv, 1, 4, 4, 4), &small), ConvForm::Depthwise);
    // a channel multiplier (Cout = 2·Cin) or narrow grouped channels take the general kernel
    assert_eq!(choose_form(&shape(ConvOp::Conv, 1, 4, 8, 4), &caps), ConvForm::Direct);
    assert_eq!(choose_form(&shape(ConvOp::Transpose, 1, 4, 4, 4), &caps), ConvForm::TransposeGather);
    assert_eq!(choose_form(&shape(ConvOp::Transpose, 1, 64, 64, 1), &caps), ConvForm::TransposeGather);
}

const SMALL: ConvForm = ConvForm::ImplicitGemm(GemmKernel::Tiled(Tile::Small));

#[test]
fn wide_channels_take_the_implicit_gemm_from_the_thresholds() {
    let caps = DeviceCaps::for_tests();
    let form = |s: &ConvShape| choose_form(s, &caps);
    assert_eq!(form(&shape(ConvOp::Conv, 1, 64, 64, 1)), SMALL);
    // Cout/G = 16 and Cgi·taps = 2·9 = 18: both at or over the thresholds
    assert_eq!(form(&shape(ConvOp::Conv, 1, 4, 32, 2)), SMALL);
    // Cout/G = 15, or Cgi·taps = 1·9 < 16 (a 1x1 kernel needs 16 input channels)
    assert_eq!(form(&shape(ConvOp::Conv, 1, 4, 30, 2)), ConvForm::Direct);
    assert_eq!(form(&shape(ConvOp::Conv, 1, 1, 64, 1)), ConvForm::Direct);
    let one = |cin| ConvShape { kernel: [1; 3], pads_begin: [0; 3], ..shape(ConvOp::Conv, 1, cin, 32, 1) };
    assert_eq!(form(&one(15)), ConvForm::Direct);
    assert_eq!(form(&one(16)), SMALL);
    // F64 stays on the direct kernel
    assert_eq!(form(&ConvShape { dtype: DType::F64, ..shape(ConvOp::Conv, 1, 64, 64, 1) }), ConvForm::Direct);
    // many 128 x 128 tiles: the large tile
    let big = ConvShape { input: [1, 64, 64], output: [1, 64, 64], ..shape(ConvOp::Conv, 16, 128, 256, 1) };
    assert_eq!(form(&big), ConvForm::ImplicitGemm(GemmKernel::Tiled(Tile::Large)));
    // without workgroup memory for a tile, the direct kernel
    let mut tiny = DeviceCaps::for_tests();
    tiny.limits.max_compute_workgroup_storage_size = 1024;
    assert_eq!(choose_form(&shape(ConvOp::Conv, 1, 64, 64, 1), &tiny), ConvForm::Direct);
}

/// A device with f16 x f16 -> f32 cooperative matrices of 16 and subgroups of 32.
fn coop_caps() -> DeviceCaps {
    let mut caps = DeviceCaps::for_tests();
    caps.subgroups = Some(crate::device::SubgroupSizes { min: 32, max: 32 });
    caps.f16 = true;
    caps.limits.max_compute_workgroup_storage_size = 49152;
    caps.cooperative_matrix = vec![CooperativeMatrixProperties {
        m_size: 16,
        n_size: 16,
        k_size: 16,
        ab_type: CooperativeScalarType::F16,
        cr_type: CooperativeScalarType::F32,
        saturating_accumulation: false,
    }];
    caps
}

#[test]
fn f16_takes_tensor_cores_and_bf16_only_under_reduced_precision() {
    let mut caps = coop_caps();
    // no padding taps: 3x3 over 8x8 into 6x6
    let s = |d| ConvShape { dtype: d, output: [1, 6, 6], pads_begin: [0; 3], ..shape(ConvOp::Conv, 1, 64, 64, 1) };
    let coop = ConvForm::ImplicitGemm(GemmKernel::Coop(CoopTile { frag: 16, subgroup: 32, shape: CoopShape::Small }));
    assert_eq!(choose_form(&s(DType::F16), &caps), coop);
    assert_eq!(choose_form(&s(DType::BF16), &caps), SMALL);
    assert_eq!(choose_form(&s(DType::F32), &caps), SMALL);
    caps.matmul_precision = crate::MatmulPrecision::F16;
    assert_eq!(choose_form(&s(DType::BF16), &caps), coop);
    // F32 keeps the exact scalar kernel under the option too
    assert_eq!(choose_form(&s(DType::F32), &caps), SMALL);
    // padding taps: tensor cores too (gated on a finite weight for large products)
    let padded = ConvShape { dtype: DType::F16, ..shape(ConvOp::Conv, 1, 64, 64, 1) };
    assert_eq!(choose_form(&padded, &caps), coop);
    // and the module renders for both dtypes
    for d in [DType::F16, DType::BF16] {
        let l = lowered(&caps, &attrs(2, 1, 1, (0, 0), 1), None, d, [&[1, 64, 8, 8], &[64, 64, 3, 3], &[1, 64, 6, 6]])
            .unwrap();
        assert!(l.kernels().iter().any(|k| k.source.contains("coopMultiplyAdd") && k.source.contains("ConvGeom")));
    }
}

fn gemm_params_of(l: &Lowering) -> ConvGemmParams {
    let k = l.kernels().last().copied().cloned().unwrap();
    *bytemuck::from_bytes::<ConvGemmParams>(&k.params)
}

#[test]
fn the_implicit_gemm_batches_items_and_groups_and_pads_the_geometry() {
    let caps = DeviceCaps::for_tests();
    // 1-D, 2 items, 2 groups of 8 input and 20 output channels, kernel 3, stride 2, dilation 2
    let mut a = attrs(1, 2, 2, (3, 1), 2);
    a.has_bias = false;
    let l = lowered(&caps, &a, None, DType::F32, [&[2, 16, 30], &[40, 8, 3], &[2, 40, 15]]).unwrap();
    let k = l.kernels().last().copied().unwrap();
    assert!(k.source.contains("struct ConvGemmParams") && k.source.contains("fn index_b"));
    let p = gemm_params_of(&l);
    let g = p.gemm;
    assert_eq!((g.m, g.n, g.k, g.a_rs, g.a_cs, g.nbatch, g.batch_rank), (20, 15, 24, 24, 1, 4, 2));
    assert_eq!(
        (g.bdims[0], g.a_bs[0], g.b_bs[0], g.bias_bs[0]),
        ([2, 2, 0, 0], [0, 480, 0, 0], [480, 240, 0, 0], [0, 20, 0, 0])
    );
    assert_eq!((g.bias_rs, g.bias_cs, g.a_kfast, g.b_nfast, g.nsplit, g.kc), (1, 0, 1, 1, 1, 24));
    let q = p.geom;
    assert_eq!((q.in_sp, q.out_sp, q.taps), ([1, 1, 30, 30], [15, 1, 15, 15], [3, 1, 3, 3]));
    assert_eq!((q.stride, q.dilation, q.pads), ([1, 1, 2, 1], [1, 1, 2, 1], [0, 0, 3, 0]));
    // one 64 x 64 tile per (item, group): a grid of 1 x 1 x 4 workgroups
    assert!(matches!(k.grid, Grid::Workgroups([1, 1, 4])));
}

#[test]
fn implicit_gemm_grids_split_at_the_workgroup_limit() {
    let mut caps = DeviceCaps::for_tests();
    caps.limits.max_compute_workgroups_per_dimension = 3;
    // 5 items x 1 group = 5 batches; 130 columns = 3 column tiles; 80 rows = 2 row tiles
    let a = attrs(1, 1, 1, (0, 0), 1);
    let l = lowered(&caps, &a, None, DType::F32, [&[5, 16, 130], &[80, 16, 1], &[5, 80, 130]]).unwrap();
    let grids: Vec<_> = l.kernels().iter().map(|k| (k.grid, gemm_params_of_kernel(k).gemm.batch0)).collect();
    assert_eq!(grids.len(), 2);
    assert!(matches!(grids[0], (Grid::Workgroups([3, 2, 3]), 0)), "{grids:?}");
    assert!(matches!(grids[1], (Grid::Workgroups([3, 2, 2]), 3)), "{grids:?}");
}

fn gemm_params_of_kernel(k: &crate::lower::builder::Kernel) -> ConvGemmParams {
    *bytemuck::from_bytes::<ConvGemmParams>(&k.params)
}

#[test]
fn one_dimensional_convs_are_padded_to_three_dims_and_idle_strides_become_one() {
    let caps = DeviceCaps::for_tests();
    // 1-D, stride 5 over a single output position (kernel 4 over 4 inputs)
    let l = lowered(&caps, &attrs(1, 5, 1, (0, 0), 1), None, DType::F32, [&[2, 3, 4], &[5, 3, 4], &[2, 5, 1]]).unwrap();
    let p = params_of(&l);
    assert_eq!((p.out_sp, p.in_sp, p.k), ([1, 1, 1, 1], [1, 1, 4, 1], [1, 1, 4, 1]));
    assert_eq!((p.stride, p.total, p.cgi, p.k_total), ([1; 4], 10, 3, 4));
    // kernel 1 with dilation 7: the dilation never moves
    let l = lowered(&caps, &attrs(1, 1, 7, (0, 0), 1), None, DType::F32, [&[2, 3, 4], &[5, 3, 1], &[2, 5, 4]]).unwrap();
    assert_eq!(params_of(&l).dilation, [1; 4]);
}

#[test]
fn depthwise_invocations_cover_four_outputs_each() {
    let caps = DeviceCaps::for_tests();
    let l = lowered(&caps, &attrs(1, 1, 1, (1, 1), 6), None, DType::F32, [&[2, 6, 9], &[6, 1, 3], &[2, 6, 9]]).unwrap();
    let p = params_of(&l);
    // rows 2·6, ⌈9/4⌉ = 3 quads per row
    assert_eq!((p.quads, p.total), (3, 36));
    assert!(matches!(l.kernels()[0].grid, Grid::Threads(36)));
}

#[test]
fn staged_depthwise_takes_a_workgroup_per_tile() {
    let mut caps = DeviceCaps::for_tests();
    caps.limits.max_compute_workgroup_storage_size = 32768;
    // 2 items x 6 channels, 40 x 70 outputs: tiles of 32 x 64, ⌈40/32⌉ = 2 down, 2 across
    let l =
        lowered(&caps, &attrs(2, 1, 1, (1, 1), 6), None, DType::F32, [&[2, 6, 40, 70], &[6, 1, 3, 3], &[2, 6, 40, 70]])
            .unwrap();
    let k = l.kernels()[0];
    assert!(k.source.contains("var<workgroup> tile"));
    let p = params_of(&l);
    assert_eq!((p.quads, p.total), (2, 2 * 6 * 2 * 2));
    assert!(matches!(k.grid, Grid::Workgroups([48, 1, 1])));
}

#[test]
fn packed_outputs_are_zeroed_first_and_empty_outputs_record_nothing() {
    let caps = DeviceCaps::for_tests();
    let a = attrs(1, 1, 1, (0, 0), 1);
    let l = lowered(&caps, &a, None, DType::F16, [&[1, 2, 4], &[3, 2, 2], &[1, 3, 3]]).unwrap();
    assert_eq!(l.kernels().len(), 2);
    let l = lowered(&caps, &a, None, DType::F32, [&[0, 2, 4], &[3, 2, 2], &[0, 3, 3]]).unwrap();
    assert!(l.kernels().is_empty());
    // Cin = 0: the kernel runs (bias or zeros) and binds the output for the empty x and w
    let l = lowered(&caps, &a, None, DType::F64, [&[1, 0, 4], &[3, 0, 2], &[1, 3, 3]]).unwrap();
    let k = l.kernels()[0];
    assert_eq!(k.bindings[0].0, k.bindings[2].0);
    assert!(matches!(k.grid, Grid::Threads(9)));
}

#[test]
fn the_transpose_gather_keeps_its_stride_unless_one_input_position() {
    let caps = DeviceCaps::for_tests();
    let a = attrs(2, 2, 1, (1, 0), 2);
    let l = lowered(&caps, &a, Some(&[1, 0]), DType::BF16, [&[1, 4, 3, 1], &[4, 3, 3, 3], &[1, 6, 7, 2]]).unwrap();
    let p = params_of(&l);
    // out_h = (3 − 1)·2 − 1 + 2 + 1 + 1 = 7; out_w = 0 − 1 + 2 + 1 = 2
    assert_eq!((p.stride, p.cgi, p.cgo, p.total), ([1, 2, 1, 1], 2, 3, 84));
}

#[test]
fn bad_operands_and_oversized_tensors_are_errors() {
    let mut caps = DeviceCaps::for_tests();
    let a = attrs(1, 1, 1, (0, 0), 1);
    let kind = |r: Result<Lowering>| r.unwrap_err().kind();
    // wrong output shape, wrong w channels
    assert_eq!(kind(lowered(&caps, &a, None, DType::F32, [&[1, 2, 4], &[3, 2, 2], &[1, 3, 4]])), ErrorKind::Shape);
    assert_eq!(kind(lowered(&caps, &a, None, DType::F32, [&[1, 2, 4], &[3, 1, 2], &[1, 3, 3]])), ErrorKind::Shape);
    caps.limits.max_storage_buffer_binding_size = 64;
    let e = lowered(&caps, &a, None, DType::F32, [&[1, 2, 40], &[3, 2, 2], &[1, 3, 39]]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DeviceLimit);
    assert!(e.message().contains("Conv x") && e.message().contains("binding"), "{e}");
    // the implicit GEMM checks the same limits
    caps.limits.max_storage_buffer_binding_size = 2048;
    let e = lowered(&caps, &a, None, DType::F32, [&[1, 16, 20], &[32, 16, 1], &[1, 32, 20]]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DeviceLimit);
    assert!(e.message().contains("Conv out") && e.message().contains("binding"), "{e}");
}

#[test]
fn padding_taps_take_the_masked_kernel_or_the_gated_pair() {
    use super::gemm::{plan, Plan, GATED_MIN_MACS};
    use crate::lower::builder::Buf;
    let caps = coop_caps();
    let coop = GemmKernel::Coop(CoopTile { frag: 16, subgroup: 32, shape: CoopShape::Small });
    // no padding taps: the kernel alone
    let valid =
        ConvShape { dtype: DType::F16, output: [1, 6, 6], pads_begin: [0; 3], ..shape(ConvOp::Conv, 1, 64, 64, 1) };
    assert_eq!(plan(coop, &valid, &caps).unwrap(), Plan::Plain(coop));
    // padding taps on a small product: the masked scalar tile
    let small = ConvShape { dtype: DType::F16, ..shape(ConvOp::Conv, 1, 64, 64, 1) };
    assert_eq!(plan(coop, &small, &caps).unwrap(), Plan::Masked(Tile::Small));
    // 8 items, 64 -> 64 channels, 3x3 over 32x32: 8·64·64·9·1024 = 2^28.2 products
    let big =
        ConvShape { dtype: DType::F16, input: [1, 32, 32], output: [1, 32, 32], ..shape(ConvOp::Conv, 8, 64, 64, 1) };
    const { assert!(8 * 64 * 64 * 9 * 1024 >= GATED_MIN_MACS) };
    assert_eq!(plan(coop, &big, &caps).unwrap(), Plan::Gated { fast: coop, masked: Tile::Small });
    // the gated lowering: check w, gate both kernels, the fast one, the masked one
    let l = lowered(
        &caps,
        &attrs(2, 1, 1, (1, 1), 1),
        None,
        DType::F16,
        [&[8, 64, 32, 32], &[64, 64, 3, 3], &[8, 64, 32, 32]],
    )
    .unwrap();
    let ks = l.kernels();
    assert_eq!(ks.len(), 4, "{:?}", ks.iter().map(|k| k.grid).collect::<Vec<_>>());
    // 64·64·9 f16 = 18432 words: 72 workgroups, one slot each
    assert!(ks[0].source.contains("ConvCheckParams") && ks[0].bindings[1].0.buf == Buf::Temp(0));
    assert!(matches!(ks[0].grid, Grid::Workgroups([72, 1, 1])) && l.temps == vec![72 * 4]);
    assert!(ks[1].source.contains("ControlGateParams") && ks[1].bindings[0].0.buf == Buf::Temp(0));
    // the OR of the 72 verdicts; the fast kernel when it fails (negated), the masked one when it holds
    let gate = *bytemuck::from_bytes::<shaders::control::ControlGateParams>(&ks[1].params);
    assert_eq!((gate.cond_len, gate.count, gate.grids[0][3], gate.grids[1][3]), (72, 2, 1, 0));
    assert!(ks[2].source.contains("coopMultiplyAdd") && matches!(ks[2].grid, Grid::Indirect(_)));
    assert!(ks[3].source.contains("var<workgroup> sm:") && matches!(ks[3].grid, Grid::Indirect(_)));
    // F32: the unmasked scalar tile behind the gate
    let f32big = ConvShape { dtype: DType::F32, ..big };
    let t = GemmKernel::Tiled(Tile::Small);
    assert_eq!(plan(t, &f32big, &caps).unwrap(), Plan::Gated { fast: t, masked: Tile::Small });
}

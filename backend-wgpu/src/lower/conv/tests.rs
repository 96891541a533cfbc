//! The form choice and the direct lowering's params, grids and errors, without a GPU.

use super::*;
use crate::lower::builder::{Buf, Lowering};
use crate::lower::Grid;
use backend_api::ErrorKind;
use shaders::conv::ConvParams;

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
    let caps = DeviceCaps::for_tests();
    assert_eq!(choose_form(&shape(ConvOp::Conv, 8, 256, 256, 256), &caps), ConvForm::Depthwise);
    assert_eq!(choose_form(&shape(ConvOp::Conv, 1, 1, 1, 1), &caps), ConvForm::Depthwise);
    // a channel multiplier (Cout = 2·Cin) or grouped channels take the general kernel
    assert_eq!(choose_form(&shape(ConvOp::Conv, 1, 4, 8, 4), &caps), ConvForm::Direct);
    assert_eq!(choose_form(&shape(ConvOp::Conv, 1, 64, 64, 1), &caps), ConvForm::Direct);
    assert_eq!(choose_form(&shape(ConvOp::Transpose, 1, 4, 4, 4), &caps), ConvForm::TransposeGather);
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
    let l = lowered(&caps, &attrs(2, 1, 1, (1, 1), 6), None, DType::F32, [&[2, 6, 5, 9], &[6, 1, 3, 3], &[2, 6, 5, 9]])
        .unwrap();
    let p = params_of(&l);
    // rows 2·6·5, ⌈9/4⌉ = 3 quads per row
    assert_eq!((p.quads, p.total), (3, 180));
    assert!(l.kernels()[0].source.contains("p.quads"));
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
}

//! Convolution, pooling, unfolding and nearest resize (§2.9): N-C-spatial layout, 1–3 spatial dims.

use super::util::{kernel_extent, mul, out, rank_in, shape_is, st};
use super::{arity, dtype_in};
use crate::op::{ConvAttrs, ConvTransposeAttrs, Im2ColAttrs, PoolAttrs, PoolKind, ResizeNearestAttrs};
use crate::{bail, DTypeSet, Dim, Result, TensorType};

/// Checks that every named list has `s` entries (and, for `at_least_one`, entries ≥ 1).
fn lists(op: &str, s: usize, ls: &[(&str, &[usize], bool)]) -> Result<()> {
    for (name, l, at_least_one) in ls {
        if l.len() != s {
            bail!(Attribute, "{op} {name} {l:?} must have {s} entries (one per spatial dim)");
        }
        if *at_least_one && l.contains(&0) {
            bail!(Attribute, "{op} {name} {l:?} entries must be >= 1");
        }
    }
    Ok(())
}

/// `x` as `[N, C, *in]` with 1–3 spatial dims; returns the static dims from axis 1 on (`C, *in`).
fn nc_spatial(x: &TensorType, op: &str) -> Result<Vec<usize>> {
    rank_in(x, 3, 5, &format!("{op} x ([N, C, *spatial] with 1 to 3 spatial dims)"))?;
    let tail = crate::Shape(x.shape.0[1..].to_vec());
    tail.static_dims(&format!("{op} x {x} (channel and spatial dims)"))
}

/// `⌊(in + pb + pe − ke) / stride⌋ + 1`, or a `Shape` error when the padded input is shorter than
/// the effective kernel extent `ke`.
fn window_out(d: usize, in_d: usize, ke: usize, stride: usize, pb: usize, pe: usize, op: &str) -> Result<usize> {
    let Some(padded) = in_d.checked_add(pb).and_then(|p| p.checked_add(pe)) else {
        bail!(Attribute, "{op} spatial dim {d}: padded size {in_d}+{pb}+{pe} overflows the index range");
    };
    if padded < ke {
        bail!(
            Shape,
            "{op} spatial dim {d}: padded size {in_d}+{pb}+{pe} = {padded} is smaller than the kernel extent {ke}"
        );
    }
    Ok((padded - ke) / stride + 1)
}

fn conv_common(a: &ConvAttrs, ins: &[TensorType], op: &str) -> Result<(Vec<usize>, Vec<usize>, usize)> {
    arity(ins, 2 + usize::from(a.has_bias), &format!("{op} (x, w, [bias])"))?;
    let (x, w) = (&ins[0], &ins[1]);
    dtype_in(x, DTypeSet::FLOAT, &format!("{op} input x"))?;
    let xd = nc_spatial(x, op)?;
    let s = xd.len() - 1;
    lists(op, s, &[("stride", &a.stride, true), ("dilation", &a.dilation, true)])?;
    lists(op, s, &[("pads_begin", &a.pads_begin, false), ("pads_end", &a.pads_end, false)])?;
    if a.groups == 0 {
        bail!(Attribute, "{op} groups must be >= 1");
    }
    if w.dtype != x.dtype {
        bail!(DType, "{op} w {w} must have the dtype of x {x}");
    }
    if w.rank() != x.rank() {
        bail!(Shape, "{op} w {w} must have the rank of x {x}");
    }
    let wd = w.shape.static_dims(&format!("{op} w"))?;
    if let Some(d) = wd[2..].iter().position(|&k| k == 0) {
        bail!(Shape, "{op} w {w}: kernel size of spatial dim {d} must be >= 1");
    }
    Ok((xd, wd, a.groups as usize))
}

fn bias_ok(ins: &[TensorType], has_bias: bool, cout: usize, op: &str) -> Result<()> {
    if has_bias {
        let b = &ins[2];
        if b.dtype != ins[0].dtype {
            bail!(DType, "{op} bias {b} must have the dtype of x {}", ins[0]);
        }
        shape_is(b, &[st(cout)], &format!("{op} bias ([Cout])"))?;
    }
    Ok(())
}

pub(crate) fn conv(a: &ConvAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let (xd, wd, g) = conv_common(a, ins, "Conv")?;
    let (cin, cout) = (xd[0], wd[0]);
    if mul(wd[1], g, "Conv w.shape[1]·groups")? != cin {
        bail!(Shape, "Conv w {}: w.shape[1]·groups = {}·{g} must equal Cin = {cin} of x {}", ins[1], wd[1], ins[0]);
    }
    if cout % g != 0 {
        bail!(Shape, "Conv Cout = {cout} of w {} is not a multiple of groups {g}", ins[1]);
    }
    bias_ok(ins, a.has_bias, cout, "Conv")?;
    let mut dims = vec![ins[0].shape.0[0].clone(), st(cout)];
    for d in 0..xd.len() - 1 {
        let ke = kernel_extent(a.dilation[d], wd[2 + d], "Conv")?;
        dims.push(st(window_out(d, xd[1 + d], ke, a.stride[d], a.pads_begin[d], a.pads_end[d], "Conv")?));
    }
    Ok(vec![out(ins[0].dtype, dims)?])
}

pub(crate) fn conv_transpose(a: &ConvTransposeAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let c = &a.conv;
    let (xd, wd, g) = conv_common(c, ins, "ConvTranspose")?;
    let s = xd.len() - 1;
    lists("ConvTranspose", s, &[("output_padding", &a.output_padding, false)])?;
    for d in 0..s {
        if a.output_padding[d] >= c.stride[d].max(c.dilation[d]) {
            bail!(
                Attribute,
                "ConvTranspose output_padding {} of spatial dim {d} must be < max(stride {}, dilation {})",
                a.output_padding[d],
                c.stride[d],
                c.dilation[d]
            );
        }
    }
    let cin = xd[0];
    if wd[0] != cin {
        bail!(Shape, "ConvTranspose w {} must have w.shape[0] = Cin = {cin} of x {}", ins[1], ins[0]);
    }
    if cin % g != 0 {
        bail!(Shape, "ConvTranspose Cin = {cin} of x {} is not a multiple of groups {g}", ins[0]);
    }
    let cout = mul(wd[1], g, "ConvTranspose Cout")?;
    bias_ok(ins, c.has_bias, cout, "ConvTranspose")?;
    let mut dims = vec![ins[0].shape.0[0].clone(), st(cout)];
    for d in 0..s {
        let o = transposed_size(
            xd[1 + d],
            wd[2 + d],
            c.stride[d],
            c.dilation[d],
            (c.pads_begin[d], c.pads_end[d]),
            a.output_padding[d],
        );
        match o {
            Some(v) if v < 0 => {
                bail!(Shape, "ConvTranspose spatial dim {d}: the output size {v} is negative for x {}", ins[0])
            }
            Some(v) => match usize::try_from(v) {
                Ok(v) => dims.push(st(v)),
                Err(_) => {
                    bail!(Attribute, "ConvTranspose spatial dim {d}: the output size {v} overflows the index range")
                }
            },
            None => bail!(Attribute, "ConvTranspose spatial dim {d}: the output size overflows the index range"),
        }
    }
    Ok(vec![out(ins[0].dtype, dims)?])
}

/// `(in − 1)·stride − pb − pe + dilation·(k − 1) + output_padding + 1`, `None` on overflow.
fn transposed_size(
    in_d: usize,
    k: usize,
    stride: usize,
    dilation: usize,
    (pb, pe): (usize, usize),
    op: usize,
) -> Option<i128> {
    let i = |v: usize| v as i128;
    (i(in_d) - 1)
        .checked_mul(i(stride))?
        .checked_add(i(dilation).checked_mul(i(k) - 1)?)?
        .checked_sub(i(pb))?
        .checked_sub(i(pe))?
        .checked_add(i(op))?
        .checked_add(1)
}

pub(crate) fn pool(a: &PoolAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Pool")?;
    let x = &ins[0];
    match a.kind {
        PoolKind::Max => dtype_in(x, DTypeSet::NUMERIC, "Pool.Max input x")?,
        PoolKind::Avg => dtype_in(x, DTypeSet::FLOAT, "Pool.Avg input x")?,
    }
    let xd = nc_spatial(x, "Pool")?;
    let s = xd.len() - 1;
    lists("Pool", s, &[("kernel", &a.kernel, true), ("stride", &a.stride, true), ("dilation", &a.dilation, true)])?;
    lists("Pool", s, &[("pads_begin", &a.pads_begin, false), ("pads_end", &a.pads_end, false)])?;
    let mut dims = vec![x.shape.0[0].clone(), x.shape.0[1].clone()];
    for d in 0..s {
        let ke = kernel_extent(a.dilation[d], a.kernel[d], "Pool")?;
        let (pb, pe, stride, in_d) = (a.pads_begin[d], a.pads_end[d], a.stride[d], xd[1 + d]);
        if pb >= ke || pe >= ke {
            bail!(Attribute, "Pool pads ({pb}, {pe}) of spatial dim {d} must be < the kernel extent {ke}");
        }
        let mut o = window_out(d, in_d, ke, stride, pb, pe, "Pool")?;
        if a.ceil_mode {
            o = (in_d + pb + pe - ke).div_ceil(stride) + 1;
            // The last window must start inside the input or the leading padding.
            match (o - 1).checked_mul(stride) {
                Some(start) if start < in_d + pb => {}
                _ => o -= 1,
            }
        }
        dims.push(st(o));
    }
    Ok(vec![out(x.dtype, dims)?])
}

pub(crate) fn im2col(a: &Im2ColAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Im2Col")?;
    let x = &ins[0];
    let xd = nc_spatial(x, "Im2Col")?;
    let s = xd.len() - 1;
    lists("Im2Col", s, &[("kernel", &a.kernel, true), ("stride", &a.stride, true), ("dilation", &a.dilation, true)])?;
    lists("Im2Col", s, &[("pads_begin", &a.pads_begin, false), ("pads_end", &a.pads_end, false)])?;
    let mut l = 1usize;
    for d in 0..s {
        let ke = kernel_extent(a.dilation[d], a.kernel[d], "Im2Col")?;
        let o = window_out(d, xd[1 + d], ke, a.stride[d], a.pads_begin[d], a.pads_end[d], "Im2Col")?;
        l = mul(l, o, "Im2Col output positions")?;
    }
    let rows = a.kernel.iter().try_fold(xd[0], |r, &k| mul(r, k, "Im2Col rows C·Πk"))?;
    Ok(vec![out(x.dtype, vec![x.shape.0[0].clone(), st(rows), st(l)])?])
}

/// The type of `ResizeNearest(scales)(x)` (also used by `TransformRegion`).
pub(crate) fn resized_type(scales: &[u32], x: &TensorType, op: &str) -> Result<TensorType> {
    rank_in(x, 3, 5, &format!("{op} x ([N, C, *spatial] with 1 to 3 spatial dims)"))?;
    let s = x.rank() - 2;
    if scales.len() != s {
        bail!(Attribute, "{op} scales {scales:?} must have {s} entries for x {x}");
    }
    if scales.contains(&0) {
        bail!(Attribute, "{op} scales {scales:?} entries must be >= 1");
    }
    let mut dims: Vec<Dim> = x.shape.0[..2].to_vec();
    for (d, &f) in scales.iter().enumerate() {
        let dim = &x.shape.0[2 + d];
        dims.push(match (dim, f) {
            (_, 1) => dim.clone(),
            (Dim::Static(n), f) => st(mul(*n, f as usize, op)?),
            (Dim::Sym(_), _) => bail!(Shape, "{op} x {x}: spatial dim {d} must be static to scale it by {f}"),
        });
    }
    out(x.dtype, dims)
}

pub(crate) fn resize_nearest(a: &ResizeNearestAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "ResizeNearest")?;
    Ok(vec![resized_type(&a.scales, &ins[0], "ResizeNearest")?])
}

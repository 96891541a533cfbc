//! Unary, Binary, Compare, Where, Fma, Cast (§2.1–2.2): one broadcasting map kernel
//! (`elementwise.wgsl`) with one expression per (op, dtype) from `shaders::elementwise`.
//!
//! Inputs broadcast to the output by their dims (numpy rules, read from the operands). Axes that
//! are mergeable for every operand are collapsed first; when one axis is left, every operand is
//! contiguous or a scalar and the kernel uses the flat index form (no per-axis division); for
//! 4-byte dtypes that form is four-wide (`vec4` loads and stores, `shaders::elementwise::module_vec4`)
//! with the last `n mod 4` elements done by the scalar flat kernel from `base`.

use super::builder::{u32_of, vec4s, Kernel, Lower, Operand};
use super::{collapse, movement, Grid};
use crate::pipelines::BindKind;
use backend_api::op::{BinaryOp, CompareOp, UnaryOp};
use backend_api::shape::broadcast_strides;
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::elementwise::{module_indexed, module_single, module_vec4, ElemKind, ElementwiseParams, Indexing};
use shaders::params::Params;

/// `op(x)` into `out` (same dtype; `x` broadcast to `out`'s dims).
pub fn unary(b: &mut Lower<'_>, op: UnaryOp, x: &Operand, out: &Operand) -> Result<()> {
    map(b, ElemKind::Unary(op), &[x], out)
}

/// `op(x, y)` into `out`, `x` and `y` broadcast to `out`'s dims.
pub fn binary(b: &mut Lower<'_>, op: BinaryOp, x: &Operand, y: &Operand, out: &Operand) -> Result<()> {
    map(b, ElemKind::Binary(op), &[x, y], out)
}

/// `x op y` into the Bool `out`, `x` and `y` broadcast to `out`'s dims.
pub fn compare(b: &mut Lower<'_>, op: CompareOp, x: &Operand, y: &Operand, out: &Operand) -> Result<()> {
    map(b, ElemKind::Compare(op), &[x, y], out)
}

/// `cond ? x : y` into `out` (`cond` Bool), all three broadcast to `out`'s dims.
pub fn where_(b: &mut Lower<'_>, cond: &Operand, x: &Operand, y: &Operand, out: &Operand) -> Result<()> {
    map(b, ElemKind::Where, &[cond, x, y], out)
}

/// `x·y + z` with one rounding into `out` (float dtypes), all three broadcast to `out`'s dims.
pub fn fma(b: &mut Lower<'_>, x: &Operand, y: &Operand, z: &Operand, out: &Operand) -> Result<()> {
    map(b, ElemKind::Fma, &[x, y, z], out)
}

/// `x` converted to `to` (`out`'s dtype) by the Cast rules. A cast to `x`'s own dtype is the
/// identity on the bits (NaN payloads included): an alias of `x`, or a raw copy where `out`
/// cannot alias it.
pub fn cast(b: &mut Lower<'_>, to: DType, x: &Operand, out: &Operand) -> Result<()> {
    ensure!(out.dtype == to, DType, "Cast to {to} cannot write a {} output", out.dtype);
    if x.dtype == to && x.dims == out.dims {
        return movement::copy(b, x, out);
    }
    map(b, ElemKind::Cast, &[x], out)
}

/// Whether `from` broadcasts to `to` (trailing axes equal or 1, no more axes than `to`).
fn broadcasts(from: &[usize], to: &[usize]) -> bool {
    from.len() <= to.len() && from.iter().rev().zip(to.iter().rev()).all(|(&f, &t)| f == t || f == 1)
}

/// (Zero +) one map kernel of `kind` reading `ins` into `out`.
fn map(b: &mut Lower<'_>, kind: ElemKind, ins: &[&Operand], out: &Operand) -> Result<()> {
    for (k, x) in ins.iter().enumerate() {
        ensure!(
            broadcasts(&x.dims, &out.dims),
            Shape,
            "{kind:?} input {k} {:?} does not broadcast to {:?}",
            x.dims,
            out.dims
        );
    }
    let strides: Vec<Vec<usize>> = ins.iter().map(|x| broadcast_strides(&x.dims, &out.dims)).collect();
    let (dims, strides) = collapse(&out.dims, &strides);
    let in_dtypes: Vec<DType> = ins.iter().map(|x| x.dtype).collect();
    let n = out.numel();
    if n == 0 {
        // Still refuse a combination the spec does not define.
        shader(kind, &in_dtypes, out.dtype, Indexing::Flat)?;
        return Ok(());
    }
    let mut bindings: Vec<_> = ins.iter().map(|x| (x.window, BindKind::Read)).collect();
    bindings.push((out.window, BindKind::Write));
    let mut p = params(n, &dims, &strides)?;
    // One collapsed axis means every operand is contiguous (stride 1) or a scalar (stride 0).
    if dims.len() > 1 {
        let source = shader(kind, &in_dtypes, out.dtype, Indexing::Strided)?;
        b.zero_if_packed(out)?;
        b.push(Kernel { source, bindings, params: p.to_bytes(), grid: Grid::Threads(u64::from(p.n)), flops: None });
        return Ok(());
    }
    let scalar: Vec<bool> = strides.iter().map(|s| s.first().is_none_or(|&st| st == 0)).collect();
    if let Some(source) = vec4_shader(b, kind, &in_dtypes, out.dtype, &scalar, n)? {
        // The kernel may be trusted: its argument needs every window to hold its operand.
        for o in ins.iter().copied().chain([out]) {
            let need = super::builder::tensor_bytes(o.dtype, &o.dims)?;
            ensure!(
                o.window.bytes >= need,
                Shape,
                "{kind:?} operand {:?} has a window of {} bytes",
                o.dims,
                o.window.bytes
            );
        }
        b.push(Kernel {
            source,
            bindings: bindings.clone(),
            params: p.to_bytes(),
            // UNROLL vectors per invocation
            grid: Grid::Threads(u64::from(p.n / 4).div_ceil(u64::from(shaders::elementwise::UNROLL))),
            flops: None,
        });
        p.base = p.n - p.n % 4;
    }
    if p.base < p.n && n == 1 && shaders::is_packed(out.dtype) {
        // One packed element: one invocation stores its whole word, with no zeroing first.
        let Some(src) = module_single(kind, &in_dtypes, out.dtype) else {
            bail!(Unsupported, "no GPU kernel for {kind:?} on {in_dtypes:?} -> {}", out.dtype);
        };
        let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("elementwise shader: {e}")))?;
        b.push(Kernel { source, bindings, params: p.to_bytes(), grid: Grid::Threads(1), flops: None });
        return Ok(());
    }
    if p.base < p.n {
        let source = shader(kind, &in_dtypes, out.dtype, Indexing::Flat)?;
        b.zero_if_packed(out)?;
        b.push(Kernel {
            source,
            bindings,
            params: p.to_bytes(),
            grid: Grid::Threads(u64::from(p.n - p.base)),
            flops: None,
        });
    }
    Ok(())
}

/// The scalar map module of `kind` in the `indexing` form, or the error naming the combination.
fn shader(kind: ElemKind, ins: &[DType], out: DType, indexing: Indexing) -> Result<String> {
    let Some(src) = module_indexed(kind, ins, out, indexing) else {
        bail!(Unsupported, "no GPU kernel for {kind:?} on {ins:?} -> {out}");
    };
    src.map_err(|e| Error::new(ErrorKind::Device, format!("elementwise shader: {e}")))
}

/// The four-wide module (`shaders::elementwise::module_vec4`) when it applies: at least 4
/// elements, 4-byte dtypes, and windows 16-byte aligned (every bound window starts at a multiple
/// of the device's storage offset alignment, so an alignment of 16 or more guarantees it).
fn vec4_shader(
    b: &Lower<'_>,
    kind: ElemKind,
    ins: &[DType],
    out: DType,
    scalar: &[bool],
    n: usize,
) -> Result<Option<String>> {
    if n < 4 || b.caps().limits.min_storage_buffer_offset_alignment < 16 {
        return Ok(None);
    }
    match module_vec4(kind, ins, out, scalar) {
        None => Ok(None),
        Some(src) => src.map(Some).map_err(|e| Error::new(ErrorKind::Device, format!("elementwise shader: {e}"))),
    }
}

/// The uniform of a map over `n` elements with collapsed `dims` and per-input `strides`. `pad0`
/// keeps its default 0: the shaders read it as an opaque zero (see `shaders::elementwise`), which
/// keeps drivers from folding error-free transformations.
fn params(n: usize, dims: &[usize], strides: &[Vec<usize>]) -> Result<ElementwiseParams> {
    let stride = |k: usize| vec4s::<2>(strides.get(k).map_or(&[][..], |s| &s[..]), "broadcast strides");
    Ok(ElementwiseParams {
        n: u32_of(n, "output elements")?,
        rank: u32_of(dims.len(), "dims")?,
        dims: vec4s(dims, "collapsed dims")?,
        s0: stride(0)?,
        s1: stride(1)?,
        s2: stride(2)?,
        ..ElementwiseParams::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceCaps;
    use crate::lower::{Buf, Lowering};

    fn caps() -> DeviceCaps {
        crate::device::DeviceCaps::for_tests()
    }

    fn input(k: usize, d: DType, dims: &[usize]) -> Operand {
        Operand::whole(Buf::In(k), d, dims.to_vec()).unwrap()
    }

    fn output(d: DType, dims: &[usize]) -> Operand {
        Operand::whole(Buf::Out(0), d, dims.to_vec()).unwrap()
    }

    fn lowered(f: impl FnOnce(&mut Lower<'_>) -> Result<()>) -> Lowering {
        let caps = caps();
        let mut b = Lower::new(&caps, 1);
        f(&mut b).unwrap();
        b.finish()
    }

    #[test]
    fn same_dtype_cast_is_an_alias() {
        let (x, out) = (input(0, DType::F16, &[5]), output(DType::F16, &[5]));
        let l = lowered(|b| cast(b, DType::F16, &x, &out));
        assert!(l.kernels().is_empty());
        assert_eq!(l.aliases, vec![Some(x.window)]);
    }

    #[test]
    fn same_dtype_cast_into_scratch_is_a_copy() {
        let x = input(0, DType::F32, &[5]);
        let l = lowered(|b| {
            let t = b.temp(DType::F32, vec![5])?;
            cast(b, DType::F32, &x, &t)
        });
        assert_eq!(l.kernels().len(), 1);
        assert_eq!(l.aliases, vec![None]);
    }

    #[test]
    fn packed_outputs_are_zeroed_first_and_empty_outputs_do_nothing() {
        let (x, out) = (input(0, DType::F32, &[7]), output(DType::U8, &[7]));
        let l = lowered(|b| cast(b, DType::U8, &x, &out));
        assert_eq!(l.kernels().len(), 2);
        assert_eq!(l.kernels()[0].bindings, vec![(out.window, BindKind::Write)]);
        let (x, out) = (input(0, DType::F32, &[0, 3]), output(DType::U8, &[0, 3]));
        assert!(lowered(|b| cast(b, DType::U8, &x, &out)).kernels().is_empty());
    }

    #[test]
    fn broadcast_strides_and_the_opaque_zero() {
        let (x, y, out) = (input(0, DType::F32, &[3, 1]), input(1, DType::F32, &[4]), output(DType::F32, &[3, 4]));
        let l = lowered(|b| binary(b, BinaryOp::Add, &x, &y, &out));
        assert_eq!(l.kernels().len(), 1);
        let p: ElementwiseParams = bytemuck::pod_read_unaligned(&l.kernels()[0].params);
        // pad0 is always 0: the shaders' opaque zero.
        assert_eq!((p.n, p.rank, p.pad0, p.base), (12, 2, 0, 0));
        assert_eq!(p.dims[0][..2], [3, 4]);
        assert_eq!(p.s0[0][..2], [1, 0]);
        assert_eq!(p.s1[0][..2], [0, 1]);
        assert_eq!(l.kernels()[0].grid, Grid::Threads(12));
    }

    fn base_of(k: &Kernel) -> u32 {
        bytemuck::pod_read_unaligned::<ElementwiseParams>(&k.params).base
    }

    #[test]
    fn contiguous_word_maps_are_four_wide_with_a_scalar_tail() {
        let (x, y, out) = (input(0, DType::F32, &[2, 5]), input(1, DType::F32, &[]), output(DType::F32, &[2, 5]));
        let l = lowered(|b| binary(b, BinaryOp::Mul, &x, &y, &out));
        let k = l.kernels();
        assert_eq!(k.len(), 2);
        assert!(k[0].source.contains("array<vec4<f32>>") && k[0].source.contains("ld_x1(0u)"));
        // two vectors, UNROLL per invocation: one invocation (of a whole workgroup) covers them
        assert_eq!((k[0].grid, base_of(k[0])), (Grid::Threads(1), 0));
        assert!(!k[1].source.contains("vec4<f32>>;"));
        assert_eq!((k[1].grid, base_of(k[1])), (Grid::Threads(2), 8));
        // A multiple of 4 needs no tail; a packed dtype keeps the scalar form.
        let (x, out) = (input(0, DType::I32, &[8]), output(DType::U32, &[8]));
        assert_eq!(lowered(|b| cast(b, DType::U32, &x, &out)).kernels().len(), 1);
        let (x, out) = (input(0, DType::F16, &[8]), output(DType::F16, &[8]));
        let l = lowered(|b| unary(b, UnaryOp::Exp, &x, &out));
        // zeroing, then the scalar map over all 8 elements
        assert_eq!(l.kernels().len(), 2);
        assert_eq!(l.kernels()[1].grid, Grid::Threads(8));
    }

    #[test]
    fn small_alignment_keeps_the_scalar_form() {
        let mut caps = caps();
        caps.limits.min_storage_buffer_offset_alignment = 4;
        let mut b = Lower::new(&caps, 1);
        let (x, out) = (input(0, DType::F32, &[9]), output(DType::F32, &[9]));
        unary(&mut b, UnaryOp::Gelu, &x, &out).unwrap();
        let l = b.finish();
        assert_eq!(l.kernels().len(), 1);
        assert_eq!((l.kernels()[0].grid, base_of(l.kernels()[0])), (Grid::Threads(9), 0));
    }

    #[test]
    fn operands_that_do_not_broadcast_are_refused() {
        let caps = caps();
        let mut b = Lower::new(&caps, 1);
        let (x, y, out) = (input(0, DType::F32, &[3]), input(1, DType::F32, &[4]), output(DType::F32, &[4]));
        assert!(binary(&mut b, BinaryOp::Add, &x, &y, &out).is_err());
        let too_many_axes = input(0, DType::F32, &[1, 4]);
        assert!(unary(&mut b, UnaryOp::Neg, &too_many_axes, &out).is_err());
    }

    #[test]
    fn rank_above_eight_is_a_device_limit() {
        let caps = caps();
        let mut b = Lower::new(&caps, 1);
        // Alternating broadcast axes never collapse: rank 9 stays 9.
        let dims = [2, 3, 2, 3, 2, 3, 2, 3, 2];
        let bdims = [2, 1, 2, 1, 2, 1, 2, 1, 2];
        let (x, y, out) = (input(0, DType::F32, &dims), input(1, DType::F32, &bdims), output(DType::F32, &dims));
        let e = binary(&mut b, BinaryOp::Add, &x, &y, &out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DeviceLimit, "{e}");
    }
}

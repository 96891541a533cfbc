//! Rope and RopeBackward (§2.8.3–2.8.4) with `shaders::attention::rope`: one kernel per op, no
//! transpose. x is viewed as `[pre, S, mid, heads, D]` around the position axis; each invocation
//! rotates one pair (or four pairs in the four-wide F32 form) or passes through the part of a head
//! past `R`. A table row is the position (`[S, R/2]` tables) or `p[0]·S + pos` (`[x.shape[0], S,
//! R/2]` tables), so any position axis and either table form need no copy.

use crate::lower::builder::{tensor_bytes, u32_of, Kernel, Lower, Operand};
use crate::lower::Grid;
use crate::pipelines::BindKind;
use backend_api::op::{RopeAttrs, RopeStyle};
use backend_api::shape::try_numel;
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::attention::rope::{module, module_vec4, RopeParams};
use shaders::params::Params;

/// Kernels index with u32: stay well inside.
const MAX_ELEMENTS: usize = 1 << 31;

/// Rope of `x` with tables `cos`, `sin` into `out` (dtype and dims of `x`).
pub fn rope(b: &mut Lower<'_>, a: &RopeAttrs, x: &Operand, cos: &Operand, sin: &Operand, out: &Operand) -> Result<()> {
    rotate(b, a, [x, cos, sin], out, false)
}

/// RopeBackward of `dy` with tables `cos`, `sin` into `out` (the transpose rotation).
pub fn rope_backward(
    b: &mut Lower<'_>,
    a: &RopeAttrs,
    dy: &Operand,
    cos: &Operand,
    sin: &Operand,
    out: &Operand,
) -> Result<()> {
    rotate(b, a, [dy, cos, sin], out, true)
}

/// The sizes of one problem, in elements.
#[derive(Debug, PartialEq, Eq)]
struct Geometry {
    /// Rows: `pre · S · mid`.
    rows: usize,
    heads: usize,
    d: usize,
    r: usize,
    mid: usize,
    s: usize,
    /// Rows per index of x's first dim (1 when there is none to count).
    tdiv: usize,
    batched: bool,
}

/// Checks the attributes, dims and dtypes of the operands and returns the problem's sizes.
fn geometry(op: &str, a: &RopeAttrs, [x, cos, sin]: [&Operand; 3], out: &Operand) -> Result<Geometry> {
    let dims = &x.dims;
    ensure!(
        out.dtype == x.dtype && out.dims == *dims,
        Shape,
        "{op} of {}{dims:?} cannot write {}{:?}",
        x.dtype,
        out.dtype,
        out.dims
    );
    ensure!(
        matches!(x.dtype, DType::F32 | DType::F16 | DType::BF16),
        DType,
        "{op} x {}{dims:?} must be F32, F16 or BF16",
        x.dtype
    );
    let tdt = cos.dtype;
    ensure!(
        (tdt == x.dtype || tdt == DType::F32) && sin.dtype == tdt,
        DType,
        "{op} cos {tdt} and sin {} must both be x's {} or F32",
        sin.dtype,
        x.dtype
    );
    let (d, rot) = (a.head_dim as usize, a.rotary_dim as usize);
    ensure!(
        d >= 2 && rot.is_multiple_of(2) && rot <= d,
        Attribute,
        "{op} head_dim {d} must be >= 2 and rotary_dim {rot} even and <= it"
    );
    let rank = dims.len();
    let (Some(&s), Some(&last), true) = (dims.get(a.seq_axis), dims.last(), a.seq_axis + 1 < rank) else {
        bail!(Axis, "{op} seq_axis {} must be an axis of {dims:?} other than the last", a.seq_axis)
    };
    ensure!(last.is_multiple_of(d), Shape, "{op} x {dims:?}: last dim {last} is not a multiple of head_dim {d}");
    let r = rot / 2;
    let first = dims.first().copied().unwrap_or(1);
    let batched = match cos.dims.as_slice() {
        [cs, cr] if [*cs, *cr] == [s, r] => false,
        [cb, cs, cr] if [*cb, *cs, *cr] == [first, s, r] && a.seq_axis >= 1 => true,
        _ => bail!(
            Shape,
            "{op} cos {:?} must be [S, R/2] = {:?} or [x.shape[0], S, R/2] = {:?} (seq_axis >= 1) for x {dims:?}",
            cos.dims,
            [s, r],
            [first, s, r]
        ),
    };
    ensure!(sin.dims == cos.dims, Shape, "{op} sin {:?} must have the shape of cos {:?}", sin.dims, cos.dims);
    let pre = try_numel(dims.get(..a.seq_axis).unwrap_or(&[]))?;
    let mid = try_numel(dims.get(a.seq_axis + 1..rank - 1).unwrap_or(&[]))?;
    let rows = try_numel(&[pre, s, mid])?;
    let per_first = try_numel(dims.get(1..a.seq_axis.max(1)).unwrap_or(&[]))?;
    let tdiv = try_numel(&[per_first, s, mid])?.max(1);
    Ok(Geometry { rows, heads: last / d, d, r, mid: mid.max(1), s: s.max(1), tdiv, batched })
}

/// What the kernels rely on: every window holds its operand.
fn check_windows(op: &str, ops: &[&Operand]) -> Result<()> {
    for (k, o) in ops.iter().enumerate() {
        let need = tensor_bytes(o.dtype, &o.dims)?;
        ensure!(
            o.window.bytes >= need,
            Shape,
            "{op} operand {k} {:?} has a window of {} bytes",
            o.dims,
            o.window.bytes
        );
    }
    Ok(())
}

/// One Rope (`transpose` false) or RopeBackward (true) kernel.
fn rotate(b: &mut Lower<'_>, a: &RopeAttrs, ins: [&Operand; 3], out: &Operand, transpose: bool) -> Result<()> {
    let op = if transpose { "RopeBackward" } else { "Rope" };
    let g = geometry(op, a, ins, out)?;
    let [x, cos, sin] = ins;
    let n = x.numel();
    if n == 0 {
        return Ok(());
    }
    if n >= MAX_ELEMENTS {
        bail!(DeviceLimit, "{op} input {:?} has more than 2^31 elements", x.dims);
    }
    check_windows(op, &[x, cos, sin, out])?;
    // The four-wide form needs whole 4-vectors everywhere: F32 x and tables, R/2 and D multiples
    // of 4 (so every pair group, head and table row starts on a vector), and 16-byte aligned
    // windows (every bound window starts at a multiple of the storage offset alignment).
    let aligned = b.caps().limits.min_storage_buffer_offset_alignment >= 16;
    let four =
        x.dtype == DType::F32 && cos.dtype == DType::F32 && g.r.is_multiple_of(4) && g.d.is_multiple_of(4) && aligned;
    let (w, src) = if four { (4, Some(module_vec4(a.style))) } else { (1, module(x.dtype, cos.dtype)) };
    let Some(src) = src else { bail!(Unsupported, "no GPU kernel for {op} on {} with {} tables", x.dtype, cos.dtype) };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("rope shader: {e}")))?;
    let (step, gap) = match a.style {
        RopeStyle::NeoX => (1, g.r / w),
        RopeStyle::GptJ => (2, 1),
    };
    // Units per head: r / w rotating ones, then (D − R) / w passed through.
    let per_head = (g.d - g.r) / w;
    let units = try_numel(&[g.rows, g.heads, per_head])?;
    let p = RopeParams {
        units: u32_of(units, "rope units")?,
        per_head: u32_of(per_head, "units per head")?,
        heads: u32_of(g.heads, "heads")?,
        d: u32_of(g.d / w, "head width")?,
        r: u32_of(g.r / w, "table width")?,
        step,
        gap: u32_of(gap, "pair gap")?,
        mid: u32_of(g.mid, "rows per position")?,
        s: u32_of(g.s, "positions")?,
        tdiv: u32_of(g.tdiv, "rows per batch")?,
        batched: u32::from(g.batched),
        sign: if transpose { -1.0 } else { 1.0 },
    };
    let bindings = vec![
        (x.window, BindKind::Read),
        (cos.window, BindKind::Read),
        (sin.window, BindKind::Read),
        (out.window, BindKind::Write),
    ];
    b.zero_if_packed(out)?;
    let grid = Grid::Threads(u64::from(p.units));
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops: None });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::Buf;
    use backend_api::ErrorKind;

    fn attrs(d: u32, r: u32, style: RopeStyle, seq_axis: usize) -> RopeAttrs {
        RopeAttrs { head_dim: d, rotary_dim: r, style, seq_axis }
    }

    fn ops(d: DType, t: DType, x: &[usize], tab: &[usize]) -> [Operand; 4] {
        let o = |buf, dt, dims: &[usize]| Operand::whole(buf, dt, dims.to_vec()).unwrap();
        [o(Buf::In(0), d, x), o(Buf::In(1), t, tab), o(Buf::In(2), t, tab), o(Buf::Out(0), d, x)]
    }

    /// The sources of the kernels one Rope lowering pushes, or its error.
    fn lowered(a: &RopeAttrs, d: DType, t: DType, x: &[usize], tab: &[usize]) -> Result<Vec<String>> {
        let caps = crate::device::DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        let [x, c, s, out] = ops(d, t, x, tab);
        rope(&mut b, a, &x, &c, &s, &out)?;
        Ok(b.finish().kernels().iter().map(|k| k.source.clone()).collect())
    }

    #[test]
    fn geometry_of_an_inner_position_axis_and_per_batch_tables() {
        let [x, c, s, out] = ops(DType::F32, DType::F32, &[2, 3, 4, 5, 8], &[2, 4, 1]);
        let g = geometry("Rope", &attrs(8, 2, RopeStyle::NeoX, 2), [&x, &c, &s], &out).unwrap();
        let want = Geometry { rows: 120, heads: 1, d: 8, r: 1, mid: 5, s: 4, tdiv: 60, batched: true };
        assert_eq!(g, want);
    }

    #[test]
    fn four_wide_where_the_layout_allows() {
        let four = |src: &[String]| src.len() == 1 && src[0].contains("array<vec4<f32>>");
        let a = attrs(128, 128, RopeStyle::NeoX, 1);
        assert!(four(&lowered(&a, DType::F32, DType::F32, &[1, 6, 2, 128], &[6, 64]).unwrap()));
        let a = attrs(16, 8, RopeStyle::GptJ, 0);
        assert!(four(&lowered(&a, DType::F32, DType::F32, &[3, 32], &[3, 4]).unwrap()));
        // R/2 = 3 and F16 take the scalar kernel; F16 zeroes its packed output first.
        let a = attrs(10, 6, RopeStyle::NeoX, 0);
        assert!(!four(&lowered(&a, DType::F32, DType::F32, &[3, 20], &[3, 3]).unwrap()));
        let a = attrs(16, 16, RopeStyle::NeoX, 0);
        assert_eq!(lowered(&a, DType::F16, DType::F32, &[3, 16], &[3, 8]).unwrap().len(), 2);
        // empty: no kernel
        assert!(lowered(&a, DType::F32, DType::F32, &[0, 16], &[0, 8]).unwrap().is_empty());
    }

    #[test]
    fn bad_operands_are_errors() {
        let kind = |r: Result<Vec<String>>| r.unwrap_err().kind();
        let a = attrs(16, 16, RopeStyle::NeoX, 0);
        assert_eq!(kind(lowered(&a, DType::F32, DType::F32, &[3, 16], &[3, 4])), ErrorKind::Shape);
        assert_eq!(kind(lowered(&a, DType::F32, DType::F32, &[3, 16], &[3, 3, 8])), ErrorKind::Shape);
        assert_eq!(kind(lowered(&a, DType::F32, DType::F16, &[3, 16], &[3, 8])), ErrorKind::DType);
        assert_eq!(kind(lowered(&a, DType::F32, DType::F32, &[3, 12], &[3, 8])), ErrorKind::Shape);
        assert_eq!(
            kind(lowered(&attrs(16, 16, RopeStyle::NeoX, 1), DType::F32, DType::F32, &[3, 16], &[16, 8])),
            ErrorKind::Axis
        );
        assert_eq!(
            kind(lowered(&attrs(16, 5, RopeStyle::NeoX, 0), DType::F32, DType::F32, &[3, 16], &[3, 2])),
            ErrorKind::Attribute
        );
    }
}

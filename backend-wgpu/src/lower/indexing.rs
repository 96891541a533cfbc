//! Gather, ScatterAdd, GatherBackward (§2.4) with `shaders::indexing`.
//!
//! Every op views the data side as (outer, a, inner) around the indexed axis and the gathered
//! side as (outer, nidx, inner). Index tensors are read as u32 words (I64 as two), resolved by the
//! §1.6 rule in the shader; an out-of-range index reads zero bits (Gather) or is skipped.
//!
//! Scatter plans per dtype (colliding indices never lose an update):
//! - F32, I32, U32, I8, U8, I64, C64: copy `data` (or zero) into the output, then one invocation
//!   per update adds atomically into it (`atomicAdd` or a compare-exchange loop on the u32 word);
//! - F16, BF16: widen `data` (or zero) into an F32 scratch buffer, add atomically there, round
//!   once into the output (the reference also rounds once; per-update rounding of a 16-bit lane
//!   would exceed the Close tolerance after a few collisions);
//! - F64: no 64-bit atomics in WGSL, so one invocation per output element sums its updates.

use super::builder::{u32_of, Kernel, Lower, Operand, Window};
use super::Grid;
use crate::pipelines::BindKind;
use backend_api::shape::try_numel;
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::indexing::{
    convert_module, gather_module, is_index, owner_module, scatter_acc_dtype, scatter_module, IndexingConvertParams,
    IndexingParams,
};
use shaders::params::Params;

/// Element counts above this are refused: kernels index in u32 and I64 indices take 2 words each.
const MAX_ELEMENTS: usize = 1 << 31;

/// Gather (§2.4.1) of `data` rows along `axis` by `indices` into `out`
/// (`data.dims[..axis] ++ indices.dims ++ data.dims[axis+1..]`).
pub fn gather(b: &mut Lower<'_>, axis: usize, data: &Operand, indices: &Operand, out: &Operand) -> Result<()> {
    let g = Geometry::of(&data.dims, axis, indices.numel())?;
    check(indices.dtype, &g)?;
    ensure!(out.dtype == data.dtype, DType, "Gather of {} data cannot write {}", data.dtype, out.dtype);
    let n = g.gathered_numel();
    ensure!(out.numel() == n, Shape, "Gather of {n} elements cannot write {:?}", out.dims);
    if n == 0 {
        return Ok(());
    }
    b.zero_if_packed(out)?;
    let bindings = vec![(data.window, BindKind::Read), (indices.window, BindKind::Read), (out.window, BindKind::Write)];
    push(b, shader(gather_module(data.dtype, indices.dtype))?, bindings, g.params(n)?);
    Ok(())
}

/// ScatterAdd (§2.4.2): `data` plus every `updates` element added at its index along `axis`,
/// into `out` (`data`'s dtype and dims).
pub fn scatter_add(
    b: &mut Lower<'_>,
    axis: usize,
    data: &Operand,
    indices: &Operand,
    updates: &Operand,
    out: &Operand,
) -> Result<()> {
    let d = out.dtype;
    if d == DType::Bool || data.dtype != d {
        bail!(DType, "ScatterAdd is not defined for {} data into {d}", data.dtype);
    }
    ensure!(data.dims == out.dims, Shape, "ScatterAdd of {:?} data cannot write {:?}", data.dims, out.dims);
    scatter(b, axis, Some(data), indices, updates, out)
}

/// GatherBackward (§2.4.3): zeros of `out`'s dims (the forward data's) with every `dy` element
/// added at its index along `axis`.
pub fn gather_backward(b: &mut Lower<'_>, axis: usize, dy: &Operand, indices: &Operand, out: &Operand) -> Result<()> {
    if !matches!(out.dtype, DType::F32 | DType::F16 | DType::BF16 | DType::F64) {
        bail!(DType, "GatherBackward is not defined for {}", out.dtype);
    }
    scatter(b, axis, None, indices, dy, out)
}

/// The (outer, a, inner, nidx) view of one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Geometry {
    outer: usize,
    a: usize,
    inner: usize,
    nidx: usize,
}

impl Geometry {
    fn of(data: &[usize], axis: usize, nidx: usize) -> Result<Geometry> {
        let (Some(head), Some(tail), Some(&a)) = (data.get(..axis), data.get(axis + 1..), data.get(axis)) else {
            bail!(Axis, "axis {axis} out of range for data {data:?}")
        };
        let g = Geometry { outer: try_numel(head)?, a, inner: try_numel(tail)?, nidx };
        // Checked once here, so that the two counts below cannot overflow.
        try_numel(&[g.outer, g.a, g.inner])?;
        try_numel(&[g.outer, g.nidx, g.inner])?;
        Ok(g)
    }
    fn data_numel(&self) -> usize {
        [self.outer, self.a, self.inner].iter().fold(1usize, |n, &d| n.saturating_mul(d))
    }
    fn gathered_numel(&self) -> usize {
        [self.outer, self.nidx, self.inner].iter().fold(1usize, |n, &d| n.saturating_mul(d))
    }
    /// The uniform for `n` invocations.
    fn params(&self, n: usize) -> Result<IndexingParams> {
        Ok(IndexingParams {
            n: u32_of(n, "invocations")?,
            a: u32_of(self.a, "rows of the indexed axis")?,
            inner: u32_of(self.inner, "inner elements")?,
            nidx: u32_of(self.nidx, "indices")?,
        })
    }
}

fn shader(r: std::result::Result<String, String>) -> Result<String> {
    r.map_err(|e| Error::new(ErrorKind::Device, format!("indexing shader: {e}")))
}

/// Appends a kernel of one invocation per element (`p.n`).
fn push(b: &mut Lower<'_>, source: String, bindings: Vec<(Window, BindKind)>, p: IndexingParams) {
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid: Grid::Threads(u64::from(p.n)), flops: None });
}

/// Checks the index dtype and the sizes every kernel indexes with u32.
fn check(index: DType, g: &Geometry) -> Result<()> {
    ensure!(is_index(index), DType, "indices must be I32, I64 or U32, got {index}");
    for n in [g.data_numel(), g.gathered_numel(), g.nidx] {
        ensure!(n < MAX_ELEMENTS, DeviceLimit, "{n} elements exceed the indexing kernels' 2^31");
    }
    Ok(())
}

/// ScatterAdd (`data` given) or GatherBackward (from zero): picks the plan of `out`'s dtype.
fn scatter(
    b: &mut Lower<'_>,
    axis: usize,
    data: Option<&Operand>,
    indices: &Operand,
    updates: &Operand,
    out: &Operand,
) -> Result<()> {
    let d = out.dtype;
    ensure!(updates.dtype == d, DType, "updates {} differ from the output dtype {d}", updates.dtype);
    let g = Geometry::of(&out.dims, axis, indices.numel())?;
    check(indices.dtype, &g)?;
    let upd = g.gathered_numel();
    ensure!(updates.numel() == upd, Shape, "{:?} updates do not match {upd} gathered elements", updates.dims);
    if g.data_numel() == 0 {
        return Ok(());
    }
    let plan = Plan { g, data, indices, updates, out };
    match scatter_acc_dtype(d) {
        None if d == DType::F64 => plan.owner(b),
        None => bail!(Unsupported, "the wgpu backend has no scatter-add for {d}"),
        Some(acc) if acc == d => plan.in_place(b),
        Some(acc) => plan.widened(b, acc),
    }
}

/// What a scatter plan reads and writes.
struct Plan<'o> {
    g: Geometry,
    /// ScatterAdd's data; `None` for GatherBackward (the sum starts from zero).
    data: Option<&'o Operand>,
    indices: &'o Operand,
    updates: &'o Operand,
    out: &'o Operand,
}

impl Plan<'_> {
    /// The atomic scatter into `acc`, unless there are no updates.
    fn scatter_kernel(&self, b: &mut Lower<'_>, acc: Window) -> Result<()> {
        let n = self.g.gathered_numel();
        if n == 0 {
            return Ok(());
        }
        let source = shader(scatter_module(self.out.dtype, self.indices.dtype))?;
        let bindings =
            vec![(self.indices.window, BindKind::Read), (self.updates.window, BindKind::Read), (acc, BindKind::Write)];
        push(b, source, bindings, self.g.params(n)?);
        Ok(())
    }

    /// `out[e] = x[e]` for `n` elements from `src` (read as dtype `src.1`) to `dst` (`dst.1`).
    fn convert(b: &mut Lower<'_>, src: (Window, DType), dst: (Window, DType), n: usize) -> Result<()> {
        let p = IndexingConvertParams { n: u32_of(n, "elements")?, ..IndexingConvertParams::default() };
        b.push(Kernel {
            source: shader(convert_module(src.1, dst.1))?,
            bindings: vec![(src.0, BindKind::Read), (dst.0, BindKind::Write)],
            params: p.to_bytes(),
            grid: Grid::Threads(u64::from(p.n)),
            flops: None,
        });
        Ok(())
    }

    /// Accumulate directly in the output: copy data's words (or zero), then scatter.
    fn in_place(&self, b: &mut Lower<'_>) -> Result<()> {
        match self.data {
            Some(data) => {
                // Word for word, whatever the dtype: packed lanes travel in their words.
                let words = usize::try_from(self.out.words()).unwrap_or(usize::MAX);
                Self::convert(b, (data.window, DType::U32), (self.out.window, DType::U32), words)?;
            }
            None => b.zero(self.out)?,
        }
        self.scatter_kernel(b, self.out.window)
    }

    /// Accumulate in a scratch tensor of `acc` (F32 for F16/BF16) and round once into the output.
    fn widened(&self, b: &mut Lower<'_>, acc: DType) -> Result<()> {
        let n = self.g.data_numel();
        let tmp = b.temp(acc, self.out.dims.clone())?;
        match self.data {
            Some(data) => Self::convert(b, (data.window, data.dtype), (tmp.window, acc), n)?,
            None => b.zero(&tmp)?,
        }
        self.scatter_kernel(b, tmp.window)?;
        b.zero_if_packed(self.out)?;
        Self::convert(b, (tmp.window, acc), (self.out.window, self.out.dtype), n)
    }

    /// One invocation per output element sums its own updates (no atomics needed).
    fn owner(&self, b: &mut Lower<'_>) -> Result<()> {
        let mut bindings: Vec<_> = self.data.map(|x| (x.window, BindKind::Read)).into_iter().collect();
        bindings.extend([
            (self.indices.window, BindKind::Read),
            (self.updates.window, BindKind::Read),
            (self.out.window, BindKind::Write),
        ]);
        let source = shader(owner_module(self.out.dtype, self.indices.dtype, self.data.is_some()))?;
        push(b, source, bindings, self.g.params(self.g.data_numel())?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_splits_around_the_axis() {
        let g = Geometry::of(&[2, 3, 4, 5], 1, 7).unwrap();
        assert_eq!(g, Geometry { outer: 2, a: 3, inner: 20, nidx: 7 });
        assert_eq!((g.data_numel(), g.gathered_numel()), (120, 280));
        assert!(Geometry::of(&[2], 1, 1).is_err());
        assert_eq!(Geometry::of(&[5], 0, 1).unwrap(), Geometry { outer: 1, a: 5, inner: 1, nidx: 1 });
    }

    #[test]
    fn params_are_four_words() {
        let g = Geometry { outer: 1, a: 3, inner: 2, nidx: 9 };
        let p = g.params(18).unwrap().to_bytes();
        assert_eq!(p.len(), 16);
        assert_eq!(&p[4..8], &3u32.to_le_bytes());
    }

    #[test]
    fn non_index_dtypes_are_refused() {
        let g = Geometry { outer: 1, a: 3, inner: 2, nidx: 9 };
        assert!(check(DType::F32, &g).is_err());
        assert!(check(DType::I64, &g).is_ok());
        let big = Geometry { outer: 1 << 16, a: 1 << 16, inner: 1, nidx: 1 };
        assert!(check(DType::I32, &big).is_err());
    }

    fn lowered(f: impl FnOnce(&mut Lower<'_>) -> Result<()>) -> crate::lower::Lowering {
        let caps = crate::device::DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        f(&mut b).unwrap();
        b.finish()
    }

    fn operand(buf: super::super::Buf, d: DType, dims: &[usize]) -> Operand {
        Operand::whole(buf, d, dims.to_vec()).unwrap()
    }

    #[test]
    fn scatter_plans_per_dtype() {
        use super::super::Buf::{In, Out};
        let idx = operand(In(1), DType::I32, &[5]);
        // F16 widens into an F32 scratch tensor: widen, scatter, zero the packed output, round.
        let (data, upd, out) = (
            operand(In(0), DType::F16, &[3, 2]),
            operand(In(2), DType::F16, &[5, 2]),
            operand(Out(0), DType::F16, &[3, 2]),
        );
        let l = lowered(|b| scatter_add(b, 0, &data, &idx, &upd, &out));
        assert_eq!((l.temps.clone(), l.kernels().len()), (vec![24], 4));
        // I32 accumulates in the output: copy the data's words, scatter.
        let (data, upd, out) = (
            operand(In(0), DType::I32, &[3, 2]),
            operand(In(2), DType::I32, &[5, 2]),
            operand(Out(0), DType::I32, &[3, 2]),
        );
        let l = lowered(|b| scatter_add(b, 0, &data, &idx, &upd, &out));
        assert_eq!((l.temps.len(), l.kernels().len()), (0, 2));
        // F64 GatherBackward: one owner kernel binding indices, dy and the output.
        let (dy, out) = (operand(In(0), DType::F64, &[5, 2]), operand(Out(0), DType::F64, &[3, 2]));
        let l = lowered(|b| gather_backward(b, 0, &dy, &idx, &out));
        assert_eq!(l.kernels().len(), 1);
        assert_eq!(l.kernels()[0].bindings.len(), 3);
    }

    #[test]
    fn mismatched_operands_are_refused() {
        use super::super::Buf::{In, Out};
        let caps = crate::device::DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        let (data, idx) = (operand(In(0), DType::F32, &[3, 2]), operand(In(1), DType::I32, &[5]));
        assert!(gather(&mut b, 0, &data, &idx, &operand(Out(0), DType::F32, &[4, 2])).is_err());
        let upd = operand(In(2), DType::F32, &[4, 2]);
        assert!(scatter_add(&mut b, 0, &data, &idx, &upd, &operand(Out(0), DType::F32, &[3, 2])).is_err());
        let bools = operand(In(0), DType::Bool, &[3, 2]);
        assert!(gather_backward(&mut b, 0, &bools, &idx, &operand(Out(0), DType::Bool, &[3, 2])).is_err());
    }
}

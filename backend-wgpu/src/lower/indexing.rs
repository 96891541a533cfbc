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

use super::legacy::{words, zero_kernel, Buf, Kernel, LowerCtx, Lowered};
use super::Grid;
use crate::pipelines::BindKind;
use backend_api::op::Op;
use backend_api::shape::numel;
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::indexing::{convert_module, gather_module, is_index, owner_module, scatter_acc_dtype, scatter_module};

/// Element counts above this are refused: kernels index in u32 and I64 indices take 2 words each.
const MAX_ELEMENTS: usize = 1 << 31;

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
        ensure!(axis < data.len(), Axis, "axis {axis} out of range for data {data:?}");
        Ok(Geometry { outer: numel(&data[..axis]), a: data[axis], inner: numel(&data[axis + 1..]), nidx })
    }
    fn data_numel(&self) -> usize {
        self.outer * self.a * self.inner
    }
    fn gathered_numel(&self) -> usize {
        self.outer * self.nidx * self.inner
    }
    /// The uniform (`Params` of `indexing_common.wgsl`) for `n` invocations.
    fn params(&self, n: usize) -> Result<Vec<u8>> {
        let mut p = Vec::with_capacity(16);
        for v in [n, self.a, self.inner, self.nidx] {
            p.extend_from_slice(&u32_of(v)?.to_le_bytes());
        }
        Ok(p)
    }
}

fn u32_of(v: usize) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::new(ErrorKind::DeviceLimit, format!("{v} does not fit 32-bit indexing")))
}

fn shader(r: std::result::Result<String, String>) -> Result<String> {
    r.map_err(|e| Error::new(ErrorKind::Device, format!("indexing shader: {e}")))
}

/// Lowers one node of this family.
pub fn lower(ctx: &LowerCtx<'_>) -> Result<Lowered> {
    match &ctx.node.op {
        Op::Gather(a) => gather(ctx, a.axis),
        Op::ScatterAdd(a) => scatter(ctx, a.axis, true),
        Op::GatherBackward(a) => scatter(ctx, a.axis, false),
        other => bail!(Unsupported, "{} is not an indexing op", backend_api::spec::op_label(other)),
    }
}

/// The dtype and dims of input `k`.
fn input(ctx: &LowerCtx<'_>, k: usize) -> Result<(DType, Vec<usize>)> {
    match ctx.inputs.get(k) {
        Some(t) => Ok(t.clone()),
        None => bail!(Arity, "{} needs input {k}", backend_api::spec::op_label(&ctx.node.op)),
    }
}

/// Checks the index dtype and the sizes every kernel indexes with u32.
fn check(index: DType, g: &Geometry) -> Result<()> {
    ensure!(is_index(index), DType, "indices must be I32, I64 or U32, got {index}");
    for n in [g.data_numel(), g.gathered_numel(), g.nidx] {
        ensure!(n < MAX_ELEMENTS, DeviceLimit, "{n} elements exceed the indexing kernels' 2^31");
    }
    Ok(())
}

fn empty() -> Lowered {
    Lowered::Kernels { temps: vec![], kernels: vec![] }
}

fn gather(ctx: &LowerCtx<'_>, axis: usize) -> Result<Lowered> {
    let (d, data) = input(ctx, 0)?;
    let (index, idx) = input(ctx, 1)?;
    let g = Geometry::of(&data, axis, numel(&idx))?;
    check(index, &g)?;
    let n = g.gathered_numel();
    if n == 0 {
        return Ok(empty());
    }
    let mut kernels = Vec::with_capacity(2);
    if shaders::is_packed(d) {
        kernels.push(zero_kernel(Buf::Out(0), words(d, n)));
    }
    kernels.push(Kernel {
        source: shader(gather_module(d, index))?,
        bindings: vec![(Buf::In(0), BindKind::Read), (Buf::In(1), BindKind::Read), (Buf::Out(0), BindKind::Write)],
        params: g.params(n)?,
        grid: Grid::Threads(n as u64),
    });
    Ok(Lowered::Kernels { temps: vec![], kernels })
}

/// ScatterAdd (`with_data`: inputs data, indices, updates) or GatherBackward (inputs dy, indices).
fn scatter(ctx: &LowerCtx<'_>, axis: usize, with_data: bool) -> Result<Lowered> {
    let Some((d, data)) = ctx.outputs.first().cloned() else { bail!(Arity, "indexing op without output") };
    let (index, idx) = input(ctx, 1)?;
    let upd = if with_data { 2 } else { 0 };
    let (ud, _) = input(ctx, upd)?;
    ensure!(ud == d, DType, "updates {ud} differ from the output dtype {d}");
    let g = Geometry::of(&data, axis, numel(&idx))?;
    check(index, &g)?;
    if with_data && (d == DType::Bool || input(ctx, 0)?.0 != d) {
        bail!(DType, "ScatterAdd is not defined for {d}");
    }
    if !with_data && !matches!(d, DType::F32 | DType::F16 | DType::BF16 | DType::F64) {
        bail!(DType, "GatherBackward is not defined for {d}");
    }
    let n = g.data_numel();
    if n == 0 {
        return Ok(empty());
    }
    let plan = Plan { g, d, index, with_data, upd };
    match scatter_acc_dtype(d) {
        None if d == DType::F64 => plan.owner(),
        None => bail!(Unsupported, "the wgpu backend has no scatter-add for {d}"),
        Some(acc) if acc == d => plan.in_place(),
        Some(acc) => plan.widened(acc),
    }
}

/// What a scatter plan needs to know.
struct Plan {
    g: Geometry,
    d: DType,
    index: DType,
    with_data: bool,
    /// The input holding the updates (ScatterAdd: 2, GatherBackward: 0).
    upd: usize,
}

impl Plan {
    /// The atomic scatter into `acc`, or nothing when there are no updates.
    fn scatter_kernel(&self, acc: Buf) -> Result<Option<Kernel>> {
        let n = self.g.gathered_numel();
        if n == 0 {
            return Ok(None);
        }
        Ok(Some(Kernel {
            source: shader(scatter_module(self.d, self.index))?,
            bindings: vec![(Buf::In(1), BindKind::Read), (Buf::In(self.upd), BindKind::Read), (acc, BindKind::Write)],
            params: self.g.params(n)?,
            grid: Grid::Threads(n as u64),
        }))
    }

    /// `out[e] = x[e]` for `n` elements from `src` (dtype `sd`) to `dst` (dtype `dd`).
    fn convert(src: (Buf, DType), dst: (Buf, DType), n: usize) -> Result<Kernel> {
        let mut params = u32_of(n)?.to_le_bytes().to_vec();
        params.resize(16, 0);
        Ok(Kernel {
            source: shader(convert_module(src.1, dst.1))?,
            bindings: vec![(src.0, BindKind::Read), (dst.0, BindKind::Write)],
            params,
            grid: Grid::Threads(n as u64),
        })
    }

    /// Accumulate directly in the output: copy data's words (or zero), then scatter.
    fn in_place(&self) -> Result<Lowered> {
        let w = words(self.d, self.g.data_numel());
        let first = if self.with_data {
            Self::convert((Buf::In(0), DType::U32), (Buf::Out(0), DType::U32), w as usize)?
        } else {
            zero_kernel(Buf::Out(0), w)
        };
        let kernels = std::iter::once(first).chain(self.scatter_kernel(Buf::Out(0))?).collect();
        Ok(Lowered::Kernels { temps: vec![], kernels })
    }

    /// Accumulate in a scratch buffer of `acc` (F32 for F16/BF16) and round once into the output.
    fn widened(&self, acc: DType) -> Result<Lowered> {
        let n = self.g.data_numel();
        let tmp = Buf::Temp(0);
        let mut kernels = vec![if self.with_data {
            Self::convert((Buf::In(0), self.d), (tmp, acc), n)?
        } else {
            zero_kernel(tmp, words(acc, n))
        }];
        kernels.extend(self.scatter_kernel(tmp)?);
        if shaders::is_packed(self.d) {
            kernels.push(zero_kernel(Buf::Out(0), words(self.d, n)));
        }
        kernels.push(Self::convert((tmp, acc), (Buf::Out(0), self.d), n)?);
        Ok(Lowered::Kernels { temps: vec![words(acc, n) * 4], kernels })
    }

    /// One invocation per output element sums its own updates (no atomics needed).
    fn owner(&self) -> Result<Lowered> {
        let n = self.g.data_numel();
        let mut bindings = Vec::with_capacity(4);
        if self.with_data {
            bindings.push((Buf::In(0), BindKind::Read));
        }
        bindings.extend([
            (Buf::In(1), BindKind::Read),
            (Buf::In(self.upd), BindKind::Read),
            (Buf::Out(0), BindKind::Write),
        ]);
        let k = Kernel {
            source: shader(owner_module(self.d, self.index, self.with_data))?,
            bindings,
            params: self.g.params(n)?,
            grid: Grid::Threads(n as u64),
        };
        Ok(Lowered::Kernels { temps: vec![], kernels: vec![k] })
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
        let p = g.params(18).unwrap();
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
}

//! Conv (§2.9.1): for every output element, a plain loop over the input channels of its group and
//! the kernel box, in f64, rounded once. Taps that fall in the zero padding are skipped rather
//! than multiplied by 0, so a window entirely in the padding gives exactly the bias even for
//! non-finite weights (docs/DECISIONS.md). Shapes are checked by the op's shape inference, so the
//! indexing below is in range by construction.

use crate::layout::{count, for_each_index};
use crate::mem::try_vec;
use crate::value::{floats, from_floats};
use backend_api::op::{ConvAttrs, Op};
use backend_api::{bail, Result, Shape, Tensor, TensorType};

/// The sizes of one Conv or ConvTranspose, as its shape inference validated them.
pub(super) struct Geom {
    /// Batch `N`.
    pub n: usize,
    /// Input channels `Cin`.
    pub cin: usize,
    /// Output channels `Cout`.
    pub cout: usize,
    /// Groups `G` (≥ 1).
    pub groups: usize,
    /// Spatial dims of `x`.
    pub input: Vec<usize>,
    /// Kernel box (spatial dims of `w`).
    pub kernel: Vec<usize>,
    /// Spatial dims of the output.
    pub output: Vec<usize>,
    /// The whole output shape `[N, Cout, *out]`.
    pub out_shape: Vec<usize>,
}

impl Geom {
    /// Checks `op` on its operands with the op's own shape inference and returns its sizes.
    pub(super) fn of(op: &Op, groups: u32, x: &Tensor, w: &Tensor, bias: Option<&Tensor>) -> Result<Geom> {
        let ty = |t: &Tensor| TensorType { dtype: t.dtype(), shape: Shape::of(t.shape()) };
        let ins: Vec<TensorType> = [x, w].into_iter().chain(bias).map(ty).collect();
        let label = backend_api::spec::op_label(op);
        let outs = backend_api::infer::infer(op, &ins).map_err(|e| e.context(format!("{label} operands")))?;
        let Some(out) = outs.first() else { bail!(Shape, "{label} inferred no output for {ins:?}") };
        let out_shape = out.shape.static_dims(&format!("{label} output"))?;
        let (xd, wd) = (x.shape(), w.shape());
        if xd.len() < 3 || wd.len() != xd.len() || out_shape.len() != xd.len() {
            bail!(Shape, "{label}: x {xd:?}, w {wd:?} and output {out_shape:?} must have one rank of 3 to 5");
        }
        Ok(Geom {
            n: xd[0],
            cin: xd[1],
            cout: out_shape[1],
            groups: groups.max(1) as usize,
            input: xd[2..].to_vec(),
            kernel: wd[2..].to_vec(),
            output: out_shape[2..].to_vec(),
            out_shape,
        })
    }
}

/// The row-major index of `idx` in a box of `dims`.
pub(super) fn flat(idx: &[usize], dims: &[usize]) -> usize {
    idx.iter().zip(dims).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// `base·stride + κ·dilation − pads_begin` per dim, as the row-major index into a box of `limit` (the
/// input for Conv, the output for ConvTranspose); `None` when it falls outside the box.
pub(super) fn tap(base: &[usize], kap: &[usize], a: &ConvAttrs, limit: &[usize]) -> Option<usize> {
    let mut at = 0usize;
    for d in 0..limit.len() {
        let p = base[d] * a.stride[d] + kap[d] * a.dilation[d];
        if p < a.pads_begin[d] || p - a.pads_begin[d] >= limit[d] {
            return None;
        }
        at = at * limit[d] + (p - a.pads_begin[d]);
    }
    Some(at)
}

/// `Conv(x, w[, bias])` with the (expanded) attributes `a`.
pub fn conv(x: &Tensor, w: &Tensor, bias: Option<&Tensor>, a: &ConvAttrs) -> Result<Tensor> {
    let g = Geom::of(&Op::Conv(a.clone()), a.groups, x, w, bias)?;
    let (vx, vw) = (floats(x, "Conv x")?, floats(w, "Conv w")?);
    let vb = bias.map(|b| floats(b, "Conv bias")).transpose()?;
    let (cgi, cgo) = (g.cin / g.groups, g.cout / g.groups);
    let (in_sp, k_sp) = (count(&g.input)?, count(&g.kernel)?);
    let mut out = try_vec(count(&g.out_shape)?)?;
    for_each_index(&g.out_shape, |idx| {
        let (n, co, o) = (idx[0], idx[1], &idx[2..]);
        // cgo ≥ 1 here: an output element exists, so Cout ≥ 1.
        let group = co / cgo;
        let mut acc = vb.as_ref().map_or(0.0, |b| b[co]);
        for c in 0..cgi {
            let xc = (n * g.cin + group * cgi + c) * in_sp;
            let wc = (co * cgi + c) * k_sp;
            for_each_index(&g.kernel, |kap| {
                if let Some(p) = tap(o, kap, a, &g.input) {
                    acc += vw[wc + flat(kap, &g.kernel)] * vx[xc + p];
                }
                Ok(())
            })?;
        }
        out.push(acc);
        Ok(())
    })?;
    from_floats(x.dtype(), &g.out_shape, &out)
}

//! Generator for `Conv` (§2.9.1), and the geometry both convolution generators share: 1 to 3
//! spatial dims, strides and dilations 1 to 3, asymmetric pads (up to past the kernel extent, so
//! some windows lie entirely in the padding), bias or not, and empty batches, channel groups and
//! spatial dims. Each case is shaped for one wgpu kernel form ([`Form`]). Operands are drawn like
//! MatMul's (mostly in [−1, 1], IEEE specials at a tenth of the case rate); the magnitude `M` of
//! an output element is the same convolution of `|x|`, `|w|` and `|bias|` in F64.

use crate::problem::{nth, Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{numel, MAX_NUMEL};
use crate::values::{FloatDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::op::ConvAttrs;
use backend_api::DType;
use proptest::prelude::*;

/// Upper bound on multiply-adds per case (lavapipe runs these on a CPU).
pub(super) const WORK_CAP: usize = 1 << 18;

/// The channel layout a case is shaped for: each selects a kernel form of the wgpu lowering
/// (`lower/conv/mod.rs`, `ConvForm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    /// Few channels per group, any groups: the general direct kernel.
    General,
    /// `groups == Cin == Cout`: the depthwise kernels (the staged tile for 2-D cases whose window
    /// fits it, four outputs per invocation otherwise: 1-D, 3-D, F64 and wide strides).
    Depthwise,
    /// At least 16 input and output channels per group: the implicit GEMM (`ImplicitGemm`, from
    /// 16 output channels per group and 16 products per output) for F32, F16 and BF16.
    Wide,
}

impl Form {
    /// Every form, in the order the strategies draw them.
    pub(super) const ALL: [Form; 3] = [Form::General, Form::Depthwise, Form::Wide];

    /// `(groups, Cin/G, Cout/G)` for this form.
    fn channels(self, rng: &mut Rng) -> (usize, usize, usize) {
        match self {
            // 0 channels per group (Cin = 0 or Cout = 0) now and then
            Form::General => (rng.pick(&[1, 1, 2, 3]), rng.pick(&[0, 1, 2, 3, 5]), rng.pick(&[0, 1, 2, 3, 4, 7])),
            Form::Depthwise => (rng.pick(&[1, 2, 3, 8, 17]), 1, 1),
            Form::Wide => (rng.pick(&[1, 1, 2]), rng.pick(&[16, 17, 24]), rng.pick(&[16, 20, 33])),
        }
    }
}

/// One convolution's sizes and attributes, drawn for Conv or ConvTranspose.
#[derive(Clone, Debug)]
pub(super) struct Geometry {
    pub n: usize,
    pub groups: usize,
    /// Input channels per group (the `x` side).
    pub cgi: usize,
    /// Output channels per group.
    pub cgo: usize,
    pub input: Vec<usize>,
    pub kernel: Vec<usize>,
    pub attrs: ConvAttrs,
}

impl Geometry {
    /// Batch, channels, kernel box and attributes; `input` is left for the op to choose.
    pub(super) fn draw(rng: &mut Rng, form: Form) -> Geometry {
        // Wide cases keep small kernels in at most 2 dims, so that shrinking to the caps leaves
        // their channel counts alone.
        let wide = form == Form::Wide;
        let s = 1 + rng.below(if wide { 2 } else { 3 });
        let (groups, cgi, cgo) = form.channels(rng);
        let n = if rng.chance(0.08) { 0 } else { rng.pick(&[1, 1, 2, 3]) };
        let mut a = ConvAttrs::new(s);
        let mut kernel = Vec::with_capacity(s);
        for d in 0..s {
            kernel.push(if wide { rng.pick(&[1, 3]) } else { rng.pick(&[1, 2, 3, 3, 5]) });
            a.stride[d] = rng.pick(&[1, 1, 2, 3]);
            a.dilation[d] = rng.pick(&[1, 1, 1, 2, 3]);
            a.pads_begin[d] = rng.pick(&[0, 0, 1, 2, 4]);
            a.pads_end[d] = rng.pick(&[0, 0, 1, 3]);
        }
        a.groups = groups as u32;
        a.has_bias = rng.chance(0.5);
        Geometry { n, groups, cgi, cgo, input: vec![0; s], kernel, attrs: a }
    }

    /// Effective kernel extent of dim `d`.
    pub(super) fn extent(&self, d: usize) -> usize {
        self.attrs.dilation[d] * (self.kernel[d] - 1) + 1
    }

    /// The weight shape `[rows, per_row, *k]`.
    pub(super) fn weight(&self, rows: usize, per_row: usize) -> Vec<usize> {
        [rows, per_row].into_iter().chain(self.kernel.iter().copied()).collect()
    }

    /// `[N, c, *sp]`.
    pub(super) fn nc(&self, c: usize, sp: &[usize]) -> Vec<usize> {
        [self.n, c].into_iter().chain(sp.iter().copied()).collect()
    }

    /// Shrinks one size towards the caps: the batch first, then the largest spatial dim (never
    /// below `floor` for dim `d`), then the groups, and the channels per group last, so that a
    /// case keeps its [`Form`]'s channel layout; false when nothing can shrink.
    pub(super) fn shrink(&mut self, floor: impl Fn(&Geometry, usize) -> usize) -> bool {
        let spatial = (0..self.input.len()).filter(|&d| self.input[d] > floor(self, d)).max_by_key(|&d| self.input[d]);
        if self.n > 1 {
            self.n /= 2;
        } else if let Some(d) = spatial {
            self.input[d] = (self.input[d] / 2).max(floor(self, d));
        } else if self.groups > 1 {
            self.groups /= 2;
            self.attrs.groups = self.groups as u32;
        } else if self.cgi.max(self.cgo) > 1 {
            let c = if self.cgi >= self.cgo { &mut self.cgi } else { &mut self.cgo };
            *c /= 2;
        } else {
            return false;
        }
        true
    }
}

/// Operand values: mostly in [−1, 1], some up to 10; IEEE specials at the rate the case passes.
pub(super) fn operand_values() -> Values {
    Values::floats(FloatDomain::new(
        &[Piece::Uniform(-1.0, 1.0), Piece::Uniform(-1.0, 1.0), Piece::LogMag { lo: 1e-2, hi: 10.0, signed: true }],
        IEEE_SPECIALS,
    ))
}

/// Variants for `Conv`.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    if row != "Conv" {
        return None;
    }
    per_dtype(row, |dt| {
        (skeleton(0..=0, 1, 3), 0..Form::ALL.len()).prop_map(move |(sk, f)| conv_case(dt, &sk, Form::ALL[f])).boxed()
    })
}

/// Conv output size of dim `d`.
fn conv_out(g: &Geometry, d: usize) -> usize {
    let a = &g.attrs;
    (g.input[d] + a.pads_begin[d] + a.pads_end[d] - g.extent(d)) / a.stride[d] + 1
}

/// The smallest input size of dim `d` whose padded extent holds the kernel.
fn conv_floor(g: &Geometry, d: usize) -> usize {
    g.extent(d).saturating_sub(g.attrs.pads_begin[d] + g.attrs.pads_end[d])
}

/// Draws input sizes (sometimes 0 where the padding alone holds the kernel), then shrinks until
/// every tensor and the work fit the caps.
fn conv_geometry(rng: &mut Rng, form: Form) -> Geometry {
    let mut g = Geometry::draw(rng, form);
    for d in 0..g.input.len() {
        let want = rng.pick(&[0, 1, 2, 3, 5, 7, 9, 16, 17, 31]);
        g.input[d] = want.max(conv_floor(&g, d));
    }
    loop {
        let out: Vec<usize> = (0..g.input.len()).map(|d| conv_out(&g, d)).collect();
        let (cin, cout) = (g.groups * g.cgi, g.groups * g.cgo);
        let work = numel(&[g.n, cout, numel(&out), g.cgi.max(1), numel(&g.kernel)]);
        let fits = work <= WORK_CAP
            && numel(&g.nc(cin, &g.input)) <= MAX_NUMEL
            && numel(&g.nc(cout, &out)) <= MAX_NUMEL
            && numel(&g.weight(cout, g.cgi)) <= MAX_NUMEL;
        if fits || !g.shrink(conv_floor) {
            return g;
        }
    }
}

fn conv_case(dtype: DType, sk: &Skeleton, form: Form) -> Generated {
    let mut rng = sk.rng();
    let g = conv_geometry(&mut rng, form);
    let (cin, cout) = (g.groups * g.cgi, g.groups * g.cgo);
    let vals = operand_values();
    let rate = sk.rate / 10.0;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), vals.tensor(&mut rng, dtype, &g.nc(cin, &g.input), rate)?)?;
    let w = pb.leaf(sk.kind(1), vals.tensor(&mut rng, dtype, &g.weight(cout, g.cgi), rate)?)?;
    let bias = match g.attrs.has_bias {
        true => Some(pb.leaf(sk.kind(2), vals.tensor(&mut rng, dtype, &[cout], rate)?)?),
        false => None,
    };
    let y = pb.g().conv(x, w, bias, &g.attrs)?;
    pb.finish_with_magnitude(&[y], |gb, abs| {
        let b = if g.attrs.has_bias { Some(nth(abs, 2)?) } else { None };
        Ok(vec![gb.conv(nth(abs, 0)?, nth(abs, 1)?, b, &g.attrs)?])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forms keep their channel layouts after fitting the caps, and the caps hold.
    #[test]
    fn forms_keep_their_channel_layout_within_the_caps() {
        let mut seen_work = 0;
        for seed in 0..300u64 {
            let form = Form::ALL[seed as usize % 3];
            let g = conv_geometry(&mut Rng::new(seed), form);
            let out: Vec<usize> = (0..g.input.len()).map(|d| conv_out(&g, d)).collect();
            let work = numel(&[g.n, g.groups * g.cgo, numel(&out), g.cgi, numel(&g.kernel)]);
            assert!(work <= WORK_CAP, "{g:?}");
            seen_work = seen_work.max(work);
            match form {
                Form::Depthwise => assert!(g.cgi == 1 && g.cgo == 1, "{g:?}"),
                Form::Wide => assert!(g.cgi >= 16 && g.cgo >= 16, "{g:?}"),
                Form::General => {}
            }
        }
        assert!(seen_work > WORK_CAP / 8, "cases are all tiny: {seen_work}");
    }
}

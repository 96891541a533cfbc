//! Attributes of convolution, pooling, unfolding and nearest resize (§2.9).
//!
//! Stored per-dimension lists have exactly one entry per spatial dim `s = rank(x) − 2`. The builder
//! also accepts the shorthands of [`expand_list`]: an empty list (the spec's default) or a single
//! entry (the same value for every spatial dim).

use crate::{bail, Result};

/// Expands a per-dimension list to `s` entries: empty → `default` everywhere, one entry → that
/// entry everywhere, `s` entries → unchanged; any other length is an `Attribute` error.
pub fn expand_list(list: &[usize], s: usize, default: usize, what: &str) -> Result<Vec<usize>> {
    match list.len() {
        0 => Ok(vec![default; s]),
        1 => Ok(vec![list[0]; s]),
        n if n == s => Ok(list.to_vec()),
        n => bail!(Attribute, "{what} has {n} entries {list:?}, expected {s} (one per spatial dim) or 1"),
    }
}

/// `Conv` (§2.9.1). The kernel size comes from the weight's shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct ConvAttrs {
    /// Strides, each ≥ 1 (default all 1).
    pub stride: Vec<usize>,
    /// Dilations, each ≥ 1 (default all 1).
    pub dilation: Vec<usize>,
    /// Padding before each spatial dim (default all 0).
    pub pads_begin: Vec<usize>,
    /// Padding after each spatial dim (default all 0).
    pub pads_end: Vec<usize>,
    /// Groups `G` ≥ 1 (default 1).
    pub groups: u32,
    /// A `bias` input `[Cout]` follows `w` (default false).
    pub has_bias: bool,
}

impl Default for ConvAttrs {
    /// The spec's defaults in the builder's shorthand: empty lists (expanded to all 1 / all 0 by
    /// [`ConvAttrs::expand`]), one group, no bias.
    fn default() -> Self {
        ConvAttrs { stride: vec![], dilation: vec![], pads_begin: vec![], pads_end: vec![], groups: 1, has_bias: false }
    }
}

impl ConvAttrs {
    /// The canonical defaults for `s` spatial dims.
    pub fn new(s: usize) -> ConvAttrs {
        ConvAttrs {
            stride: vec![1; s],
            dilation: vec![1; s],
            pads_begin: vec![0; s],
            pads_end: vec![0; s],
            groups: 1,
            has_bias: false,
        }
    }

    /// These attributes with every list expanded to `s` entries ([`expand_list`]).
    pub fn expand(&self, s: usize) -> Result<ConvAttrs> {
        Ok(ConvAttrs {
            stride: expand_list(&self.stride, s, 1, "stride")?,
            dilation: expand_list(&self.dilation, s, 1, "dilation")?,
            pads_begin: expand_list(&self.pads_begin, s, 0, "pads_begin")?,
            pads_end: expand_list(&self.pads_end, s, 0, "pads_end")?,
            groups: self.groups,
            has_bias: self.has_bias,
        })
    }
}

/// `ConvTranspose` (§2.9.2): the `Conv` attributes plus `output_padding`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct ConvTransposeAttrs {
    /// Stride, dilation, pads, groups and bias flag, as `Conv`.
    pub conv: ConvAttrs,
    /// Extra output size per spatial dim, each `< max(stride_d, dilation_d)` (default all 0).
    pub output_padding: Vec<usize>,
}

impl ConvTransposeAttrs {
    /// These attributes with every list expanded to `s` entries ([`expand_list`]).
    pub fn expand(&self, s: usize) -> Result<ConvTransposeAttrs> {
        Ok(ConvTransposeAttrs {
            conv: self.conv.expand(s)?,
            output_padding: expand_list(&self.output_padding, s, 0, "output_padding")?,
        })
    }
}

/// The pooling function (§2.9.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum PoolKind {
    /// Maximum over the inside points (NaN propagating).
    Max,
    /// Average with the `count_include_pad` divisor rule.
    Avg,
}

/// `Pool` (§2.9.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct PoolAttrs {
    /// Max or Avg.
    pub kind: PoolKind,
    /// Window size per spatial dim, each ≥ 1.
    pub kernel: Vec<usize>,
    /// Strides, each ≥ 1 (no default).
    pub stride: Vec<usize>,
    /// Dilations, each ≥ 1 (default all 1).
    pub dilation: Vec<usize>,
    /// Padding before, each `< ke_d` (default all 0).
    pub pads_begin: Vec<usize>,
    /// Padding after, each `< ke_d` (default all 0).
    pub pads_end: Vec<usize>,
    /// Round the output size up (default false).
    pub ceil_mode: bool,
    /// `Avg` divides by the padded-extent count (default true).
    pub count_include_pad: bool,
}

impl PoolAttrs {
    /// `kind`, `kernel` and `stride` with the defaults for the rest (lists sized like `kernel`).
    pub fn new(kind: PoolKind, kernel: &[usize], stride: &[usize]) -> PoolAttrs {
        let s = kernel.len();
        PoolAttrs {
            kind,
            kernel: kernel.to_vec(),
            stride: stride.to_vec(),
            dilation: vec![1; s],
            pads_begin: vec![0; s],
            pads_end: vec![0; s],
            ceil_mode: false,
            count_include_pad: true,
        }
    }

    /// These attributes with every list expanded to `s` entries ([`expand_list`]; `kernel` and
    /// `stride` have no default, so an empty one stays an error for validation to report).
    pub fn expand(&self, s: usize) -> Result<PoolAttrs> {
        let required = |l: &[usize], what: &str| if l.is_empty() { Ok(vec![]) } else { expand_list(l, s, 1, what) };
        Ok(PoolAttrs {
            kind: self.kind,
            kernel: required(&self.kernel, "kernel")?,
            stride: required(&self.stride, "stride")?,
            dilation: expand_list(&self.dilation, s, 1, "dilation")?,
            pads_begin: expand_list(&self.pads_begin, s, 0, "pads_begin")?,
            pads_end: expand_list(&self.pads_end, s, 0, "pads_end")?,
            ceil_mode: self.ceil_mode,
            count_include_pad: self.count_include_pad,
        })
    }
}

/// `Im2Col` (§2.9.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct Im2ColAttrs {
    /// Window size per spatial dim, each ≥ 1.
    pub kernel: Vec<usize>,
    /// Strides, each ≥ 1 (default all 1).
    pub stride: Vec<usize>,
    /// Dilations, each ≥ 1 (default all 1).
    pub dilation: Vec<usize>,
    /// Padding before (default all 0).
    pub pads_begin: Vec<usize>,
    /// Padding after (default all 0).
    pub pads_end: Vec<usize>,
}

impl Im2ColAttrs {
    /// `kernel` with the defaults for the rest (lists sized like `kernel`).
    pub fn new(kernel: &[usize]) -> Im2ColAttrs {
        let s = kernel.len();
        Im2ColAttrs {
            kernel: kernel.to_vec(),
            stride: vec![1; s],
            dilation: vec![1; s],
            pads_begin: vec![0; s],
            pads_end: vec![0; s],
        }
    }

    /// These attributes with every list expanded to `s` entries ([`expand_list`]).
    pub fn expand(&self, s: usize) -> Result<Im2ColAttrs> {
        let kernel = if self.kernel.is_empty() { vec![] } else { expand_list(&self.kernel, s, 1, "kernel")? };
        Ok(Im2ColAttrs {
            kernel,
            stride: expand_list(&self.stride, s, 1, "stride")?,
            dilation: expand_list(&self.dilation, s, 1, "dilation")?,
            pads_begin: expand_list(&self.pads_begin, s, 0, "pads_begin")?,
            pads_end: expand_list(&self.pads_end, s, 0, "pads_end")?,
        })
    }
}

/// `ResizeNearest` (§2.9.5).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct ResizeNearestAttrs {
    /// Integer upsampling factor per spatial dim, each ≥ 1.
    pub scales: Vec<u32>,
}

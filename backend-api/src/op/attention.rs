//! Attributes of attention and rotary position embedding (§2.8).

/// How `q`, `k`, `v` and the output of `Attention` are laid out (§2.8.1). Always explicit: guessing
/// it from shapes is ambiguous when the sequence length equals the head count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AttnLayout {
    /// `[B, H, S, D]`.
    Bhsd,
    /// `[B, S, H, D]`.
    Bshd,
    /// `[B, S, H·D]`.
    BsPacked,
    /// `[B·H, S, D]`.
    FlatHeads,
}

/// The structural attention mask (§2.8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub enum MaskKind {
    /// Every key is allowed.
    None,
    /// Key `j` is allowed iff `j ≤ i + δ`.
    Causal,
    /// Key `j` is allowed iff `i + δ − window < j ≤ i + δ`.
    SlidingWindow {
        /// Number of keys ending at the diagonal, ≥ 1.
        window: u64,
    },
}

/// Where query 0 sits relative to the keys for the structural masks (§2.8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum MaskAlign {
    /// Queries aligned with the end of the keys (`δ = Sk − Sq`), as with a KV cache.
    End,
    /// Queries aligned with key 0 (`δ = 0`), as PyTorch's `is_causal`.
    Start,
}

/// `Attention` (§2.8.1).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct AttentionAttrs {
    /// Tensor layout.
    pub layout: AttnLayout,
    /// Query heads `Hq` ≥ 1.
    pub num_heads: u32,
    /// Key/value heads `Hkv` ≥ 1 dividing `Hq` (spec default `Hq`).
    pub num_kv_heads: u32,
    /// Structural mask (default `None`).
    pub mask: MaskKind,
    /// Mask alignment (default `End`).
    pub mask_align: MaskAlign,
    /// Logit scale; `None` means `1/√D`. Finite when present.
    #[cfg_attr(feature = "serde", serde(default, with = "crate::json::codec::opt_float32"))]
    pub scale: Option<f32>,
    /// Logit soft-cap `c`; finite and > 0 when present.
    #[cfg_attr(feature = "serde", serde(default, with = "crate::json::codec::opt_float32"))]
    pub softcap: Option<f32>,
    /// A Bool `keep_mask` input follows `v`.
    pub has_keep_mask: bool,
    /// An additive `bias` input follows (after `keep_mask` when present).
    pub has_bias: bool,
}

impl AttentionAttrs {
    /// `layout` and `num_heads` with every other attribute at its default (`Hkv = Hq`, no mask,
    /// `End` alignment, default scale, no soft-cap, no keep-mask or bias input).
    pub fn new(layout: AttnLayout, num_heads: u32) -> AttentionAttrs {
        AttentionAttrs {
            layout,
            num_heads,
            num_kv_heads: num_heads,
            mask: MaskKind::None,
            mask_align: MaskAlign::End,
            scale: None,
            softcap: None,
            has_keep_mask: false,
            has_bias: false,
        }
    }
}

/// Which input `AttentionBackward` differentiates with respect to (§2.8.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AttnGrad {
    /// `dq`, shape of `q`.
    Query,
    /// `dk`, shape of `k`.
    Key,
    /// `dv`, shape of `v`.
    Value,
}

/// `AttentionBackward` (§2.8.2): the forward op's attributes plus the gradient produced.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct AttentionBackwardAttrs {
    /// Every attribute of the forward `Attention`.
    pub forward: AttentionAttrs,
    /// The gradient produced.
    pub wrt: AttnGrad,
}

/// Which pairs of a head `Rope` rotates (§2.8.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum RopeStyle {
    /// Rotate the two halves of the rotary part (`u` with `u + R/2`).
    NeoX,
    /// Rotate adjacent pairs (`2m` with `2m + 1`).
    GptJ,
}

/// `Rope` and `RopeBackward` (§2.8.3–2.8.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct RopeAttrs {
    /// Head width `D` ≥ 2.
    pub head_dim: u32,
    /// Rotated width `R`: even, `0 ≤ R ≤ D` (spec default `D`).
    pub rotary_dim: u32,
    /// Pairing of the rotated elements (default `NeoX`).
    pub style: RopeStyle,
    /// Canonical position axis; never the last axis (builder default −2).
    pub seq_axis: usize,
}

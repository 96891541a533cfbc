//! Attribute structs of the ops outside the core set, one file per op family (§2.4–2.17).

mod attention;
mod control;
mod conv;
mod custom;
mod indexing;
mod linalg;
mod norm;
mod region;
mod sequence;
mod signal;
mod splat;

pub use attention::{
    AttentionAttrs, AttentionBackwardAttrs, AttnGrad, AttnLayout, MaskAlign, MaskKind, RopeAttrs, RopeStyle,
};
pub use control::{IfAttrs, WhileAttrs};
pub use conv::{expand_list, ConvAttrs, ConvTransposeAttrs, Im2ColAttrs, PoolAttrs, PoolKind, ResizeNearestAttrs};
pub use custom::CustomAttrs;
pub use indexing::{ArgReduceAttrs, CumsumAttrs, GatherAttrs, GatherBackwardAttrs, ScatterAddAttrs, TopKAttrs};
pub use linalg::{GroupedMatMulAttrs, QuantFormat, QuantMatMulAttrs};
pub use norm::{
    FusedResidualNormAttrs, GroupNormAttrs, LayerNorm2dAttrs, NormBackwardAttrs, NormGrad, SoftmaxCrossEntropyAttrs,
};
pub use region::{RegionAttrs, RegionInstr, RegionProgram, TransformRegionAttrs, MAX_REGION_INPUTS, MAX_REGION_INSTRS};
pub use sequence::{GatedDeltaNetAttrs, RecurrentAttrs, RnnNonlinearity, ScanAttrs, StateSpaceAttrs};
pub use signal::{
    FftAttrs, FftNorm, FloorScope, LogMelAttrs, RngBitsAttrs, RngNormalAttrs, RngUniformAttrs, SampleAttrs,
    WelchPeaksAttrs,
};
pub use splat::SplatAttrs;

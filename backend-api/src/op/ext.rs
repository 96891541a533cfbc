//! Attribute structs of the ops outside the core set. (Filled in by the IR-extension work.)
#![allow(missing_docs)]

macro_rules! stub { ($($n:ident),*) => { $(
    #[derive(Clone, Debug, PartialEq, Default)]
    pub struct $n {}
)* } }
stub!(GatherAttrs, ScatterAddAttrs, GatherBackwardAttrs, ArgReduceAttrs, TopKAttrs, CumsumAttrs,
    GroupedMatMulAttrs, QuantMatMulAttrs, SoftmaxCrossEntropyAttrs, GroupNormAttrs, LayerNorm2dAttrs,
    FusedResidualNormAttrs, AttentionAttrs, AttentionBackwardAttrs, RopeAttrs, ConvAttrs,
    ConvTransposeAttrs, PoolAttrs, Im2ColAttrs, ResizeNearestAttrs, RecurrentAttrs, StateSpaceAttrs,
    GatedDeltaNetAttrs, ScanAttrs, FftAttrs, LogMelAttrs, WelchPeaksAttrs, RngBitsAttrs,
    RngUniformAttrs, RngNormalAttrs, SampleAttrs, IfAttrs, WhileAttrs, RegionAttrs,
    TransformRegionAttrs, CustomAttrs, NormBackwardAttrs, SplatAttrs);

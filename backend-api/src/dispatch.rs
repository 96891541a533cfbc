//! [`dispatch_ops!`](crate::dispatch_ops): how a backend writes, once, which ops it implements.

/// Writes a backend's one exhaustive dispatch over a node's [`Op`](crate::Op) together with the
/// kinds it does not implement, and derives from that list the backend's predicate over
/// [`OpKind`](crate::OpKind): the list of what a backend implements is written once, as match arms
/// the compiler checks for exhaustiveness, and everything else (legalisation, `Capabilities::ops`)
/// asks the predicate.
///
/// ```
/// use backend_api::{Op, OpKind};
/// # fn lower_matmul() -> Result<u32, String> { Ok(1) }
/// backend_api::dispatch_ops! {
///     /// The dispatch: typed attributes go to each family.
///     fn lower(op: &Op) -> Result<u32, String> = match (op) {
///         Op::MatMul => lower_matmul(),
///         Op::Softmax { axis } => Ok(*axis as u32),
///     }
///     // Every other kind, each named once: the compiler rejects a kind that is in neither place.
///     missing => Err(format!("{} is not implemented", backend_api::spec::op_label(op))),
///     [Input, Param, Constant, Unary, Binary, Compare, Where, Fma, Cast, Reshape, Transpose, Narrow,
///      Concat, Expand, Reverse, Pad, Gather, ScatterAdd, GatherBackward, Reduce, ArgMax, ArgMin, TopK,
///      Cumsum, CumsumBackward, DotGeneral, FusedMatMulBiasAct, GroupedMatMul, QuantMatMul,
///      QuantGroupedMatMul, LogSoftmax, SoftmaxCrossEntropy, LayerNorm, RmsNorm, GroupNorm, LayerNorm2d,
///      FusedResidualLayerNorm, FusedResidualRmsNorm, Attention, AttentionBackward, Rope, RopeBackward,
///      Conv, ConvTranspose, Pool, Im2Col, ResizeNearest, Rnn, Gru, Lstm, SelectiveScan, Mamba2,
///      GatedDeltaNet, Scan, Fft, LogMel, WelchPeaks, RngBits, RngUniform, RngNormal, Sample, If, While,
///      ElementwiseRegion, BatchElementwiseRegion, TransformRegion, Custom, LayerNormBackward,
///      RmsNormBackward, SoftmaxCrossEntropyBackward, LogMelBackward;
///      // The Gaussian-splatting kinds exist only with backend-api's `splat` feature: listed
///      // after `splat:`, they count when the build has them, whatever the backend's features.
///      splat: GaussianSplatPrepare, GaussianSplatRasterize, GaussianSplatRender, GaussianSplatRenderBackward]
///     /// Whether `lower` implements a kind.
///     fn implements;
/// }
/// assert!(implements(OpKind::MatMul) && !implements(OpKind::Attention));
/// assert_eq!(lower(&Op::Softmax { axis: 2 }), Ok(2));
/// assert!(lower(&Op::Fma).is_err());
/// ```
#[macro_export]
macro_rules! dispatch_ops {
    (
        $(#[$fm:meta])*
        $fvis:vis fn $name:ident($($arg:ident : $aty:ty),* $(,)?) -> $ret:ty = match ($scrut:expr) { $($arms:tt)* }
        missing => $missing:expr,
        [$($k:ident),* $(,)? $(; splat: $($sk:ident),* $(,)?)?]
        $(#[$pm:meta])*
        $pvis:vis fn $pred:ident;
    ) => {
        $crate::__with_splat_kinds! {
            [$($k,)*] [$($($sk,)*)?]
            $(#[$fm])* $fvis fn $name($($arg: $aty),*) -> $ret = match ($scrut) { $($arms)* }
            missing => $missing, $(#[$pm])* $pvis fn $pred;
        }
    };
}

/// Hands [`dispatch_ops!`]'s expansion the kinds that exist in this build: the splat kinds only
/// with backend-api's `splat` feature. Defined by backend-api's features, not the caller's, so a
/// backend compiles whichever way a build unifies the feature.
#[cfg(feature = "splat")]
#[doc(hidden)]
#[macro_export]
macro_rules! __with_splat_kinds {
    ([$($k:ident,)*] [$($sk:ident,)*] $($rest:tt)*) => { $crate::__dispatch_ops! { [$($k,)* $($sk,)*] $($rest)* } };
}

/// See the `splat` version.
#[cfg(not(feature = "splat"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __with_splat_kinds {
    ([$($k:ident,)*] [$($sk:ident,)*] $($rest:tt)*) => { $crate::__dispatch_ops! { [$($k,)*] $($rest)* } };
}

/// The expansion of [`dispatch_ops!`] once the kinds that exist in this build are known.
#[doc(hidden)]
#[macro_export]
macro_rules! __dispatch_ops {
    (
        [$($k:ident,)*]
        $(#[$fm:meta])*
        $fvis:vis fn $name:ident($($arg:ident : $aty:ty),*) -> $ret:ty = match ($scrut:expr) { $($arms:tt)* }
        missing => $missing:expr,
        $(#[$pm:meta])*
        $pvis:vis fn $pred:ident;
    ) => {
        $(#[$fm])*
        $fvis fn $name($($arg: $aty),*) -> $ret {
            // A kind both matched and listed as missing is an unreachable-pattern warning.
            match $scrut {
                $($arms)*
                $($crate::Op::$k { .. } => $missing,)*
            }
        }

        $(#[$pm])*
        $pvis fn $pred(kind: $crate::OpKind) -> bool {
            // The generated complement of the `missing` list (the dispatch above is exhaustive).
            match kind {
                $($crate::OpKind::$k => false,)*
                #[allow(unreachable_patterns)]
                _ => true,
            }
        }
    };
}

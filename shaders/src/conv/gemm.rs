//! Conv (§2.9.1) as an implicit GEMM (`conv_gemm.wgsl`): the dense product kernels of
//! [`crate::linalg`] — the register-tiled scalar kernel (`linalg.wgsl`) or the element-pair
//! cooperative-matrix kernel (`linalg_coop.wgsl`) — with B read as the im2col of `x`, formed on
//! the fly by their `INDEX` slot, so no im2col buffer exists in device memory. A is `w` per group
//! read in place with K tap-major, the batch is (n, g), and the bias (per output channel) is
//! added by the product's epilogue. Sums are f32 for F32/F16/BF16 storage.

use crate::linalg::{product_module, CoopTile, Epilogue, GemmParams, Operands, Tile, Variant};
use crate::params::{Field, Layout, Params};
use backend_api::{bail, DType, Error, ErrorKind, Result};

/// The im2col addressing of `conv_gemm.wgsl` (and the bf16 pair unpacking of its tensor-core form).
pub const CONV_GEMM: &str = include_str!("../wgsl/conv_gemm.wgsl");
/// The non-finite weight test that gates the fast kernels of a convolution with padding taps.
pub const CONV_GEMM_CHECK: &str = include_str!("../wgsl/conv_gemm_check.wgsl");
/// Workgroups of the weight check at most (each writes one verdict slot the gate ORs).
pub const CHECK_WORKGROUPS: u32 = 1024;

crate::params! {
    /// `ConvCheckParams` of `conv_gemm_check.wgsl`.
    pub struct ConvCheckParams {
        /// Storage words of the weight.
        pub words: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
        /// Padding.
        pub pad2: u32,
    }
}

/// The weight check for dtype `d` (`conv_gemm_check.wgsl`): binding 1 the weight's words, 2 the
/// slots (one u32 per workgroup, at most [`CHECK_WORKGROUPS`]) each workgroup sets to 1 when it
/// found a NaN or ±∞ and to 0 otherwise. `Unsupported` for dtypes other than F32, F16 and BF16.
pub fn check_module(d: DType) -> Result<String> {
    let test = match d {
        DType::F32 => "(v & 0x7f800000u) == 0x7f800000u",
        DType::F16 => "(v & 0x7c00u) == 0x7c00u || (v & 0x7c000000u) == 0x7c000000u",
        DType::BF16 => "(v & 0x7f80u) == 0x7f80u || (v & 0x7f800000u) == 0x7f800000u",
        _ => bail!(Unsupported, "no implicit-GEMM convolution weight check for {d}"),
    };
    let body = crate::render(CONV_GEMM_CHECK, &[("NON_FINITE", test)])
        .map_err(|e| Error::new(ErrorKind::Device, format!("convolution weight check shader: {e}")))?;
    Ok(crate::module(&[crate::COMMON, &body]))
}

crate::params! {
    /// `ConvGeom` of `conv_gemm.wgsl`: the convolution's geometry, spatial lists padded to three
    /// dims with leading ones (see `ConvParams`).
    pub struct ConvGeom {
        /// Input spatial dims (D, H, W) and their product.
        pub in_sp: [u32; 4],
        /// Output H·W, H, W and D·H·W.
        pub out_sp: [u32; 4],
        /// Kernel kh·kw, kh, kw and kd·kh·kw (the taps of one input channel).
        pub taps: [u32; 4],
        /// Strides (fourth lane unused).
        pub stride: [u32; 4],
        /// Dilations (fourth lane unused).
        pub dilation: [u32; 4],
        /// Padding before each dim (fourth lane unused).
        pub pads: [u32; 4],
        /// Input channels per group (Cgi), then unused lanes.
        pub chan: [u32; 4],
    }
}

/// `ConvGemmParams` of the implicit-GEMM kernels: [`GemmParams`] (the product's sizes, batch
/// strides over (n, g) and bias strides) followed by the [`ConvGeom`] of B.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ConvGemmParams {
    /// The product's params, as the dense kernels read them.
    pub gemm: GemmParams,
    /// The im2col addressing of B.
    pub geom: ConvGeom,
}

/// GemmParams' fields, then `geom` (the WGSL struct is GemmParams' members plus `geom`).
const CONV_GEMM_FIELDS: [Field; 25] = {
    let g = GemmParams::LAYOUT.fields;
    let mut out = [Field { name: "geom", offset: 0, size: 0 }; 25];
    let mut i = 0;
    while i < g.len() && i < 24 {
        out[i] = g[i];
        i += 1;
    }
    out[24] = Field {
        name: "geom",
        offset: std::mem::offset_of!(ConvGemmParams, geom),
        size: std::mem::size_of::<ConvGeom>(),
    };
    out
};

// GemmParams gaining a field must grow CONV_GEMM_FIELDS too (checked at compile time).
const _: () = assert!(GemmParams::LAYOUT.fields.len() == 24);

impl Params for ConvGemmParams {
    const LAYOUT: Layout =
        Layout { name: "ConvGemmParams", size: std::mem::size_of::<ConvGemmParams>(), fields: &CONV_GEMM_FIELDS };
}

/// The staged presence of B's elements (1: inside x; 0: a padding tap or outside the matrix) that
/// the scalar kernel selects each product on.
const MASK_DECL: &str = "var<workgroup> sm: array<vec4<u32>, BK * SB>;\n";

/// Bytes of workgroup memory the scalar implicit-GEMM kernel of `t` declares for `d`: the dense
/// kernel's tiles and the presence mask of the B tile.
pub fn tiled_workgroup_bytes(t: Tile, d: DType) -> u64 {
    let s = t.shape(d);
    t.workgroup_bytes(d) + u64::from(s.bk) * u64::from(s.tn() / 4 + 1) * 16
}

/// Which product kernel computes the implicit GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GemmKernel {
    /// The register-tiled scalar kernel (F32, F16, BF16 storage; f32 sums).
    Tiled(Tile),
    /// The element-pair cooperative-matrix kernel (f16 fragments, f32 accumulators): F16
    /// operands exactly, BF16 operands rounded to f16 while staged.
    Coop(CoopTile),
}

/// The K step of kernel `k` for operands of dtype `d`: a convolution whose input channels per
/// group are a multiple of it may use the `aligned` module of [`gemm_module`].
pub fn k_step(k: GemmKernel, d: DType) -> u32 {
    match k {
        GemmKernel::Tiled(t) => t.shape(d).bk,
        GemmKernel::Coop(_) => crate::linalg::COOP_BK,
    }
}

/// The implicit-GEMM module of kernel `k` for operands of dtype `d`, with or without a bias.
/// `aligned`: the convolution's input channels per group are a multiple of [`k_step`], so each K
/// step lies in one kernel tap (addressed once per step); the lowering must not set it otherwise.
/// `masked`: padding taps are skipped per product (the scalar kernel only), so that a
/// non-finite weight never meets them; without it they are multiplied by zero, which is the same
/// sum for finite weights. Bindings: 0 [`ConvGemmParams`], 1 `w` (A), 2 `x` (B), then 3 the
/// bias (with one) and the output last, all of dtype `d`. `Unsupported` for dtypes other than
/// F32, F16 and BF16 (F16 and BF16 only for [`GemmKernel::Coop`], which is never masked) and
/// tiles that do not render.
pub fn gemm_module(k: GemmKernel, d: DType, bias: bool, masked: bool, aligned: bool) -> Result<String> {
    let ok = match k {
        GemmKernel::Tiled(_) => matches!(d, DType::F32 | DType::F16 | DType::BF16),
        GemmKernel::Coop(_) => matches!(d, DType::F16 | DType::BF16) && !masked,
    };
    if !ok {
        bail!(Unsupported, "no implicit-GEMM convolution kernel {k:?} for {d}");
    }
    let variant = match k {
        GemmKernel::Tiled(t) => Variant::Tiled(t),
        GemmKernel::Coop(t) => Variant::Coop(t),
    };
    let addressing = crate::render(CONV_GEMM, &[("K_ALIGNED", if aligned { "true" } else { "false" })])
        .map_err(|e| Error::new(ErrorKind::Device, format!("implicit-GEMM convolution addressing: {e}")))?;
    let index = if masked { format!("{addressing}\n{MASK_DECL}") } else { addressing };
    let ops = Operands {
        params: "ConvGemmParams",
        params_ext: "\n    geom: ConvGeom,",
        index: &index,
        unpack2: if d == DType::BF16 { "unpack2x_bf16" } else { "unpack2x16float" },
        mask_b: masked,
    };
    let epi = if bias { Epilogue::BiasAct(None) } else { Epilogue::Store };
    match product_module(d, variant, epi, &ops) {
        Some(Ok(src)) => Ok(src),
        Some(Err(e)) => Err(Error::new(ErrorKind::Device, format!("implicit-GEMM convolution shader: {e}"))),
        None => bail!(Unsupported, "the implicit-GEMM convolution kernel {k:?} does not render for {d}"),
    }
}

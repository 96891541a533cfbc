//! Attributes of the Gaussian-splatting ops (§2.17). The ops exist only with the `splat` feature;
//! the attribute struct is always compiled so that code naming it builds either way.

/// The union of the attributes of `GaussianSplatPrepare` and `GaussianSplatRasterize` (§2.17.1–
/// 2.17.2), shared by all four splat ops. Each op validates the attributes it reads.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct SplatAttrs {
    /// Image width `W` ≥ 1.
    pub width: u32,
    /// Image height `H` ≥ 1.
    pub height: u32,
    /// Prepare: spherical-harmonic degree 0–3 (default 3).
    pub sh_degree: u32,
    /// Prepare: radius multiplier, finite and > 0 (default 1).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float32"))]
    pub radius_scale: f32,
    /// Rasterize: tile edge `T` ≥ 1 pixels (default 16).
    pub tile_size: u32,
    /// Rasterize: skip contributions with alpha below this, in `[0, 1]` (default 1/255).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float32"))]
    pub alpha_cutoff: f32,
    /// Rasterize: alpha clamp, in `[0, 1]` (default 0.99).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float32"))]
    pub alpha_max: f32,
    /// Rasterize: stop once transmittance would fall below this, in `[0, 1]` (default 1e−4).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float32"))]
    pub transmittance_min: f32,
    /// Rasterize: capacity of the (Gaussian, tile) lists, ≥ 1; exceeding it is a run `Capacity`
    /// error.
    pub max_list_entries: u64,
}

impl SplatAttrs {
    /// The required attributes with every other at its default.
    pub fn new(width: u32, height: u32, max_list_entries: u64) -> SplatAttrs {
        SplatAttrs {
            width,
            height,
            sh_degree: 3,
            radius_scale: 1.0,
            tile_size: 16,
            alpha_cutoff: 1.0 / 255.0,
            alpha_max: 0.99,
            transmittance_min: 1e-4,
            max_list_entries,
        }
    }
}

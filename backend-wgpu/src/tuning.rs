//! Kernel-choice overrides ([`crate::WgpuOptions::tuning`]).
//!
//! The lowerings choose each kernel variant and its sizes from the shapes and the adapter's
//! capabilities. An override replaces one of those choices for every node it applies to: for
//! benchmarking the alternatives on a given GPU (`wgml bench --tune KEY=VALUE`) and for tests that
//! must reach a variant with small shapes. An override never makes a kernel accept what it cannot
//! compute exactly: where the forced variant does not apply to a node (dtype, layout, device
//! feature), that node keeps the automatic choice. `Tuning::default()` forces nothing.

use backend_api::{bail, Result};
use shaders::linalg::CoopShape;

/// Overrides of the automatic kernel choices; `None` everywhere (the default) lets the
/// lowerings decide. Set fields directly or by name with [`Tuning::set`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tuning {
    /// `compile.prune`: whether each kernel's WGSL is handed to wgpu without the functions its
    /// entry point never calls (default true); false hands wgpu the whole rendered module, to
    /// measure what leaving them out saves. The kernels compute the same either way.
    pub compile_prune: Option<bool>,
    /// `coop.tile`: the cooperative-matrix output tile (F16, and F32/BF16 under
    /// [`crate::MatmulPrecision::F16`]).
    pub coop_tile: Option<CoopShape>,
    /// `coop.stage`: how F16 operands are staged: `pairs` forces the element-pair kernel
    /// (`linalg_coop.wgsl`, any layout), `cvt` the vector-load kernel (`linalg_coop_vec.wgsl`,
    /// the automatic choice where the layout allows it).
    pub coop_stage: Option<CoopStageChoice>,
    /// `coop.bk`: K step of the vector-load cooperative kernels (32 or 64).
    pub coop_bk: Option<u32>,
    /// `coop.buffers`: staged K slices of the vector-load cooperative kernels (1 or 2).
    pub coop_buffers: Option<u32>,
    /// `coop.split`: K splits of a cooperative GEMM (1: none); fewer where a split would hold
    /// less than 16 k or the partial sums would exceed 32-bit indices.
    pub coop_split: Option<u32>,
    /// `gemv.ct`: column invocations of the N-contiguous GEMV kernel, output columns per
    /// workgroup of the K-contiguous one (a power of two, 1 to 64; 256 / ct lanes split K).
    pub gemv_ct: Option<u32>,
    /// `gemv.unroll`: 16-byte loads of the weights in flight per lane and iteration.
    pub gemv_unroll: Option<u32>,
    /// `gemv.subgroups`: lane sums by subgroup shuffles (where the device has subgroups) or by a
    /// tree in workgroup memory.
    pub gemv_subgroups: Option<bool>,
    /// `gemv.workgroups`: the workgroup count the GEMV kernels size their columns for.
    pub gemv_workgroups: Option<u32>,
    /// `gemv.kdot`: the K-contiguous kernel for `x · Wᵀ` weights (W `[N, K]`), or the per-element
    /// skinny kernel.
    pub gemv_kdot: Option<bool>,
    /// `gemv.split`: K ranges of the GEMV kernels (partial sums and a reduction kernel when
    /// more than 1), e.g. with a large `gemv.ct` so that each workgroup reads longer runs of
    /// every weight row.
    pub gemv_split: Option<u32>,
    /// `gemv.zero`: `1` zeroes F16/BF16 GEMV outputs first even where the kernels store whole
    /// words (which makes the zeroing pass unnecessary), to measure what leaving it out saves.
    pub gemv_zero: Option<bool>,
    /// `quant.columns`: output columns per lane group of the quantised GEMV kernel (each x
    /// vector a lane loads is reused for that many columns of W).
    pub quant_columns: Option<u32>,
    /// `gemm.vec`: `on` reads F32 operands of the tiled kernel as 16-byte vectors
    /// (`linalg_tiled_vec.wgsl`) wherever their layout makes every vector exact, large problems
    /// included (automatically only below the scale of 128 x 128 tiles, where it measured
    /// faster); `off` keeps the scalar tiled kernel (`linalg.wgsl`) everywhere.
    pub gemm_vec: Option<bool>,
    /// `gemm.tile`: output (rows, columns) of a tiled-kernel workgroup: 64x64, 128x64, 64x128 or
    /// 128x128 (the scalar kernel has the square ones only; F64 the small one only).
    pub gemm_tile: Option<(u32, u32)>,
    /// `gemm.bk`: K step of the vector-load tiled kernel: 8, 16 or 32 (8 only for 128x128 tiles,
    /// where every thread still stages whole vectors; each must fit the workgroup memory).
    pub gemm_bk: Option<u32>,
    /// `gemm.astage`: how the vector-load tiled kernel stages a K-contiguous A: `rows` as
    /// loaded (one 16-byte store per vector), `kmajor` transposed (four scalar stores per
    /// vector; the default).
    pub gemm_a_rows: Option<bool>,
    /// `gemm.prefetch`: `on` (the default) loads the vector-load tiled kernel's next K step
    /// into registers before the arithmetic; `off` after it (fewer live registers).
    pub gemm_prefetch: Option<bool>,
    /// `gemm.buffers`: staged copies of each tile in the vector-load tiled kernel: 2
    /// (double-buffered, one barrier per K step; the default) or 1 (half the workgroup memory,
    /// two barriers per K step).
    pub gemm_buffers: Option<u32>,
    /// `gemm.split`: K splits of the tiled kernels (1: none); fewer where a split would hold
    /// less than 16 k or the partial sums would exceed 32-bit indices.
    pub gemm_split: Option<u32>,
    /// `groupnorm.split`: `on` splits every GroupNorm group over several workgroups (partial
    /// moments, then merge and normalise), `off` keeps one workgroup per group wherever the
    /// group fits its registers (larger groups split either way).
    pub groupnorm_split: Option<bool>,
    /// `groupnorm.k`: elements per invocation of a split GroupNorm tile (tiles of k · 256).
    pub groupnorm_k: Option<u32>,
}

/// A forced staging of the cooperative-matrix kernels (`coop.stage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoopStageChoice {
    /// The element-pair kernel, any layout (`pairs`).
    Pairs,
    /// The vector-load kernel where the layout allows it (`cvt`).
    Cvt,
}

impl Tuning {
    /// The keys [`Tuning::set`] accepts, with the values each takes.
    pub const KEYS: &'static [(&'static str, &'static str)] = &[
        ("compile.prune", "true|false"),
        ("coop.tile", "small|mid|large|wide|huge"),
        ("coop.stage", "pairs|cvt"),
        ("coop.bk", "32|64"),
        ("coop.buffers", "1|2"),
        ("coop.split", "1..64"),
        ("gemv.ct", "1|2|4|8|16|32|64"),
        ("gemv.unroll", "1|2|4|8|16"),
        ("gemv.subgroups", "0|1"),
        ("gemv.workgroups", "1.."),
        ("gemv.kdot", "0|1"),
        ("gemv.split", "1..=64"),
        ("gemv.zero", "0|1"),
        ("quant.columns", "1|2|4|8"),
        ("gemm.vec", "on|off"),
        ("gemm.tile", "64x64|128x64|64x128|128x128"),
        ("gemm.bk", "8|16|32"),
        ("gemm.astage", "rows|kmajor"),
        ("gemm.buffers", "1|2"),
        ("gemm.prefetch", "on|off"),
        ("gemm.split", "1..=64"),
        ("groupnorm.split", "on|off"),
        ("groupnorm.k", "1|2|4|8|16|32"),
    ];

    /// Sets the override `key` from its text form (`wgml --tune KEY=VALUE`); an unknown key or a
    /// value out of range is an `Input` error listing what is accepted.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        match key {
            "compile.prune" => self.compile_prune = Some(parse_bool(key, value)?),
            "coop.tile" => self.coop_tile = Some(parse_coop_tile(value)?),
            "coop.stage" => self.coop_stage = Some(parse_coop_stage(value)?),
            "coop.bk" => self.coop_bk = Some(parse_u32(key, value, &[32, 64])?),
            "coop.buffers" => self.coop_buffers = Some(parse_u32(key, value, &[1, 2])?),
            "coop.split" => self.coop_split = Some(parse_range(key, value, 1..=64)?),
            "gemv.ct" => self.gemv_ct = Some(parse_u32(key, value, &[1, 2, 4, 8, 16, 32, 64])?),
            "gemv.unroll" => self.gemv_unroll = Some(parse_u32(key, value, &[1, 2, 4, 8, 16])?),
            "gemv.subgroups" => self.gemv_subgroups = Some(parse_bool(key, value)?),
            "gemv.workgroups" => self.gemv_workgroups = Some(parse_range(key, value, 1..=u32::MAX)?),
            "gemv.kdot" => self.gemv_kdot = Some(parse_bool(key, value)?),
            "gemv.split" => self.gemv_split = Some(parse_range(key, value, 1..=64)?),
            "gemv.zero" => self.gemv_zero = Some(parse_bool(key, value)?),
            "quant.columns" => self.quant_columns = Some(parse_u32(key, value, &[1, 2, 4, 8])?),
            "gemm.vec" => self.gemm_vec = Some(parse_bool(key, value)?),
            "gemm.tile" => self.gemm_tile = Some(parse_gemm_tile(value)?),
            "gemm.bk" => self.gemm_bk = Some(parse_u32(key, value, &[8, 16, 32])?),
            "gemm.astage" => {
                self.gemm_a_rows = Some(match value {
                    "rows" => true,
                    "kmajor" => false,
                    _ => bail!(Input, "tuning key \"gemm.astage\" takes rows or kmajor, got {value:?}"),
                })
            }
            "gemm.prefetch" => self.gemm_prefetch = Some(parse_bool(key, value)?),
            "gemm.buffers" => self.gemm_buffers = Some(parse_u32(key, value, &[1, 2])?),
            "gemm.split" => self.gemm_split = Some(parse_range(key, value, 1..=64)?),
            "groupnorm.split" => self.groupnorm_split = Some(parse_bool(key, value)?),
            "groupnorm.k" => self.groupnorm_k = Some(parse_u32(key, value, &[1, 2, 4, 8, 16, 32])?),
            _ => bail!(Input, "unknown tuning key {key:?}; known keys: {}", known_keys()),
        }
        Ok(())
    }

    /// Parses `KEY=VALUE` and sets it (see [`Tuning::set`]).
    pub fn set_pair(&mut self, pair: &str) -> Result<()> {
        match pair.split_once('=') {
            Some((k, v)) => self.set(k.trim(), v.trim()),
            None => bail!(Input, "a tuning override is KEY=VALUE, got {pair:?}; known keys: {}", known_keys()),
        }
    }
}

fn known_keys() -> String {
    Tuning::KEYS.iter().map(|(k, v)| format!("{k} ({v})")).collect::<Vec<_>>().join(", ")
}

fn parse_coop_tile(value: &str) -> Result<CoopShape> {
    Ok(match value {
        "small" => CoopShape::Small,
        "mid" => CoopShape::Mid,
        "large" => CoopShape::Large,
        "wide" => CoopShape::Wide,
        "huge" => CoopShape::Huge,
        _ => bail!(Input, "tuning key \"coop.tile\" takes small, mid, large, wide or huge, got {value:?}"),
    })
}

fn parse_coop_stage(value: &str) -> Result<CoopStageChoice> {
    Ok(match value {
        "pairs" => CoopStageChoice::Pairs,
        "cvt" => CoopStageChoice::Cvt,
        _ => bail!(Input, "tuning key \"coop.stage\" takes pairs or cvt, got {value:?}"),
    })
}

/// Parses an unsigned override value within `range`.
fn parse_range(key: &str, value: &str, range: std::ops::RangeInclusive<u32>) -> Result<u32> {
    match value.parse::<u32>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => bail!(Input, "tuning key {key:?} takes {} to {}, got {value:?}", range.start(), range.end()),
    }
}

/// Parses an unsigned override value, one of `allowed`.
pub(crate) fn parse_u32(key: &str, value: &str, allowed: &[u32]) -> Result<u32> {
    match value.parse::<u32>() {
        Ok(v) if allowed.contains(&v) => Ok(v),
        _ => bail!(Input, "tuning key {key:?} takes one of {allowed:?}, got {value:?}"),
    }
}

/// Parses a boolean override value (`true`/`false`, `on`/`off`, `1`/`0`).
pub(crate) fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value {
        "true" | "on" | "1" => Ok(true),
        "false" | "off" | "0" => Ok(false),
        _ => bail!(Input, "tuning key {key:?} takes true or false (on/off, 1/0), got {value:?}"),
    }
}

/// Parses a GEMM tile `ROWSxCOLUMNS`, each 64 or 128.
fn parse_gemm_tile(value: &str) -> Result<(u32, u32)> {
    let parsed = value.split_once('x').map(|(r, c)| (r.trim().parse::<u32>(), c.trim().parse::<u32>()));
    match parsed {
        Some((Ok(r @ (64 | 128)), Ok(c @ (64 | 128)))) => Ok((r, c)),
        _ => bail!(Input, "tuning key \"gemm.tile\" takes 64x64, 128x64, 64x128 or 128x128, got {value:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_and_malformed_pairs_are_input_errors() {
        let mut t = Tuning::default();
        let e = t.set_pair("no.such.key=1").unwrap_err();
        assert_eq!(e.kind(), backend_api::ErrorKind::Input, "{e}");
        assert!(e.to_string().contains("no.such.key"), "{e}");
        let e = t.set_pair("novalue").unwrap_err();
        assert!(e.to_string().contains("KEY=VALUE"), "{e}");
        assert_eq!(t, Tuning::default());
    }

    #[test]
    fn compile_keys_parse_booleans() {
        let mut t = Tuning::default();
        t.set_pair("compile.prune=false").unwrap();
        assert_eq!(t.compile_prune, Some(false));
        assert!(t.set_pair("compile.prune=maybe").is_err());
    }

    #[test]
    fn coop_keys_parse_and_reject_out_of_range_values() {
        let mut t = Tuning::default();
        for pair in ["coop.tile=wide", "coop.stage=pairs", "coop.bk=64", "coop.buffers=1", "coop.split=1"] {
            t.set_pair(pair).unwrap();
        }
        assert_eq!(t.coop_tile, Some(CoopShape::Wide));
        assert_eq!(t.coop_stage, Some(CoopStageChoice::Pairs));
        assert_eq!((t.coop_bk, t.coop_buffers, t.coop_split), (Some(64), Some(1), Some(1)));
        for bad in ["coop.tile=giant", "coop.stage=word", "coop.bk=48", "coop.buffers=3", "coop.split=0"] {
            assert_eq!(t.set_pair(bad).unwrap_err().kind(), backend_api::ErrorKind::Input, "{bad}");
        }
    }

    #[test]
    fn gemv_keys_parse_and_check_their_values() {
        let mut t = Tuning::default();
        t.set_pair("gemv.ct=8").unwrap();
        t.set_pair("gemv.unroll = 16").unwrap();
        t.set_pair("gemv.subgroups=0").unwrap();
        t.set_pair("gemv.workgroups=512").unwrap();
        t.set_pair("gemv.kdot=1").unwrap();
        t.set_pair("gemv.split=8").unwrap();
        t.set_pair("gemv.zero=1").unwrap();
        assert_eq!(
            (t.gemv_ct, t.gemv_unroll, t.gemv_subgroups, t.gemv_workgroups, t.gemv_kdot),
            (Some(8), Some(16), Some(false), Some(512), Some(true))
        );
        assert_eq!((t.gemv_split, t.gemv_zero), (Some(8), Some(true)));
        for bad in [
            "gemv.ct=3",
            "gemv.unroll=32",
            "gemv.subgroups=2",
            "gemv.workgroups=0",
            "gemv.kdot=x",
            "gemv.split=0",
            "gemv.zero=2",
        ] {
            assert!(t.set_pair(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn gemm_keys_parse_and_reject_bad_values() {
        let mut t = Tuning::default();
        for pair in [
            "gemm.vec=off",
            "gemm.tile=128x64",
            "gemm.bk=32",
            "gemm.buffers=1",
            "gemm.astage=rows",
            "gemm.prefetch=off",
            "gemm.split=3",
        ] {
            t.set_pair(pair).unwrap();
        }
        assert_eq!(
            (t.gemm_vec, t.gemm_tile, t.gemm_bk, t.gemm_buffers, t.gemm_a_rows, t.gemm_prefetch, t.gemm_split),
            (Some(false), Some((128, 64)), Some(32), Some(1), Some(true), Some(false), Some(3))
        );
        for bad in [
            "gemm.vec=maybe",
            "gemm.tile=96x64",
            "gemm.tile=128",
            "gemm.bk=12",
            "gemm.buffers=3",
            "gemm.split=0",
            "gemm.split=65",
        ] {
            let e = t.set_pair(bad).unwrap_err();
            assert_eq!(e.kind(), backend_api::ErrorKind::Input, "{bad}: {e}");
        }
    }

    #[test]
    fn groupnorm_keys_parse_and_reject_bad_values() {
        let mut t = Tuning::default();
        t.set_pair("groupnorm.split=on").unwrap();
        t.set_pair("groupnorm.k=2").unwrap();
        assert_eq!((t.groupnorm_split, t.groupnorm_k), (Some(true), Some(2)));
        for bad in ["groupnorm.split=2", "groupnorm.k=3", "groupnorm.k=64"] {
            assert!(t.set_pair(bad).is_err(), "{bad}");
        }
    }
}

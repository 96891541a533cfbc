//! Kernel-choice overrides ([`crate::WgpuOptions::tuning`]).
//!
//! The lowerings choose each kernel variant and its sizes from the shapes and the adapter's
//! capabilities. An override replaces one of those choices for every node it applies to: for
//! benchmarking the alternatives on a given GPU (`wgml bench --tune KEY=VALUE`) and for tests that
//! must reach a variant with small shapes. An override never makes a kernel accept what it cannot
//! compute exactly: where the forced variant does not apply to a node (dtype, layout, device
//! feature), that node keeps the automatic choice. `Tuning::default()` forces nothing.

use backend_api::{bail, Result};

/// Overrides of the automatic kernel choices; `None` everywhere (the default) lets the
/// lowerings decide. Set fields directly or by name with [`Tuning::set`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tuning {
    /// `gemm.vec`: `on` reads F32 operands of the tiled kernel as 16-byte vectors
    /// (`linalg_tiled_vec.wgsl`) wherever their layout makes every vector exact (the automatic
    /// choice); `off` keeps the scalar tiled kernel (`linalg.wgsl`) everywhere.
    pub gemm_vec: Option<bool>,
    /// `gemm.tile`: output (rows, columns) of a tiled-kernel workgroup: 64x64, 128x64, 64x128 or
    /// 128x128 (the scalar kernel has the square ones only; F64 the small one only).
    pub gemm_tile: Option<(u32, u32)>,
    /// `gemm.bk`: K step of the vector-load tiled kernel: 8, 16 or 32 (8 only for 128x128 tiles,
    /// where every thread still stages whole vectors; each must fit the workgroup memory).
    pub gemm_bk: Option<u32>,
    /// `gemm.split`: K splits of the tiled kernels (1: none); fewer where a split would hold
    /// less than 16 k or the partial sums would exceed 32-bit indices.
    pub gemm_split: Option<u32>,
}

impl Tuning {
    /// The keys [`Tuning::set`] accepts, with the values each takes.
    pub const KEYS: &'static [(&'static str, &'static str)] = &[
        ("gemm.vec", "on|off"),
        ("gemm.tile", "64x64|128x64|64x128|128x128"),
        ("gemm.bk", "8|16|32"),
        ("gemm.split", "1..=64"),
    ];

    /// Sets the override `key` from its text form (`wgml --tune KEY=VALUE`); an unknown key or a
    /// value out of range is an `Input` error listing what is accepted.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        match key {
            "gemm.vec" => self.gemm_vec = Some(parse_switch(key, value)?),
            "gemm.tile" => self.gemm_tile = Some(parse_gemm_tile(value)?),
            "gemm.bk" => self.gemm_bk = Some(parse_u32(key, value, &[8, 16, 32])?),
            "gemm.split" => self.gemm_split = Some(parse_u32(key, value, &(1..=64).collect::<Vec<_>>())?),
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
    if Tuning::KEYS.is_empty() {
        return "none".to_string();
    }
    Tuning::KEYS.iter().map(|(k, v)| format!("{k} ({v})")).collect::<Vec<_>>().join(", ")
}

/// Parses an unsigned override value, checking it against `allowed`.
#[allow(dead_code)]
pub(crate) fn parse_u32(key: &str, value: &str, allowed: &[u32]) -> Result<u32> {
    match value.parse::<u32>() {
        Ok(v) if allowed.is_empty() || allowed.contains(&v) => Ok(v),
        _ => bail!(Input, "tuning key {key:?} takes one of {allowed:?}, got {value:?}"),
    }
}

/// Parses `on`/`off` (also `true`/`false`, `1`/`0`).
fn parse_switch(key: &str, value: &str) -> Result<bool> {
    match value {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => bail!(Input, "tuning key {key:?} takes on or off, got {value:?}"),
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
    fn gemm_keys_parse_and_reject_bad_values() {
        let mut t = Tuning::default();
        for pair in ["gemm.vec=off", "gemm.tile=128x64", "gemm.bk=32", "gemm.split=3"] {
            t.set_pair(pair).unwrap();
        }
        assert_eq!(
            (t.gemm_vec, t.gemm_tile, t.gemm_bk, t.gemm_split),
            (Some(false), Some((128, 64)), Some(32), Some(3))
        );
        for bad in ["gemm.vec=maybe", "gemm.tile=96x64", "gemm.tile=128", "gemm.bk=12", "gemm.split=0", "gemm.split=65"]
        {
            let e = t.set_pair(bad).unwrap_err();
            assert_eq!(e.kind(), backend_api::ErrorKind::Input, "{bad}: {e}");
        }
    }
}

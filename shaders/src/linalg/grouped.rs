//! GroupedMatMul (§2.6.4) kernels: the grouping steps that sort rows by expert into a padded
//! layout of whole row tiles on the device (`linalg_grouped_common.wgsl` describes the layout),
//! and the grouped form of every GEMM variant, which runs a dense GEMM over the tiles as a batch
//! and reads each tile's weight offset from a buffer (`linalg_grouped_offsets.wgsl`).

use super::{module, Epilogue, Variant};
use crate::indexing::index_binding;
use crate::{module as join, render, COMMON};
use backend_api::DType;

crate::params! {
    /// `GroupParams` of `linalg_grouped_common.wgsl`.
    pub struct GroupParams {
        /// Rows of x (M).
        pub m: u32,
        /// Experts (E).
        pub e: u32,
        /// Rows per tile (P).
        pub rows_per_tile: u32,
        /// Tiles of the padded layout (T).
        pub tiles: u32,
        /// The unit of the tile table: elements of one expert's weight matrix (K · N) for
        /// GroupedMatMul's weight offsets, 1 for QuantGroupedMatMul's expert ids.
        pub expert_elems: u32,
        /// Rows of the padded layout (T · P).
        pub padded_rows: u32,
        /// Experts each invocation of the scan walks (ceil(E / 256)).
        pub chunk: u32,
        /// Padding.
        pub pad0: u32,
    }
}

crate::params! {
    /// `GroupRowsParams` of `linalg_grouped_rows.wgsl`.
    pub struct GroupRowsParams {
        /// Words of the output.
        pub words: u32,
        /// Words per row.
        pub row_words: u32,
        /// Rows of the source.
        pub src_rows: u32,
        /// Padding.
        pub pad0: u32,
    }
}

/// Params and the expert rule shared by the grouping kernels.
pub const GROUPED_COMMON: &str = include_str!("../wgsl/linalg_grouped_common.wgsl");
/// Step 1: per-expert counts and each row's slot.
pub const GROUPED_COUNT: &str = include_str!("../wgsl/linalg_grouped_count.wgsl");
/// Step 2: the first tile of each expert (one workgroup).
pub const GROUPED_SCAN: &str = include_str!("../wgsl/linalg_grouped_scan.wgsl");
/// Step 3: each tile's weight offset; every padded row marked empty.
pub const GROUPED_TILES: &str = include_str!("../wgsl/linalg_grouped_tiles.wgsl");
/// Step 4: each row's padded position and the source row of each used padded row.
pub const GROUPED_PLACE: &str = include_str!("../wgsl/linalg_grouped_place.wgsl");
/// Row moves of whole words through a row table.
pub const GROUPED_ROWS: &str = include_str!("../wgsl/linalg_grouped_rows.wgsl");
/// The batch offsets that make a dense GEMM kernel grouped.
pub const GROUPED_OFFSETS: &str = include_str!("../wgsl/linalg_grouped_offsets.wgsl");

/// Invocations of the scan workgroup (experts are walked in `ceil(E / 256)` chunks).
pub const SCAN_THREADS: u32 = 256;

/// Step 1 for expert ids of `index` dtype. Bindings: 1 ids, 2 counts (u32, zeroed), 3 slots.
pub fn count_module(index: DType) -> Result<String, String> {
    Ok(join(&[COMMON, GROUPED_COMMON, &index_binding(1, index)?, GROUPED_COUNT]))
}

/// Step 2. Bindings: 1 counts, 2 tile starts (E + 1 entries).
pub fn scan_module() -> String {
    join(&[COMMON, GROUPED_COMMON, GROUPED_SCAN])
}

/// Step 3. Bindings: 1 tile starts, 2 tile table (T: each tile's expert times
/// [`GroupParams::expert_elems`]), 3 source rows (T · P).
pub fn tiles_module() -> String {
    join(&[COMMON, GROUPED_COMMON, GROUPED_TILES])
}

/// Step 4 for expert ids of `index` dtype. Bindings: 1 ids, 2 tile starts, 3 slots, 4 padded
/// positions (M), 5 source rows (T · P).
pub fn place_module(index: DType) -> Result<String, String> {
    Ok(join(&[COMMON, GROUPED_COMMON, &index_binding(1, index)?, GROUPED_PLACE]))
}

/// Row moves of whole words. Bindings: 1 source rows, 2 row table (u32, `NONE` for a zero
/// row), 3 output rows.
pub fn rows_module() -> String {
    join(&[COMMON, GROUPED_ROWS])
}

/// Binding of the weight-offset table in a grouped GEMM kernel: after `a` (1), `b` (2) and the
/// output (3), which every variant binds with a plain store (no bias).
pub const TABLE_BINDING: u32 = 4;

/// The grouped form of GEMM `variant` for operands of dtype `d` writing `out` (`d`, or the
/// accumulator dtype for split-K partial sums), plain store: the dense kernel of [`module`]
/// whose batch offsets read each batch's weight offset from binding [`TABLE_BINDING`]. `None`
/// where the dense kernel does not exist.
pub fn grouped_module(d: DType, out: DType, variant: Variant) -> Option<Result<String, String>> {
    let dense = module(d, out, variant, Epilogue::Store)?;
    Some(dense.and_then(|src| {
        const DENSE: &str = "fn batch_offsets(";
        if src.matches(DENSE).count() != 1 {
            return Err(format!("the {variant:?} GEMM kernel does not define batch_offsets once"));
        }
        let offsets = render(GROUPED_OFFSETS, &[("BINDING", &TABLE_BINDING.to_string())])?;
        Ok(join(&[&src.replacen(DENSE, "fn dense_batch_offsets(", 1), &offsets]))
    }))
}

//! Variants of the linalg family (§2.6 MatMul, DotGeneral, FusedMatMulBiasAct):
//! - the tiled batched matrix product (`linalg.wgsl`), 64 x 64 or 128 x 128 output tiles, and
//!   its F32 form with 16-byte loads and double-buffered tiles for operands whose vectorised
//!   axis is contiguous (`linalg_tiled_vec.wgsl`, 64 or 128 rows by 64 or 128 columns);
//! - the tensor-core product for F16 (`linalg_coop.wgsl`): f16 cooperative matrices with f32
//!   accumulators, on devices that have them, and its vector-load, double-buffered form for
//!   operands stored in whole 16-byte rows (`linalg_coop_vec.wgsl`, which also rounds F32/BF16
//!   operands to f16 under the reduced-precision option);
//! - the skinny product for few rows (`linalg_skinny.wgsl`: batch-1 layers, GEMV), and its wide
//!   form reading an aligned N-contiguous B as 16-byte vectors (`linalg_gemv.wgsl`);
//! - the split-K reduction (`linalg_splitk.wgsl`) that adds the f32/f64 partial sums the product
//!   kernels write when K is split over several workgroups;
//! - the strided copy (`linalg_permute.wgsl`) that DotGeneral uses to reorder an operand;
//! - GroupedMatMul's grouping kernels and the grouped form of every product kernel
//!   ([`grouped`], `linalg_grouped_*.wgsl`).
//!
//! The product kernels and the reduction share `linalg_common.wgsl` (params [`GemmParams`], batch
//! addressing, epilogue). The epilogue either stores the dot product or adds the broadcast bias
//! and applies an activation expression of the elementwise family, in f32 (f64 for F64).

use crate::elementwise::{expr, ElemKind};
use crate::params::Params;
use crate::{module as join, reg_type, render, tensor_binding, trusted, Access, COMMON};
use backend_api::op::UnaryOp;
use backend_api::DType;

crate::params! {
    /// `GemmParams` of `linalg_common.wgsl`, bound by the product kernels and the split-K
    /// reduction. Element (β, r, c) of operand x is at `off_x(β) + r·x_rs + c·x_cs`, where
    /// `off_x(β)` decomposes the flat batch index over `bdims` with the strides `x_bs`.
    pub struct GemmParams {
        /// Rows of each output matrix.
        pub m: u32,
        /// Columns of each output matrix.
        pub n: u32,
        /// Contraction length.
        pub k: u32,
        /// Entries of `bdims` in use.
        pub batch_rank: u32,
        /// First row tile of this dispatch (grids split over several dispatches).
        pub tile_m0: u32,
        /// First column tile of this dispatch.
        pub tile_n0: u32,
        /// First flat (split, batch) index of this dispatch.
        pub batch0: u32,
        /// 1: consecutive threads load consecutive k of A; 0: consecutive rows.
        pub a_kfast: u32,
        /// Row stride of A.
        pub a_rs: u32,
        /// Column (k) stride of A.
        pub a_cs: u32,
        /// Row (k) stride of B.
        pub b_rs: u32,
        /// Column stride of B.
        pub b_cs: u32,
        /// Row stride of the bias (0 when broadcast).
        pub bias_rs: u32,
        /// Column stride of the bias.
        pub bias_cs: u32,
        /// 1: consecutive threads load consecutive columns of B; 0: consecutive k.
        pub b_nfast: u32,
        /// Batch matrices.
        pub nbatch: u32,
        /// K per split.
        pub kc: u32,
        /// K splits (1: no split-K).
        pub nsplit: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
        /// Batch dims (collapsed).
        pub bdims: [[u32; 4]; 2],
        /// Batch strides of A (elements).
        pub a_bs: [[u32; 4]; 2],
        /// Batch strides of B.
        pub b_bs: [[u32; 4]; 2],
        /// Batch strides of the bias.
        pub bias_bs: [[u32; 4]; 2],
    }
}

crate::params! {
    /// `DotPermuteParams` of `linalg_permute.wgsl`: `out[e] = x[Σ_d c_d · strides[d]]`, where
    /// `(c_d)` is the multi-index of `e` over `dims`.
    pub struct DotPermuteParams {
        /// Elements copied.
        pub n: u32,
        /// Entries of `dims` in use.
        pub rank: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
        /// Output dims (collapsed).
        pub dims: [[u32; 4]; 2],
        /// Input stride of the axis at each output position.
        pub strides: [[u32; 4]; 2],
    }
}

/// The params structs of this family (see [`mod@crate::params`]).
mod coop_code;
mod gemv_code;
pub mod grouped;
pub mod quant;
pub mod quant_gemm;
pub mod quant_vec;
mod tiled_code;
use coop_code::{CoopCode, Staging};
use gemv_code::GemvCode;
use tiled_code::{Unrolled, VecUnrolled};

pub const PARAMS: &[crate::params::Layout] = &[
    GemmParams::LAYOUT,
    DotPermuteParams::LAYOUT,
    <grouped::GroupParams as Params>::LAYOUT,
    <grouped::GroupRowsParams as Params>::LAYOUT,
    <quant::QuantParams as Params>::LAYOUT,
    <quant_vec::QuantVecParams as Params>::LAYOUT,
    <quant_gemm::QuantGemmParams as Params>::LAYOUT,
];

/// Params, batch addressing and epilogue shared by the kernels below.
pub const LINALG_COMMON: &str = include_str!("../wgsl/linalg_common.wgsl");
/// The tiled product template.
pub const TILED: &str = include_str!("../wgsl/linalg.wgsl");
/// The tiled product template with vector loads and double-buffered tiles (F32).
pub const TILED_VEC: &str = include_str!("../wgsl/linalg_tiled_vec.wgsl");
/// The cooperative-matrix (tensor-core) product template.
pub const COOP: &str = include_str!("../wgsl/linalg_coop.wgsl");
/// The cooperative-matrix product template with vector loads and double-buffered tiles.
pub const COOP_VEC: &str = include_str!("../wgsl/linalg_coop_vec.wgsl");
/// The skinny (few rows) product template.
pub const SKINNY: &str = include_str!("../wgsl/linalg_skinny.wgsl");
/// The wide skinny (GEMV) product template: vector loads of an N-contiguous B.
pub const GEMV: &str = include_str!("../wgsl/linalg_gemv.wgsl");
/// The wide skinny product template for a K-contiguous B (`x · Wᵀ`): dot products of rows.
pub const GEMV_DOT: &str = include_str!("../wgsl/linalg_gemv_dot.wgsl");
/// The split-K reduction template.
pub const SPLITK: &str = include_str!("../wgsl/linalg_splitk.wgsl");
/// The strided-copy template.
pub const PERMUTE: &str = include_str!("../wgsl/linalg_permute.wgsl");

/// Threads per workgroup along each output axis of the tiled kernel (16 x 16).
pub const THREADS_PER_AXIS: u32 = 16;
/// Output rows per workgroup of the skinny kernel.
pub const SKINNY_ROWS: u32 = 4;

/// Output tile of one workgroup of the tiled kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tile {
    /// 64 x 64 (4 x 4 per thread): small problems and F64.
    Small,
    /// 128 x 128 (8 x 8 per thread): large problems, twice the arithmetic per loaded byte.
    Large,
}

/// Concrete sizes of a tile for one dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileShape {
    /// Output rows per thread (multiple of 4).
    pub rm: u32,
    /// Output columns per thread (multiple of 4).
    pub rn: u32,
    /// K step staged in workgroup memory per iteration.
    pub bk: u32,
}

impl TileShape {
    /// Output rows of one workgroup.
    pub fn tm(&self) -> u32 {
        THREADS_PER_AXIS * self.rm
    }
    /// Output columns of one workgroup.
    pub fn tn(&self) -> u32 {
        THREADS_PER_AXIS * self.rn
    }
}

impl Tile {
    /// The sizes used for `d`. The K step is chosen so that both staged tiles fit the 16 KiB of
    /// workgroup memory every WebGPU device has (f64 halves it); BK = 8 for the large tile was
    /// also faster than 16 on an H200.
    pub fn shape(self, d: DType) -> TileShape {
        let wide = d == DType::F64;
        match self {
            Tile::Small => TileShape { rm: 4, rn: 4, bk: if wide { 8 } else { 16 } },
            Tile::Large => TileShape { rm: 8, rn: 8, bk: if wide { 4 } else { 8 } },
        }
    }

    /// Bytes of workgroup memory the kernel declares for `d`.
    pub fn workgroup_bytes(self, d: DType) -> u64 {
        let s = self.shape(d);
        let elem = if d == DType::F64 { 8 } else { 4 };
        let vec4s = s.bk * (s.tm() / 4 + 1) + s.bk * (s.tn() / 4 + 1);
        u64::from(vec4s) * 4 * elem
    }
}

/// Output tile of the cooperative-matrix kernels: the grid of subgroups and the block each
/// subgroup owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoopShape {
    /// 64 x 64: 2 x 2 subgroups of 32 x 32 (small problems, 16 KiB of workgroup memory).
    Small,
    /// 128 x 64: 2 x 2 subgroups of 64 x 32 (mid-sized problems without split-K).
    Mid,
    /// 128 x 128: 2 x 4 subgroups of 64 x 32.
    Large,
    /// 128 x 128: 2 x 2 subgroups of 64 x 64 (twice the products per fragment load).
    Wide,
    /// 128 x 256: 2 x 4 subgroups of 64 x 64.
    Huge,
}

impl CoopShape {
    /// Every shape.
    pub const ALL: [CoopShape; 5] =
        [CoopShape::Small, CoopShape::Mid, CoopShape::Large, CoopShape::Wide, CoopShape::Huge];

    /// (subgroup rows, subgroup columns, rows per subgroup, columns per subgroup).
    fn layout(self) -> (u32, u32, u32, u32) {
        match self {
            CoopShape::Small => (2, 2, 32, 32),
            CoopShape::Mid => (2, 2, 64, 32),
            CoopShape::Large => (2, 4, 64, 32),
            CoopShape::Wide => (2, 2, 64, 64),
            CoopShape::Huge => (2, 4, 64, 64),
        }
    }
}

/// The vector-load form of the tiled kernel (`linalg_tiled_vec.wgsl`, F32 only): its tile, K
/// step and which axis of each operand is read as 16-byte vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VecTile {
    /// Output rows per thread (4 or 8: tiles of 64 or 128 rows).
    pub rm: u32,
    /// Output columns per thread (4 or 8).
    pub rn: u32,
    /// K step staged per iteration (8, 16 or 32; every thread must stage whole vectors).
    pub bk: u32,
    /// A is read along K (K-contiguous A) rather than along rows (M-contiguous A).
    pub a_kfast: bool,
    /// B is read along columns (N-contiguous B) rather than along K (K-contiguous B).
    pub b_nfast: bool,
    /// A K-contiguous A is staged as loaded, rows of BK k (one 16-byte store per vector, read
    /// back as 4 k of a row), rather than transposed to k-major rows of the tile (four scalar
    /// stores per vector). Only with `a_kfast`.
    pub a_rows: bool,
    /// The next K step's vectors are loaded into registers before this step's arithmetic
    /// (hiding global latency) rather than after it (fewer registers live across it).
    pub prefetch: bool,
    /// Staged copies of each tile: 2 (double-buffered, one barrier per K step) or 1 (half the
    /// workgroup memory, so more resident workgroups per SM, for a second barrier per K step).
    pub buffers: u32,
}

impl VecTile {
    /// The tile sizes.
    pub fn shape(self) -> TileShape {
        TileShape { rm: self.rm, rn: self.rn, bk: self.bk }
    }

    /// Vectors of one staged A tile: BK rows of TM / 4 + 1 (padded) k-major, or TM rows of
    /// BK / 4 as loaded.
    fn a_vec4s(self) -> u32 {
        let s = self.shape();
        if self.a_rows {
            s.tm() * (s.bk / 4)
        } else {
            s.bk * (s.tm() / 4 + 1)
        }
    }

    /// Bytes of workgroup memory the kernel declares: both tiles, `buffers` times.
    pub fn workgroup_bytes(self) -> u64 {
        let s = self.shape();
        let vec4s = u64::from(self.a_vec4s()) + u64::from(s.bk) * u64::from(s.tn() / 4 + 1);
        u64::from(self.buffers) * vec4s * 16
    }

    /// Whether the kernel can be rendered: 4 or 8 outputs per thread along each axis, a K step
    /// of 8, 16 or 32, 1 or 2 buffers, A staged as loaded only when K-contiguous, and threads
    /// that each stage whole vectors of both tiles.
    pub fn renderable(self) -> bool {
        matches!(self.buffers, 1 | 2)
            && (self.a_kfast || !self.a_rows)
            && matches!(self.rm, 4 | 8)
            && matches!(self.rn, 4 | 8)
            && matches!(self.bk, 8 | 16 | 32)
            && VecUnrolled::new(self.shape()).is_some()
    }
}

/// Sizes of the cooperative-matrix kernel: `frag` x `frag` fragments (8 or 16, the sizes naga
/// writes), workgroups of subgroups of `subgroup` invocations laid out as `shape`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CoopTile {
    /// Fragment edge (the M = N = K of the device's f16 x f16 -> f32 configuration).
    pub frag: u32,
    /// Invocations per subgroup (the device must have this one subgroup size).
    pub subgroup: u32,
    /// Output tile and subgroup grid.
    pub shape: CoopShape,
}

/// K step of the element-pair cooperative-matrix kernel (a multiple of every fragment size).
pub const COOP_BK: u32 = 32;

impl CoopTile {
    /// (subgroup rows, subgroup columns, fragment rows per subgroup, fragment columns).
    fn grid(self) -> (u32, u32, u32, u32) {
        let f = self.frag.max(1);
        let (wm, wn, sm, sn) = self.shape.layout();
        (wm, wn, sm / f, sn / f)
    }

    /// Output (rows, columns) of one workgroup.
    pub fn block(self) -> (u32, u32) {
        let (wm, wn, fm, fn_) = self.grid();
        (wm * fm * self.frag, wn * fn_ * self.frag)
    }

    /// Invocations per workgroup.
    pub fn threads(self) -> u32 {
        let (wm, wn, _, _) = self.grid();
        wm * wn * self.subgroup
    }

    /// Bytes of workgroup memory the kernel declares: the f16 A and B tiles (rows padded by 8)
    /// and one f32 fragment per subgroup.
    pub fn workgroup_bytes(self) -> u64 {
        self.staged_bytes(COOP_BK, 1)
    }

    /// Bytes of workgroup memory of `nbuf` staged K slices of `bk` and the epilogue fragments.
    fn staged_bytes(self, bk: u32, nbuf: u32) -> u64 {
        let (wm, wn, _, _) = self.grid();
        let (tm, tn) = self.block();
        let halves = (u64::from(tm) * u64::from(bk + 8) + u64::from(bk) * u64::from(tn + 8)) * u64::from(nbuf);
        halves * 2 + self.epilogue_bytes(wm * wn)
    }

    /// One f32 fragment per subgroup.
    fn epilogue_bytes(self, subgroups: u32) -> u64 {
        u64::from(subgroups) * u64::from(self.frag) * u64::from(self.frag) * 4
    }

    /// Bytes of workgroup memory the vector-load kernel declares with the default K step: as
    /// [`CoopTile::workgroup_bytes`] with the A and B tiles `nbuf` times.
    pub fn vec_workgroup_bytes(self, nbuf: u32) -> u64 {
        self.staged_bytes(COOP_BK, nbuf)
    }

    /// Whether the vector-load kernels can be rendered with K step `bk`: [`CoopTile::renderable`],
    /// a K step of whole fragments and 8-element groups, and invocations that each stage a whole
    /// number of 8-element groups of both tiles.
    fn vec_renderable(self, bk: u32) -> bool {
        let (tm, tn) = self.block();
        let nt = self.threads();
        self.renderable()
            && bk > 0
            && bk.is_multiple_of(self.frag)
            && bk.is_multiple_of(8)
            && (tm * bk / 8).is_multiple_of(nt)
            && (tn * bk / 8).is_multiple_of(nt)
    }

    /// Whether the kernel can be rendered: a fragment size naga writes, and invocations that
    /// each stage a whole number of tile element pairs.
    fn renderable(self) -> bool {
        let (tm, tn) = self.block();
        let nt = self.threads();
        matches!(self.frag, 8 | 16)
            && self.subgroup.is_power_of_two()
            && nt > 0
            && (tm * COOP_BK / 2).is_multiple_of(nt)
            && (tn * COOP_BK / 2).is_multiple_of(nt)
    }
}

/// Which product kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// The tiled kernel.
    Tiled(Tile),
    /// The tiled kernel with vector loads and double-buffered tiles (`linalg_tiled_vec.wgsl`,
    /// F32 only).
    TiledVec(VecTile),
    /// The cooperative-matrix kernel (F16 only).
    Coop(CoopTile),
    /// The cooperative-matrix kernel with vector loads (`linalg_coop_vec.wgsl`): for a
    /// K-contiguous A and an N-contiguous B of whole 16-byte rows. F16, and F32/BF16 rounded to
    /// f16 while staged (the reduced-precision option).
    CoopVec(CoopVecTile),
    /// The skinny kernel; `nfast` when B is read along columns (N-contiguous B), else along K.
    Skinny {
        /// Consecutive threads on consecutive columns (64 columns x 4 K lanes per workgroup)
        /// rather than on consecutive k (4 columns x 64 K lanes).
        nfast: bool,
    },
    /// The wide skinny kernel (`linalg_gemv.wgsl`): 16-byte vector loads of an N-contiguous,
    /// vector-aligned B (F32, F16, BF16).
    Gemv(GemvTile),
}

/// The vector-load cooperative-matrix kernel's tile, K step and buffering. Operands are loaded
/// as 16-byte vectors and staged element by element, converted to f16, into f16 workgroup tiles
/// (F16 halves go through f32, as naga has no `u32` -> `vec2<f16>` bitcast).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CoopVecTile {
    /// Fragments, subgroups and output tile.
    pub tile: CoopTile,
    /// Two staged K slices (one barrier per step) rather than one (two barriers).
    pub double_buffer: bool,
    /// K step (32 or 64).
    pub bk: u32,
}

impl CoopVecTile {
    /// The kernel of `tile` with K step [`COOP_BK`], double-buffered or not.
    pub fn cvt(tile: CoopTile, double_buffer: bool) -> CoopVecTile {
        CoopVecTile { tile, double_buffer, bk: COOP_BK }
    }

    /// Staged K slices.
    pub fn nbuf(self) -> u32 {
        if self.double_buffer {
            2
        } else {
            1
        }
    }

    /// Bytes of workgroup memory the kernel declares.
    pub fn workgroup_bytes(self) -> u64 {
        self.tile.staged_bytes(self.bk, self.nbuf())
    }

    /// Whether the kernel can be rendered for operands of dtype `d`: F16, or F32/BF16 rounded
    /// to f16 while staged (the reduced-precision option), and a K step of whole fragments that
    /// every invocation stages in whole 8-element groups.
    pub fn renderable(self, d: DType) -> bool {
        cvt8(d).is_some() && self.tile.vec_renderable(self.bk)
    }
}

/// Shape of the wide skinny kernels' workgroup (256 invocations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemvTile {
    /// Column invocations (a power of two, 1 to 64); the other 256 / `ct` lanes split K. With
    /// `kdot`: output columns per workgroup, each a dot product over 256 / `ct` lanes.
    pub ct: u32,
    /// Output rows per workgroup (1, 2 or 4).
    pub rows: u32,
    /// Independent 16-byte loads of B in flight per lane and main-loop iteration (1, 2, 4, 8
    /// or 16).
    pub unroll: u32,
    /// Lane sums added with subgroup shuffles, then across subgroups in workgroup memory (the
    /// device needs SUBGROUP), rather than by a tree in workgroup memory.
    pub subgroups: bool,
    /// B K-contiguous (`x · Wᵀ` with W stored `[N, K]`): `linalg_gemv_dot.wgsl`, each output
    /// a dot product of a contiguous row of W; otherwise B is N-contiguous (`linalg_gemv.wgsl`).
    pub kdot: bool,
    /// With `kdot` and F16/BF16: A is K-contiguous and each (row, even k) element starts a
    /// 32-bit word, so A is read two elements per word with one conversion of the pair (the
    /// lowering checks the layout); otherwise one element per load.
    pub apairs: bool,
}

impl GemvTile {
    /// `ct` columns and `rows` rows, N-contiguous B, the default unroll (8 loads in flight
    /// for one row, 4 when the A values of several rows take registers too), no subgroups.
    pub fn new(ct: u32, rows: u32) -> GemvTile {
        GemvTile { ct, rows, unroll: if rows == 1 { 8 } else { 4 }, subgroups: false, kdot: false, apairs: false }
    }

    /// Whether the kernel stores every output through whole 32-bit words when the output is
    /// F16/BF16, N is even and the output starts on a word boundary: each storing invocation
    /// then writes an even number of consecutive columns from an even one (`store_pair`), so
    /// no word is shared between invocations and the output needs no zeroing first. The
    /// N-contiguous kernel always does (CW = 8 columns per invocation); the K-contiguous one
    /// pairs columns c, c + 1 of a workgroup, which needs `ct` >= 2.
    pub fn whole_words(self) -> bool {
        !self.kdot || self.ct >= 2
    }
}

/// Invocations per workgroup of the wide skinny kernel.
pub const GEMV_THREADS: u32 = 256;

/// Columns one invocation of the wide skinny kernel owns for `d` (one 16-byte vector of B):
/// 4 for F32, 8 for F16 and BF16; `None` for other dtypes.
pub fn gemv_columns(d: DType) -> Option<u32> {
    match d {
        DType::F32 => Some(4),
        DType::F16 | DType::BF16 => Some(8),
        _ => None,
    }
}

impl GemvTile {
    /// Whether the kernel can be rendered for `d`.
    fn renderable(self, d: DType) -> bool {
        gemv_columns(d).is_some()
            && self.ct.is_power_of_two()
            && self.ct <= 64
            && matches!(self.rows, 1 | 2 | 4)
            && matches!(self.unroll, 1 | 2 | 4 | 8 | 16)
    }
}

impl Variant {
    /// Output (rows, columns) one workgroup covers.
    pub fn block(self, d: DType) -> (u32, u32) {
        match self {
            Variant::Tiled(t) => (t.shape(d).tm(), t.shape(d).tn()),
            Variant::TiledVec(t) => (t.shape().tm(), t.shape().tn()),
            Variant::Coop(t) => t.block(),
            Variant::CoopVec(t) => t.tile.block(),
            Variant::Skinny { nfast } => (SKINNY_ROWS, if nfast { 64 } else { 4 }),
            Variant::Gemv(t) if t.kdot => (t.rows, t.ct),
            Variant::Gemv(t) => (t.rows, t.ct * gemv_columns(d).unwrap_or(1)),
        }
    }
}

/// How the tiled and element-pair cooperative kernels (`linalg.wgsl`, `linalg_coop.wgsl`) see
/// their params, A and B: the dense strided matrices of [`GemmParams`] ([`Operands::DENSE`]), or
/// another formulation read through a params struct extended with its members (a convolution's
/// weight and the implicit im2col of its input, `shaders::conv::gemm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operands<'a> {
    /// Name of the params struct at binding 0 (`GemmParams`, or one that extends it).
    pub params: &'a str,
    /// Members appended to the params struct (each line starting with a newline); empty for
    /// `GemmParams`.
    pub params_ext: &'a str,
    /// The WGSL of the operands' addressing, with any module-scope declarations it needs:
    /// `alias KStep` and `fn k_step(k0) -> KStep` (what the addressing of the K step starting at
    /// k0 shares, computed once per step), `fn index_a(base, row0, ks: KStep, kend, c) -> u32`
    /// (element index of A's (row0 + c.x, k0 + c.y) or `NONE`), `alias BCol` and `fn b_col(col0,
    /// j) -> BCol` (what B's addressing needs of column col0 + j, computed once per invocation),
    /// `fn index_b(base, bc: BCol, ks: KStep, kend, dk) -> u32` (element index of B's (k0 + dk,
    /// that column) or `NONE`) and `fn b_nfast() -> bool` (whether B's columns are its fast
    /// axis).
    pub index: &'a str,
    /// The function unpacking a pair word of B (and A) to `vec2<f32>` in the cooperative kernel:
    /// `unpack2x16float` for F16 operands.
    pub unpack2: &'a str,
    /// The scalar tiled kernel skips products with an absent B element (`NONE`) instead of
    /// multiplying them by zero, staging B's presence in `sm`, which `index_b`'s code declares
    /// as `var<workgroup> sm: array<vec4<u32>, BK * SB>`.
    pub mask_b: bool,
}

impl Operands<'static> {
    /// The dense strided operands of MatMul, DotGeneral and FusedMatMulBiasAct.
    pub const DENSE: Operands<'static> = Operands {
        params: "GemmParams",
        params_ext: "",
        index: DENSE_INDEX,
        unpack2: "unpack2x16float",
        mask_b: false,
    };
}

/// `index_a` and `index_b` of the dense kernels: A and B read through their row and column strides.
const DENSE_INDEX: &str = "alias KStep = u32;

fn k_step(k0: u32) -> KStep {
    return k0;
}

fn index_a(base: u32, row0: u32, k0: KStep, kend: u32, c: vec2<u32>) -> u32 {
    let gi = row0 + c.x;
    let gk = k0 + c.y;
    return select(NONE, base + gi * p.a_rs + gk * p.a_cs, gi < p.m && gk < kend);
}

alias BCol = u32;

fn b_col(col0: u32, j: u32) -> BCol {
    return col0 + j;
}

fn index_b(base: u32, gj: BCol, k0: KStep, kend: u32, dk: u32) -> u32 {
    let gk = k0 + dk;
    return select(NONE, base + gk * p.b_rs + gj * p.b_cs, gj < p.n && gk < kend);
}

fn b_nfast() -> bool {
    return p.b_nfast != 0u;
}";

/// Renders the tiled ([`Variant::Tiled`]) or element-pair cooperative ([`Variant::Coop`])
/// product kernel with operands `ops` (output dtype `d`, no split-K). Bindings as [`module`].
/// The cooperative kernel takes F16 operands, and BF16 ones when `ops.unpack2` unpacks bf16
/// pairs (rounded to f16 while staged). `None` for other variants, dtypes or unrenderable tiles.
pub fn product_module(d: DType, variant: Variant, epi: Epilogue, ops: &Operands<'_>) -> Option<Result<String, String>> {
    if !is_float(d) {
        return None;
    }
    match variant {
        Variant::Tiled(tile) => tiled_module(d, d, tile, epi, ops),
        Variant::Coop(t) => {
            if !matches!(d, DType::F16 | DType::BF16) || !t.renderable() {
                return None;
            }
            coop_module(d, d, epi, CoopVecTile::cvt(t, false), Staging::Pairs, ops)
        }
        Variant::TiledVec(_) | Variant::CoopVec(_) | Variant::Skinny { .. } | Variant::Gemv(_) => None,
    }
}

/// What the kernel does with each dot product before storing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Epilogue {
    /// Store it (MatMul, DotGeneral, split-K partial sums).
    Store,
    /// Add the broadcast bias, then apply the activation if any (FusedMatMulBiasAct).
    BiasAct(Option<UnaryOp>),
}

fn is_float(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F16 | DType::BF16 | DType::F64)
}

/// The dtype dot products of `d` accumulate in, and of split-K partial sums.
pub fn acc_dtype(d: DType) -> DType {
    if d == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// The body of `finish(bi, v) -> R`; `None` when the activation has no GPU expression for `d`.
fn finish_body(d: DType, epi: Epilogue) -> Option<String> {
    Some(match epi {
        Epilogue::Store => "return v;".to_string(),
        Epilogue::BiasAct(act) => {
            let e = match act {
                Some(op) => expr(ElemKind::Unary(op), &[d], d)?,
                None => "a".to_string(),
            };
            format!("let a = v + ld_bias(bi);\n    return {e};")
        }
    })
}

/// The body of `store_pair(o, x, y)`: one whole-word store for packed 2-byte outputs (the word
/// belongs to this invocation alone, so no read-modify-write is needed), else two stores.
pub(crate) fn store_pair_body(out: DType) -> &'static str {
    match out {
        DType::F16 => "atomicStore(&out[o >> 1u], f32_to_f16_bits(x) | (f32_to_f16_bits(y) << 16u));",
        DType::BF16 => "atomicStore(&out[o >> 1u], f32_to_bf16_bits(x) | (f32_to_bf16_bits(y) << 16u));",
        _ => "st_out(o, x);\n    st_out(o + 1u, y);",
    }
}

/// Helper libraries: the activation expressions use the elementwise family's maths.
fn helpers(d: DType) -> Vec<&'static str> {
    crate::elementwise::maths(d == DType::F64, d == DType::F64)
}

/// Renders the common part and one kernel template into a complete module, after `prelude`
/// (enable directives, which must precede every declaration).
fn assemble(
    prelude: &str,
    d: DType,
    out: DType,
    inputs: &[(&str, DType)],
    epi: Epilogue,
    kernel: &str,
    slots: &[(&str, &str)],
) -> Option<Result<String, String>> {
    assemble_with(prelude, d, out, inputs, epi, kernel, slots, &Operands::DENSE)
}

/// [`assemble`] with the params struct of `ops`.
#[allow(clippy::too_many_arguments)]
fn assemble_with(
    prelude: &str,
    d: DType,
    out: DType,
    inputs: &[(&str, DType)],
    epi: Epilogue,
    kernel: &str,
    slots: &[(&str, &str)],
    ops: &Operands<'_>,
) -> Option<Result<String, String>> {
    let finish = finish_body(d, epi)?;
    let mut tensors = String::new();
    for (k, (name, dt)) in inputs.iter().enumerate() {
        // An empty name holds the binding number of an operand the kernel declares itself.
        if !name.is_empty() {
            tensors += &tensor_binding(name, 1 + k as u32, *dt, Access::Read);
        }
    }
    if let Epilogue::BiasAct(_) = epi {
        tensors += &tensor_binding("bias", 1 + inputs.len() as u32, d, Access::Read);
    }
    let out_binding = 1 + inputs.len() as u32 + u32::from(matches!(epi, Epilogue::BiasAct(_)));
    tensors += &tensor_binding("out", out_binding, out, Access::Write);
    let common_slots = [
        ("REG", reg_type(d)),
        ("TENSORS", tensors.as_str()),
        ("FINISH", finish.as_str()),
        ("STORE_PAIR", store_pair_body(out)),
        ("PARAMS", ops.params),
        ("PARAMS_EXT", ops.params_ext),
    ];
    let rendered = render(LINALG_COMMON, &common_slots).and_then(|c| render(kernel, slots).map(|k| (c, k)));
    Some(rendered.map(|(c, k)| {
        let m = prelude.to_string() + &join(&[&helpers(d)[..], &[c.as_str(), k.as_str()]].concat());
        if trusted_epilogue(epi) {
            trusted(&m)
        } else {
            m
        }
    }))
}

/// Whether kernels with epilogue `epi` are built without runtime checks (see
/// [`crate::TRUSTED_HEADER`]). The product and reduction kernels index only in bounds by
/// construction (see `linalg_common.wgsl`); of the activations, those of common layers whose
/// maths helpers were reviewed for it: fixed-count loops and no dynamically indexed arrays.
pub fn trusted_epilogue(epi: Epilogue) -> bool {
    match epi {
        Epilogue::Store | Epilogue::BiasAct(None) => true,
        Epilogue::BiasAct(Some(op)) => matches!(
            op,
            UnaryOp::Relu | UnaryOp::Sigmoid | UnaryOp::Tanh | UnaryOp::Gelu | UnaryOp::GeluApprox | UnaryOp::Silu
        ),
    }
}

/// Renders one product kernel. Bindings: 1 = a, 2 = b, then (3 = bias for
/// [`Epilogue::BiasAct`]), then the output, of dtype `out`: `d`, or [`acc_dtype`]`(d)` for the
/// split-K partial sums (with [`Epilogue::Store`]). `None` when `d` is not a float dtype or the
/// activation has no GPU expression for `d` yet.
pub fn module(d: DType, out: DType, variant: Variant, epi: Epilogue) -> Option<Result<String, String>> {
    if !is_float(d) || !(out == d || out == acc_dtype(d)) {
        return None;
    }
    let inputs = [("a", d), ("b", d)];
    let dense = &Operands::DENSE;
    match variant {
        Variant::Tiled(tile) => tiled_module(d, out, tile, epi, dense),
        Variant::TiledVec(t) => tiled_vec_module(d, out, t, epi),
        Variant::Coop(t) => {
            if d != DType::F16 || !t.renderable() {
                return None;
            }
            coop_module(d, out, epi, CoopVecTile::cvt(t, false), Staging::Pairs, dense)
        }
        Variant::CoopVec(v) => {
            if !v.renderable(d) {
                return None;
            }
            coop_module(d, out, epi, v, Staging::Cvt, dense)
        }
        Variant::Skinny { nfast } => {
            let raw = raw_access(d);
            let slots = [
                ("TNS", if nfast { "64" } else { "4" }),
                ("NFAST", if nfast { "true" } else { "false" }),
                ("RAW", raw.as_str()),
            ];
            assemble("", d, out, &inputs, epi, SKINNY, &slots)
        }
        Variant::Gemv(t) => {
            if !t.renderable(d) {
                return None;
            }
            let code = GemvCode::new(t, d)?;
            let slots = code.slots(raw_a_access(d));
            let slots: Vec<(&str, &str)> = slots.iter().map(|(k, v)| (*k, v.as_str())).collect();
            // B is declared by the template as an array of vectors: only A goes through the
            // common bindings, and the bias and output keep their binding numbers.
            let template = if t.kdot { GEMV_DOT } else { GEMV };
            assemble("", d, out, &[("a", d), ("", d)], epi, template, &slots)
        }
    }
}

/// Renders the scalar tiled kernel (`linalg.wgsl`) of `tile` with operands `ops`.
fn tiled_module(d: DType, out: DType, tile: Tile, epi: Epilogue, ops: &Operands<'_>) -> Option<Result<String, String>> {
    let s = tile.shape(d);
    let (rm, rn, bk) = (s.rm.to_string(), s.rn.to_string(), s.bk.to_string());
    let code = if ops.mask_b { Unrolled::masked(s) } else { Unrolled::new(s) };
    let raw = raw_access(d);
    let slots = [
        ("RM", rm.as_str()),
        ("RN", rn.as_str()),
        ("BK", bk.as_str()),
        ("RAW", raw.as_str()),
        ("INDEX", ops.index),
        ("DECLS", &code.decls()),
        ("LOAD", &code.load()),
        ("STAGE", &code.stage()),
        ("COMPUTE", &code.compute()),
        ("STORE", &code.store()),
    ];
    assemble_with("", d, out, &[("a", d), ("b", d)], epi, TILED, &slots, ops)
}

/// Renders a cooperative-matrix kernel: `v`'s tile, K step and buffers with the template and
/// generated code of `staging`.
fn coop_module(
    d: DType,
    out: DType,
    epi: Epilogue,
    v: CoopVecTile,
    staging: Staging,
    ops: &Operands<'_>,
) -> Option<Result<String, String>> {
    let t = v.tile;
    let code = CoopCode::new(t, staging, v.bk);
    let (wm, wn, fm, fn_) = t.grid();
    let num = |x: u32| x.to_string();
    let mut slots = vec![
        ("F", num(t.frag)),
        ("WM", num(wm)),
        ("WN", num(wn)),
        ("FM", num(fm)),
        ("FN", num(fn_)),
        ("BK", num(v.bk)),
        ("SG", num(t.subgroup)),
        ("DECLS", code.decls()),
        ("LOAD", code.load()),
        ("STAGE", code.stage()),
        ("COMPUTE", code.compute()),
        ("STORE", code.store()),
    ];
    if staging == Staging::Pairs {
        slots.extend([("INDEX", ops.index.to_string()), ("UNPACK2", ops.unpack2.to_string())]);
    }
    if staging == Staging::Cvt {
        let (raw8, load8, halves) = cvt8(d)?;
        slots.extend([
            ("NBUF", num(v.nbuf())),
            ("RAW8", raw8.to_string()),
            ("LOAD8", load8.to_string()),
            ("HALVES", halves.to_string()),
        ]);
    }
    let slots: Vec<(&str, &str)> = slots.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let prelude = "enable f16;\nenable wgpu_cooperative_matrix;\n";
    let (template, inputs) = match staging {
        Staging::Pairs => (COOP, [("a", d), ("b", d)]),
        // A and B are declared by this template itself.
        Staging::Cvt => (COOP_VEC, [("", d), ("", d)]),
    };
    assemble_with(prelude, d, out, &inputs, epi, template, &slots, ops)
}

/// `RAW8`, `LOAD8` and `HALVES` of `linalg_coop_vec.wgsl` for operands of dtype `d`: the
/// register type of 8 consecutive elements, `load8_a(i)`/`load8_b(i)` (the i-th group of 8 with
/// the 16-byte loads the dtype allows: one for F16 and BF16, two for F32) and the statements
/// that turn group `w` into the f16 pairs `h0` .. `h3` (zeros unless `keep`). F16 is exact (the
/// f16 -> f32 -> f16 round trip); F32 and BF16 are rounded to f16, which overflows beyond
/// ±65504 and keeps 11 significant bits (the reduced-precision option). `None` for other dtypes.
fn cvt8(d: DType) -> Option<(&'static str, &'static str, &'static str)> {
    match d {
        DType::F16 => Some(("vec4<u32>", LOAD8_ONE, HALVES_F16)),
        DType::BF16 => Some(("vec4<u32>", LOAD8_ONE, HALVES_BF16)),
        DType::F32 => Some(("array<vec4<u32>, 2>", LOAD8_F32, HALVES_F32)),
        _ => None,
    }
}

const LOAD8_ONE: &str = "fn load8_a(i: u32) -> RAW8 {
    return a[i];
}

fn load8_b(i: u32) -> RAW8 {
    return b[i];
}
";

const LOAD8_F32: &str = "fn load8_a(i: u32) -> RAW8 {
    return RAW8(a[2u * i], a[2u * i + 1u]);
}

fn load8_b(i: u32) -> RAW8 {
    return RAW8(b[2u * i], b[2u * i + 1u]);
}
";

const HALVES_F16: &str = "    let v = select(vec4<u32>(0u), w, keep);
    let h0 = vec2<f16>(unpack2x16float(v.x));
    let h1 = vec2<f16>(unpack2x16float(v.y));
    let h2 = vec2<f16>(unpack2x16float(v.z));
    let h3 = vec2<f16>(unpack2x16float(v.w));";

// A word holds two bf16: the low one is element 2i, the high one 2i + 1.
const HALVES_BF16: &str = "    let v = select(vec4<u32>(0u), w, keep);
    let lo = bitcast<vec4<f32>>(v << vec4<u32>(16u));
    let hi = bitcast<vec4<f32>>(v & vec4<u32>(0xffff0000u));
    let h0 = vec2<f16>(vec2<f32>(lo.x, hi.x));
    let h1 = vec2<f16>(vec2<f32>(lo.y, hi.y));
    let h2 = vec2<f16>(vec2<f32>(lo.z, hi.z));
    let h3 = vec2<f16>(vec2<f32>(lo.w, hi.w));";

const HALVES_F32: &str = "    let l = vec4<f16>(select(vec4<f32>(0.0), bitcast<vec4<f32>>(w[0]), keep));
    let u = vec4<f16>(select(vec4<f32>(0.0), bitcast<vec4<f32>>(w[1]), keep));
    let h0 = l.xy;
    let h1 = l.zw;
    let h2 = u.xy;
    let h3 = u.zw;";

/// The vector-load tiled kernel (see [`module`]): F32 only, and only renderable tiles.
fn tiled_vec_module(d: DType, out: DType, t: VecTile, epi: Epilogue) -> Option<Result<String, String>> {
    if d != DType::F32 || !t.renderable() {
        return None;
    }
    let s = t.shape();
    let code = VecUnrolled::new(s)?;
    let flag = |b: bool| if b { "true" } else { "false" };
    let num = |x: u32| x.to_string();
    let slots = [
        ("RM", num(s.rm)),
        ("RN", num(s.rn)),
        ("BK", num(s.bk)),
        ("NBUF", num(t.buffers)),
        ("SA_BUF", num(t.a_vec4s())),
        ("A_KFAST", flag(t.a_kfast).to_string()),
        ("A_ROWS", flag(t.a_rows).to_string()),
        ("B_NFAST", flag(t.b_nfast).to_string()),
        ("DECLS", code.decls()),
        ("LOAD", code.load()),
        ("LOAD_EARLY", if t.prefetch { code.load() } else { String::new() }),
        ("LOAD_LATE", if t.prefetch { String::new() } else { code.load() }),
        ("STAGE", code.stage()),
        ("COMPUTE", if t.a_rows { code.compute_a_rows() } else { code.compute() }),
        ("STORE", code.store()),
    ];
    let slots: Vec<(&str, &str)> = slots.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // A and B are declared by the template as arrays of vectors.
    assemble("", d, out, &[("", d), ("", d)], epi, TILED_VEC, &slots)
}

/// Renders the split-K reduction for output dtype `d`. Bindings: 1 = partial sums
/// ([`acc_dtype`]`(d)`), then (2 = bias for [`Epilogue::BiasAct`]), then the output.
pub fn splitk_module(d: DType, epi: Epilogue) -> Option<Result<String, String>> {
    if !is_float(d) {
        return None;
    }
    assemble("", d, d, &[("part", acc_dtype(d))], epi, SPLITK, &[])
}

/// `RAW`, `raw_a(i)`, `raw_b(i)` and `cvt(x, i)` of the product kernels: the storage word of
/// element i and its conversion to the register type (zero for index `NONE`). Loads keep the raw
/// word so that nothing consumes it until it is converted, after other loads were issued (a
/// shift or a data-dependent branch right after each load would serialise them). The f16
/// conversion is exact and branch-free.
fn raw_access(d: DType) -> String {
    let (raw, a, b, cvt) = match d {
        DType::F16 => ("u32", "a[j >> 1u]", "b[j >> 1u]", "mm_f16_to_f32(x >> (16u * (i & 1u)))"),
        DType::BF16 => ("u32", "a[j >> 1u]", "b[j >> 1u]", "bf16_bits_to_f32(x >> (16u * (i & 1u)))"),
        _ => (reg_type(d), "a[j]", "b[j]", "x"),
    };
    // NONE loads element 0 (every bound range has one) and converts to zero: no branches.
    let mut out = format!(
        "alias RAW = {raw};\n\
         fn raw_a(i: u32) -> RAW {{ let j = select(i, 0u, i == NONE); return {a}; }}\n\
         fn raw_b(i: u32) -> RAW {{ let j = select(i, 0u, i == NONE); return {b}; }}\n\
         fn cvt(x: RAW, i: u32) -> R {{ return select({cvt}, R(0.0), i == NONE); }}\n"
    );
    if d == DType::F16 {
        out += F16_TO_F32;
    }
    out
}

/// `RAW`, `raw_a(i)` and `cvt(x, i)` of [`raw_access`], without `raw_b` (for kernels that
/// declare B themselves).
fn raw_a_access(d: DType) -> String {
    raw_access(d).lines().filter(|l| !l.starts_with("fn raw_b(")).map(|l| l.to_string() + "\n").collect()
}

/// Exact binary16 (low 16 bits) to f32 without branches.
const F16_TO_F32: &str = "fn mm_f16_to_f32(h: u32) -> f32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    let normal = sign | ((e + 112u) << 23u) | (m << 13u);
    let sub = sign | bitcast<u32>(f32(m) * bitcast<f32>(0x33800000u));
    let special = sign | 0x7f800000u | (m << 13u);
    return bitcast<f32>(select(select(normal, sub, e == 0u), special, e == 0x1fu));
}
";

/// Renders the strided copy for `d` (bindings: 1 = source, 2 = destination). Packed dtypes need
/// the destination zeroed first, like every packed store.
pub fn permute_module(d: DType) -> Result<String, String> {
    let tensors = tensor_binding("x", 1, d, Access::Read) + &tensor_binding("out", 2, d, Access::Write);
    render(PERMUTE, &[("TENSORS", &tensors)]).map(|m| join(&[COMMON, &m]))
}

//! Variants of the linalg family (§2.6 MatMul, DotGeneral, FusedMatMulBiasAct):
//! - the tiled batched matrix product (`linalg.wgsl`), 64 x 64 or 128 x 128 output tiles, and
//!   its F32 form with 16-byte loads and double-buffered tiles for operands whose vectorised
//!   axis is contiguous (`linalg_tiled_vec.wgsl`, 64 or 128 rows by 64 or 128 columns);
//! - the tensor-core product for F16 (`linalg_coop.wgsl`): f16 cooperative matrices with f32
//!   accumulators, on devices that have them, and its vector-load, double-buffered form for
//!   operands stored in whole 16-byte rows (`linalg_coop_vec.wgsl`);
//! - the skinny product for few rows (`linalg_skinny.wgsl`: batch-1 layers, GEMV), and its wide
//!   form reading an aligned N-contiguous B as 16-byte vectors (`linalg_gemv.wgsl`);
//! - the split-K reduction (`linalg_splitk.wgsl`) that adds the f32/f64 partial sums the product
//!   kernels write when K is split over several workgroups;
//! - the strided copy (`linalg_permute.wgsl`) that DotGeneral uses to reorder an operand.
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
mod tiled_code;
use coop_code::CoopCode;
use gemv_code::GemvCode;
use tiled_code::{Unrolled, VecUnrolled};

pub const PARAMS: &[crate::params::Layout] = &[GemmParams::LAYOUT, DotPermuteParams::LAYOUT];

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
}

impl VecTile {
    /// The tile sizes.
    pub fn shape(self) -> TileShape {
        TileShape { rm: self.rm, rn: self.rn, bk: self.bk }
    }

    /// Bytes of workgroup memory the kernel declares: both tiles, twice (double-buffered).
    pub fn workgroup_bytes(self) -> u64 {
        let s = self.shape();
        let vec4s = u64::from(s.bk) * u64::from(s.tm() / 4 + 1 + s.tn() / 4 + 1);
        2 * vec4s * 16
    }

    /// Whether the kernel can be rendered: 4 or 8 outputs per thread along each axis, a K step
    /// of 8, 16 or 32, and threads that each stage whole vectors of both tiles.
    pub fn renderable(self) -> bool {
        matches!(self.rm, 4 | 8)
            && matches!(self.rn, 4 | 8)
            && matches!(self.bk, 8 | 16 | 32)
            && VecUnrolled::new(self.shape()).is_some()
    }
}

/// Sizes of the cooperative-matrix kernel: `frag` x `frag` fragments (8 or 16, the sizes naga
/// writes), workgroups of `subgroups` subgroups of `subgroup` invocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CoopTile {
    /// Fragment edge (the M = N = K of the device's f16 x f16 -> f32 configuration).
    pub frag: u32,
    /// Invocations per subgroup (the device must have this one subgroup size).
    pub subgroup: u32,
    /// 128 x 128 output tiles (8 subgroups of 64 x 32) rather than 64 x 64 (4 of 32 x 32).
    pub large: bool,
}

/// K step of the cooperative-matrix kernel (a multiple of every fragment size).
pub const COOP_BK: u32 = 32;

impl CoopTile {
    /// (subgroup rows, subgroup columns, fragment rows per subgroup, fragment columns).
    fn grid(self) -> (u32, u32, u32, u32) {
        let f = self.frag.max(1);
        if self.large {
            (2, 4, 64 / f, 32 / f)
        } else {
            (2, 2, 32 / f, 32 / f)
        }
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
        let (wm, wn, _, _) = self.grid();
        let (tm, tn) = self.block();
        let halves = tm * (COOP_BK + 8) + COOP_BK * (tn + 8);
        u64::from(halves) * 2 + u64::from(wm * wn * self.frag * self.frag) * 4
    }

    /// Bytes of workgroup memory the vector-load kernel declares: as [`CoopTile::workgroup_bytes`]
    /// with the A and B tiles `nbuf` times.
    pub fn vec_workgroup_bytes(self, nbuf: u32) -> u64 {
        let (wm, wn, _, _) = self.grid();
        let (tm, tn) = self.block();
        let halves = u64::from(tm * (COOP_BK + 8) + COOP_BK * (tn + 8)) * u64::from(nbuf);
        halves * 2 + u64::from(wm * wn * self.frag * self.frag) * 4
    }

    /// Whether the vector-load kernel can be rendered: [`CoopTile::renderable`], and
    /// invocations that each stage a whole number of 8-half vectors of both tiles.
    fn vec_renderable(self) -> bool {
        let (tm, tn) = self.block();
        let nt = self.threads();
        self.renderable() && (tm * COOP_BK / 8).is_multiple_of(nt) && (tn * COOP_BK / 8).is_multiple_of(nt)
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
    /// The cooperative-matrix kernel with vector loads (`linalg_coop_vec.wgsl`, F16 only): for a
    /// K-contiguous A and an N-contiguous B of whole 16-byte rows.
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

/// The vector-load cooperative-matrix kernel's tile and staging.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CoopVecTile {
    /// Fragments, subgroups and output tile.
    pub tile: CoopTile,
    /// Two staged K slices (one barrier per step) rather than one (two barriers).
    pub double_buffer: bool,
}

impl CoopVecTile {
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
        self.tile.vec_workgroup_bytes(self.nbuf())
    }
}

/// Shape of the wide skinny kernel's workgroup (256 invocations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemvTile {
    /// Column invocations (a power of two, 1 to 64); the other 256 / `ct` lanes split K.
    pub ct: u32,
    /// Output rows per workgroup (1, 2 or 4).
    pub rows: u32,
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
        gemv_columns(d).is_some() && self.ct.is_power_of_two() && self.ct <= 64 && matches!(self.rows, 1 | 2 | 4)
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
            Variant::Gemv(t) => (t.rows, t.ct * gemv_columns(d).unwrap_or(1)),
        }
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
fn store_pair_body(out: DType) -> &'static str {
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
    match variant {
        Variant::Tiled(tile) => {
            let s = tile.shape(d);
            let (rm, rn, bk) = (s.rm.to_string(), s.rn.to_string(), s.bk.to_string());
            let code = Unrolled::new(s);
            let raw = raw_access(d);
            let slots = [
                ("RM", rm.as_str()),
                ("RN", rn.as_str()),
                ("BK", bk.as_str()),
                ("RAW", raw.as_str()),
                ("DECLS", &code.decls()),
                ("LOAD", &code.load()),
                ("STAGE", &code.stage()),
                ("COMPUTE", &code.compute()),
                ("STORE", &code.store()),
            ];
            assemble("", d, out, &inputs, epi, TILED, &slots)
        }
        Variant::TiledVec(t) => tiled_vec_module(d, out, t, epi),
        Variant::Coop(t) => {
            if d != DType::F16 || !t.renderable() {
                return None;
            }
            let code = CoopCode::new(t, false);
            let (wm, wn, fm, fn_) = t.grid();
            let num = |x: u32| x.to_string();
            let slots = [
                ("F", num(t.frag)),
                ("WM", num(wm)),
                ("WN", num(wn)),
                ("FM", num(fm)),
                ("FN", num(fn_)),
                ("BK", num(COOP_BK)),
                ("SG", num(t.subgroup)),
                ("DECLS", code.decls()),
                ("LOAD", code.load()),
                ("STAGE", code.stage()),
                ("COMPUTE", code.compute()),
                ("STORE", code.store()),
            ];
            let slots: Vec<(&str, &str)> = slots.iter().map(|(k, v)| (*k, v.as_str())).collect();
            assemble("enable f16;\nenable wgpu_cooperative_matrix;\n", d, out, &inputs, epi, COOP, &slots)
        }
        Variant::CoopVec(v) => {
            let t = v.tile;
            if d != DType::F16 || !t.vec_renderable() {
                return None;
            }
            let code = CoopCode::new(t, true);
            let (wm, wn, fm, fn_) = t.grid();
            let num = |x: u32| x.to_string();
            let slots = [
                ("F", num(t.frag)),
                ("WM", num(wm)),
                ("WN", num(wn)),
                ("FM", num(fm)),
                ("FN", num(fn_)),
                ("BK", num(COOP_BK)),
                ("SG", num(t.subgroup)),
                ("NBUF", num(v.nbuf())),
                ("DECLS", code.decls()),
                ("LOAD", code.load()),
                ("STAGE", code.stage()),
                ("COMPUTE", code.compute()),
                ("STORE", code.store()),
            ];
            let slots: Vec<(&str, &str)> = slots.iter().map(|(k, v)| (*k, v.as_str())).collect();
            // A and B are declared by the template as arrays of vectors.
            let prelude = "enable f16;\nenable wgpu_cooperative_matrix;\n";
            assemble(prelude, d, out, &[("", d), ("", d)], epi, COOP_VEC, &slots)
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
            let raw = raw_a_access(d);
            let num = |x: u32| x.to_string();
            let slots = [
                ("CT", num(t.ct)),
                ("ROWS", num(t.rows)),
                ("CW", num(code.cw)),
                ("BVEC", code.bvec().to_string()),
                ("RED", num(GEMV_THREADS * code.groups() * code.rows_per_pass())),
                ("RAW", raw),
                ("DECLS", code.decls()),
                ("U", num(code.unroll())),
                ("BODYU", code.body(code.unroll())),
                ("BODY1", code.body(1)),
                ("REDUCE", code.reduce()),
            ];
            let slots: Vec<(&str, &str)> = slots.iter().map(|(k, v)| (*k, v.as_str())).collect();
            // B is declared by the template as an array of vectors: only A goes through the
            // common bindings, and the bias and output keep their binding numbers.
            assemble("", d, out, &[("a", d), ("", d)], epi, GEMV, &slots)
        }
    }
}

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
        ("A_KFAST", flag(t.a_kfast).to_string()),
        ("B_NFAST", flag(t.b_nfast).to_string()),
        ("DECLS", code.decls()),
        ("LOAD", code.load()),
        ("STAGE", code.stage()),
        ("COMPUTE", code.compute()),
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

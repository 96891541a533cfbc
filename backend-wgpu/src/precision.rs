//! The explicit reduced-precision option for matrix products ([`crate::WgpuOptions::matmul_precision`]).

/// How F32 and BF16 matrix products (MatMul, FusedMatMulBiasAct, DotGeneral) may compute.
///
/// The default, [`MatmulPrecision::Exact`], computes them as the op contract says (operands as
/// given, f32 accumulation): the backend never lowers precision on its own. Like PyTorch's
/// `torch.set_float32_matmul_precision` or JAX's `precision` argument, a host may trade accuracy
/// for speed explicitly:
///
/// [`MatmulPrecision::F16`] rounds F32 and BF16 operands to IEEE binary16 while they are staged
/// for the tensor-core (cooperative-matrix) kernel and multiplies them there with f32
/// accumulation, where the adapter has f16 cooperative matrices and the operands are stored in
/// whole 16-byte rows (A contiguous along K, B along N, K and N multiples of 8). Consequences:
/// - range: f16's largest finite value is 65504; operands of larger magnitude overflow (to ±∞ on
///   the drivers seen; WGSL leaves the f32 -> f16 conversion of such values unspecified), and
///   magnitudes below 2⁻²⁴ ≈ 6·10⁻⁸ flush to zero (below 2⁻¹⁴ ≈ 6·10⁻⁵ they lose bits as
///   subnormals). BF16's range (up to 3.4·10³⁸) is not preserved;
/// - precision: 11 significant bits (relative rounding error up to 2⁻¹¹ ≈ 4.9·10⁻⁴ per
///   operand) instead of F32's 24; BF16's 8 bits are kept exactly when in range. Products
///   and sums are f32, so the error of a dot product of length K is about
///   2⁻¹⁰ · Σ|aᵢ·bᵢ| plus the f32 accumulation error;
/// - where it does not apply (no cooperative matrices, e.g. lavapipe; other layouts; F16 and
///   F64, which it never changes), the exact kernels run: results equal those of `Exact`.
///
/// The reference backend (`cpu-ref`) has no such option and always computes exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MatmulPrecision {
    /// Operands as given (the op contract's precision).
    #[default]
    Exact,
    /// F32 and BF16 operands rounded to f16 on tensor cores where the adapter has them (see the
    /// type's documentation for the range and precision lost).
    F16,
}

impl std::str::FromStr for MatmulPrecision {
    type Err = backend_api::Error;

    /// `exact` or `f16`.
    fn from_str(s: &str) -> backend_api::Result<MatmulPrecision> {
        match s {
            "exact" => Ok(MatmulPrecision::Exact),
            "f16" => Ok(MatmulPrecision::F16),
            _ => backend_api::bail!(Input, "matmul precision is exact or f16, got {s:?}"),
        }
    }
}

//! [`GraphBuilder`] methods that add the ops of §2.11 (signal processing).

use super::two;
use crate::op::*;
use crate::{DType, GraphBuilder, Result, Value};

impl GraphBuilder {
    /// `Fft` over the last axis.
    pub fn fft(&mut self, x: Value, inverse: bool, norm: FftNorm) -> Result<Value> {
        self.add1(Op::Fft(FftAttrs { inverse, norm }), &[x])
    }
    /// `LogMel` of a C64 spectrum with F32 mel `filters`.
    pub fn log_mel(&mut self, spectrum: Value, filters: Value, floor_scope: FloorScope) -> Result<Value> {
        self.add1(Op::LogMel(LogMelAttrs { floor_scope }), &[spectrum, filters])
    }
    /// `WelchPeaks`: `(bins, power)` of the `k` strongest bins.
    pub fn welch_peaks(&mut self, spectrum: Value, k: u32, index_dtype: DType) -> Result<(Value, Value)> {
        two(self.add(Op::WelchPeaks(WelchPeaksAttrs { k, index_dtype }), &[spectrum])?)
    }
}

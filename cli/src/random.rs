//! Seeded random tensors for `--random`: a tiny SplitMix64 generator, seeded per tensor from the
//! user's seed and the tensor's name, so the data of one input does not depend on which other
//! inputs were given or in which order.

use anyhow::Result;
use backend_api::{Complex32, DType, Tensor};
use half::{bf16, f16};

/// SplitMix64: small, fast, good enough for test data (not for cryptography).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1) with 53 random bits.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// Uniform in `lo..=hi` (the tiny modulo bias does not matter for test data).
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }
}

/// FNV-1a of the name, mixed into the seed.
fn seed_for(seed: u64, name: &str) -> u64 {
    let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3));
    seed ^ h
}

/// A tensor of `dtype` and `shape` with seeded random values: floats (and both parts of C64) in
/// [-1, 1), signed ints in [-3, 3], unsigned ints in [0, 7], bools half true.
pub fn random_tensor(seed: u64, name: &str, dtype: DType, shape: &[usize]) -> Result<Tensor> {
    let mut r = SplitMix64(seed_for(seed, name));
    let n: usize = shape.iter().product();
    let t = match dtype {
        DType::F32 => Tensor::from_slice(shape, &(0..n).map(|_| r.unit() as f32).collect::<Vec<_>>()),
        DType::F64 => Tensor::from_slice(shape, &(0..n).map(|_| r.unit()).collect::<Vec<_>>()),
        DType::F16 => Tensor::from_slice(shape, &(0..n).map(|_| f16::from_f64(r.unit())).collect::<Vec<_>>()),
        DType::BF16 => Tensor::from_slice(shape, &(0..n).map(|_| bf16::from_f64(r.unit())).collect::<Vec<_>>()),
        DType::C64 => {
            let v: Vec<Complex32> = (0..n).map(|_| Complex32 { re: r.unit() as f32, im: r.unit() as f32 }).collect();
            Tensor::from_slice(shape, &v)
        }
        DType::I64 => Tensor::from_slice(shape, &(0..n).map(|_| r.int(-3, 3)).collect::<Vec<_>>()),
        DType::I32 => Tensor::from_slice(shape, &(0..n).map(|_| r.int(-3, 3) as i32).collect::<Vec<_>>()),
        DType::I8 => Tensor::from_slice(shape, &(0..n).map(|_| r.int(-3, 3) as i8).collect::<Vec<_>>()),
        DType::U32 => Tensor::from_slice(shape, &(0..n).map(|_| r.int(0, 7) as u32).collect::<Vec<_>>()),
        DType::U8 => Tensor::from_slice(shape, &(0..n).map(|_| r.int(0, 7) as u8).collect::<Vec<_>>()),
        DType::Bool => Tensor::from_slice(shape, &(0..n).map(|_| r.next_u64() & 1 == 1).collect::<Vec<_>>()),
    };
    Ok(t?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_per_name_and_in_range() {
        let a = random_tensor(7, "x", DType::F32, &[64]).unwrap();
        assert_eq!(a, random_tensor(7, "x", DType::F32, &[64]).unwrap());
        assert_ne!(a, random_tensor(7, "y", DType::F32, &[64]).unwrap());
        assert_ne!(a, random_tensor(8, "x", DType::F32, &[64]).unwrap());
        assert!(a.to_vec::<f32>().unwrap().iter().all(|v| (-1.0..1.0).contains(v)));
        let i = random_tensor(1, "i", DType::I32, &[200]).unwrap().to_vec::<i32>().unwrap();
        assert!(i.iter().all(|v| (-3..=3).contains(v)) && i.contains(&-3) && i.contains(&3));
        let u = random_tensor(1, "u", DType::U8, &[200]).unwrap().to_vec::<u8>().unwrap();
        assert!(u.iter().all(|v| *v <= 7));
        for d in DType::ALL {
            assert_eq!(random_tensor(3, "t", d, &[2, 3]).unwrap().shape(), &[2, 3]);
        }
    }
}

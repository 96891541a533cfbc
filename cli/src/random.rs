//! Seeded random tensors for `--random`: a tiny SplitMix64 generator, seeded per tensor from the
//! user's seed and the tensor's name, so the data of one input does not depend on which other
//! inputs were given or in which order.

use anyhow::{bail, Context, Result};
use backend_api::shape::nbytes;
use backend_api::{DType, Tensor};
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
/// [-1, 1), signed ints in [-3, 3], unsigned ints in [0, 7], bools half true. Its size is checked
/// ([`nbytes`]) and must not pass `max_bytes`; its memory is reserved fallibly, so an impossible
/// or too large shape is an error, never an abort.
pub fn random_tensor(seed: u64, name: &str, dtype: DType, shape: &[usize], max_bytes: u64) -> Result<Tensor> {
    // An empty shape has no bytes however its other dims multiply (`nbytes` would overflow on them).
    let bytes = match shape.contains(&0) {
        true => 0,
        false => nbytes(dtype, shape).with_context(|| format!("--random {name:?}: {dtype}{shape:?}"))?,
    };
    if u64::try_from(bytes).map_or(true, |b| b > max_bytes) {
        bail!(
            "--random {name:?}: a {dtype}{shape:?} tensor needs {bytes} bytes, more than the {max_bytes} bytes left \
             under the cap (raise it with --max-memory BYTES)"
        );
    }
    let mut data = Vec::new();
    if let Err(e) = data.try_reserve_exact(bytes) {
        bail!("--random {name:?}: cannot allocate {bytes} bytes for a {dtype}{shape:?} tensor: {e}");
    }
    let mut r = SplitMix64(seed_for(seed, name));
    while data.len() < bytes {
        push_random(&mut r, dtype, &mut data);
    }
    Ok(Tensor::from_bytes(dtype, shape, data)?)
}

/// Appends the little-endian bytes of one random element of `dtype`.
fn push_random(r: &mut SplitMix64, dtype: DType, out: &mut Vec<u8>) {
    match dtype {
        DType::F32 => out.extend_from_slice(&(r.unit() as f32).to_le_bytes()),
        DType::F64 => out.extend_from_slice(&r.unit().to_le_bytes()),
        DType::F16 => out.extend_from_slice(&f16::from_f64(r.unit()).to_le_bytes()),
        DType::BF16 => out.extend_from_slice(&bf16::from_f64(r.unit()).to_le_bytes()),
        DType::C64 => {
            // Real part first (the layout of `Complex32`), each drawn in that order.
            let re = r.unit() as f32;
            let im = r.unit() as f32;
            out.extend_from_slice(&re.to_le_bytes());
            out.extend_from_slice(&im.to_le_bytes());
        }
        DType::I64 => out.extend_from_slice(&r.int(-3, 3).to_le_bytes()),
        DType::I32 => out.extend_from_slice(&(r.int(-3, 3) as i32).to_le_bytes()),
        DType::I8 => out.extend_from_slice(&(r.int(-3, 3) as i8).to_le_bytes()),
        DType::U32 => out.extend_from_slice(&(r.int(0, 7) as u32).to_le_bytes()),
        DType::U8 => out.extend_from_slice(&(r.int(0, 7) as u8).to_le_bytes()),
        DType::Bool => out.push(u8::from(r.next_u64() & 1 == 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: u64 = 1 << 20;

    #[test]
    fn deterministic_per_name_and_in_range() {
        let a = random_tensor(7, "x", DType::F32, &[64], BIG).unwrap();
        assert_eq!(a, random_tensor(7, "x", DType::F32, &[64], BIG).unwrap());
        assert_ne!(a, random_tensor(7, "y", DType::F32, &[64], BIG).unwrap());
        assert_ne!(a, random_tensor(8, "x", DType::F32, &[64], BIG).unwrap());
        assert!(a.to_vec::<f32>().unwrap().iter().all(|v| (-1.0..1.0).contains(v)));
        let i = random_tensor(1, "i", DType::I32, &[200], BIG).unwrap().to_vec::<i32>().unwrap();
        assert!(i.iter().all(|v| (-3..=3).contains(v)) && i.contains(&-3) && i.contains(&3));
        let u = random_tensor(1, "u", DType::U8, &[200], BIG).unwrap().to_vec::<u8>().unwrap();
        assert!(u.iter().all(|v| *v <= 7));
        for d in DType::ALL {
            assert_eq!(random_tensor(3, "t", d, &[2, 3], BIG).unwrap().shape(), &[2, 3]);
        }
    }

    #[test]
    fn sizes_are_checked_and_capped() {
        let e = random_tensor(0, "x", DType::F32, &[1 << 62, 4], u64::MAX).unwrap_err();
        assert!(e.to_string().contains("\"x\""), "{e:#}");
        let e = random_tensor(0, "x", DType::F32, &[1_000_000, 1_000_000], 1 << 30).unwrap_err();
        assert!(e.to_string().contains("4000000000000 bytes") && e.to_string().contains("--max-memory"), "{e:#}");
        assert_eq!(random_tensor(0, "x", DType::C64, &[0, 1 << 62], 0).unwrap().shape(), &[0, 1 << 62]);
        assert!(random_tensor(0, "x", DType::F64, &[2], 15).is_err());
        assert!(random_tensor(0, "x", DType::F64, &[2], 16).is_ok());
    }
}

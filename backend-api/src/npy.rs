//! `.npy` files (NumPy's array format, versions 1.0–3.0) for [`Tensor`]: the way weights, inputs and
//! outputs travel between this project and Python tooling.
//!
//! Every dtype with a NumPy equivalent round-trips exactly: F32 `<f4`, F16 `<f2`, F64 `<f8`, I64
//! `<i8`, I32 `<i4`, I8 `|i1`, U32 `<u4`, U8 `|u1`, Bool `|b1`, C64 `<c8`. BF16 has no NumPy
//! dtype: writing it is an error that says so (cast to F32 first); reading accepts big-endian
//! descriptors (bytes are swapped) but not Fortran-ordered arrays.

use crate::{bail, DType, Result, Tensor};

const MAGIC: &[u8] = b"\x93NUMPY";

fn descr(d: DType) -> Result<&'static str> {
    Ok(match d {
        DType::F32 => "<f4",
        DType::F16 => "<f2",
        DType::F64 => "<f8",
        DType::I64 => "<i8",
        DType::I32 => "<i4",
        DType::I8 => "|i1",
        DType::U32 => "<u4",
        DType::U8 => "|u1",
        DType::Bool => "|b1",
        DType::C64 => "<c8",
        DType::BF16 => bail!(Unsupported, "BF16 has no NumPy dtype; Cast to F32 before saving as .npy"),
    })
}

/// (dtype, bytes are big-endian) of a NumPy descriptor.
fn parse_descr(s: &str) -> Result<(DType, bool)> {
    let (order, code) = s.split_at(s.len().min(1));
    let big = match order {
        "<" | "|" | "=" => false,
        ">" => true,
        _ => bail!(Input, "unsupported .npy descr {s:?}"),
    };
    let d = match code {
        "f4" => DType::F32,
        "f2" => DType::F16,
        "f8" => DType::F64,
        "i8" => DType::I64,
        "i4" => DType::I32,
        "i1" => DType::I8,
        "u4" => DType::U32,
        "u1" => DType::U8,
        "b1" => DType::Bool,
        "c8" => DType::C64,
        _ => bail!(Input, ".npy descr {s:?} has no dtype here (supported: f2 f4 f8 i1 i4 i8 u1 u4 b1 c8)"),
    };
    Ok((d, big))
}

/// Encodes `t` as a version-1.0 `.npy` file (header padded to 64 bytes, as NumPy writes it).
pub fn to_npy(t: &Tensor) -> Result<Vec<u8>> {
    let shape = match t.shape() {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        dims => format!("({})", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}", descr(t.dtype())?);
    let unpadded = MAGIC.len() + 2 + 2 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.div_ceil(64) * 64 - unpadded));
    header.push('\n');
    let Ok(len) = u16::try_from(header.len()) else {
        bail!(Input, ".npy header of {} bytes is too long", header.len())
    };
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + header.len() + t.bytes().len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(t.bytes());
    Ok(out)
}

/// The value of `key` in a NumPy header dict (`'key': value`), up to the next top-level comma.
fn field<'a>(header: &'a str, key: &str) -> Result<&'a str> {
    let pat = format!("'{key}':");
    let Some(start) = header.find(&pat) else { bail!(Input, ".npy header has no {key:?}: {header}") };
    let rest = header[start + pat.len()..].trim_start();
    let end = if rest.starts_with('(') { rest.find(')').map(|e| e + 1) } else { rest.find([',', '}']) };
    Ok(rest[..end.unwrap_or(rest.len())].trim())
}

fn parse_shape(s: &str) -> Result<Vec<usize>> {
    let inner = s.trim_start_matches('(').trim_end_matches(')');
    inner
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.trim_end_matches('L').parse::<usize>().map_err(|_| {
                crate::Error::new(crate::ErrorKind::Input, format!(".npy shape {s:?} is not a tuple of sizes"))
            })
        })
        .collect()
}

/// Decodes a `.npy` file (versions 1.0, 2.0, 3.0; C order).
pub fn from_npy(bytes: &[u8]) -> Result<Tensor> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        bail!(Input, "not a .npy file (missing the \\x93NUMPY magic)");
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => bail!(Input, "unsupported .npy version {v}.{}", bytes[7]),
    };
    let Some(header) = bytes.get(start..start + hlen) else { bail!(Input, ".npy header is truncated") };
    let header = String::from_utf8_lossy(header);
    let (dtype, big) = parse_descr(field(&header, "descr")?.trim_matches(['\'', '"']))?;
    if field(&header, "fortran_order")? != "False" {
        bail!(Input, "Fortran-ordered .npy arrays are not supported; save with numpy.ascontiguousarray");
    }
    let shape = parse_shape(field(&header, "shape")?)?;
    let mut data = bytes[start + hlen..].to_vec();
    if big {
        let w = if dtype == DType::C64 { 4 } else { dtype.size() };
        data.chunks_exact_mut(w).for_each(|c| c.reverse());
    }
    let want: usize = shape.iter().product::<usize>() * dtype.size();
    if data.len() != want {
        bail!(Input, ".npy {dtype}{shape:?} needs {want} data bytes, the file has {}", data.len());
    }
    if dtype == DType::Bool {
        data.iter_mut().for_each(|b| *b = (*b != 0) as u8);
    }
    Tensor::from_bytes(dtype, &shape, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Complex32;
    use half::{bf16, f16};

    #[test]
    fn every_numpy_dtype_round_trips() {
        let ts = [
            Tensor::from_slice(&[2, 3], &[1.5f32, -0.0, f32::NAN, f32::INFINITY, 7.0, 1e-40]).unwrap(),
            Tensor::from_slice(&[2], &[f16::from_f32(0.5), f16::MAX]).unwrap(),
            Tensor::from_slice(&[1], &[std::f64::consts::PI]).unwrap(),
            Tensor::from_slice(&[3], &[i64::MIN, 0, i64::MAX]).unwrap(),
            Tensor::from_slice(&[0, 4], &Vec::<i32>::new()).unwrap(),
            Tensor::from_slice(&[2], &[-128i8, 127]).unwrap(),
            Tensor::from_slice(&[1], &[u32::MAX]).unwrap(),
            Tensor::from_slice(&[3], &[0u8, 128, 255]).unwrap(),
            Tensor::from_slice(&[2], &[true, false]).unwrap(),
            Tensor::from_slice(&[1], &[Complex32 { re: 1.0, im: -2.0 }]).unwrap(),
            Tensor::scalar(3.25f32),
        ];
        for t in ts {
            let b = to_npy(&t).unwrap();
            assert_eq!((b.len() - t.bytes().len()) % 64, 0, "header aligned to 64");
            assert_eq!(from_npy(&b).unwrap(), t);
        }
    }

    #[test]
    fn numpy_written_header_and_big_endian() {
        // np.save of np.arange(3, dtype='>i4')
        let mut b = MAGIC.to_vec();
        let h = "{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }";
        let mut header = h.to_string();
        header.push_str(&" ".repeat(64 - (10 + h.len() + 1) % 64));
        header.push('\n');
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&(header.len() as u16).to_le_bytes());
        b.extend_from_slice(header.as_bytes());
        for v in [0i32, 1, 2] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(from_npy(&b).unwrap().to_vec::<i32>().unwrap(), vec![0, 1, 2]);
    }

    #[test]
    fn errors_are_clear() {
        let bf = Tensor::from_slice(&[1], &[bf16::ONE]).unwrap();
        assert!(to_npy(&bf).unwrap_err().to_string().contains("BF16 has no NumPy dtype"));
        assert!(from_npy(b"hello").is_err());
        let mut b = to_npy(&Tensor::from_slice(&[2], &[1.0f32, 2.0]).unwrap()).unwrap();
        b.truncate(b.len() - 1);
        assert!(from_npy(&b).unwrap_err().to_string().contains("needs 8 data bytes"));
        let mut f = to_npy(&Tensor::from_slice(&[2], &[1.0f32, 2.0]).unwrap()).unwrap();
        let at = f.windows(5).position(|w| w == b"False").unwrap();
        f[at..at + 5].copy_from_slice(b"True ");
        assert!(from_npy(&f).unwrap_err().to_string().contains("Fortran"));
    }
}

/// Interop with files NumPy wrote and reads: `NPY_INTEROP_DIR=/dir cargo test -p backend-api
/// npy_interop -- --ignored` after `np.save`-ing `n_f32.npy` (arange(6).reshape(2,3) f32),
/// `n_i8.npy` ([-128, 5]), `n_c64.npy` ([1+2j]), `n_b.npy` ([True, False]), `n_s.npy`
/// (float64 2.5) and `n_be.npy` (arange(3, dtype='>u4')) there; it writes `r_*.npy` back.
#[cfg(test)]
mod interop {
    use super::*;

    #[test]
    #[ignore]
    fn npy_interop() {
        let dir = std::env::var("NPY_INTEROP_DIR").expect("NPY_INTEROP_DIR");
        let read = |n: &str| from_npy(&std::fs::read(format!("{dir}/{n}")).unwrap()).unwrap();
        let t = read("n_f32.npy");
        assert_eq!((t.shape(), t.to_vec::<f32>().unwrap()), (&[2usize, 3][..], vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]));
        assert_eq!(read("n_i8.npy").to_vec::<i8>().unwrap(), vec![-128, 5]);
        assert_eq!(read("n_c64.npy").to_vec::<crate::Complex32>().unwrap()[0], crate::Complex32 { re: 1.0, im: 2.0 });
        assert_eq!(read("n_b.npy").to_vec::<bool>().unwrap(), vec![true, false]);
        let s = read("n_s.npy");
        assert_eq!((s.shape().len(), s.to_vec::<f64>().unwrap()), (0, vec![2.5]));
        assert_eq!(read("n_be.npy").to_vec::<u32>().unwrap(), vec![0, 1, 2]);
        for n in ["n_f32.npy", "n_i8.npy", "n_c64.npy", "n_b.npy", "n_s.npy"] {
            std::fs::write(format!("{dir}/r_{n}"), to_npy(&read(n)).unwrap()).unwrap();
        }
    }
}

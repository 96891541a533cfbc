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

/// (dtype, bytes are big-endian) of a NumPy descriptor, read as bytes (any bytes: Ok or Err).
fn parse_descr(s: &[u8]) -> Result<(DType, bool)> {
    let shown = s.escape_ascii();
    let Some((&order, code)) = s.split_first() else { bail!(Input, ".npy descr is empty") };
    let big = match order {
        b'<' | b'|' | b'=' => false,
        b'>' => true,
        _ => bail!(Input, "unsupported .npy descr '{shown}' (byte order must be <, >, | or =)"),
    };
    let d = match code {
        b"f4" => DType::F32,
        b"f2" => DType::F16,
        b"f8" => DType::F64,
        b"i8" => DType::I64,
        b"i4" => DType::I32,
        b"i1" => DType::I8,
        b"u4" => DType::U32,
        b"u1" => DType::U8,
        b"b1" => DType::Bool,
        b"c8" => DType::C64,
        _ => bail!(Input, ".npy descr '{shown}' has no dtype here (supported: f2 f4 f8 i1 i4 i8 u1 u4 b1 c8)"),
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

/// The first position of `pat` in `hay`.
fn find(hay: &[u8], pat: &[u8]) -> Option<usize> {
    hay.windows(pat.len().max(1)).position(|w| w == pat)
}

/// The value of `key` in a NumPy header dict (`'key': value`), up to the next top-level comma.
/// The header is handled as bytes: no byte sequence can make this panic.
fn field<'a>(header: &'a [u8], key: &str) -> Result<&'a [u8]> {
    let pat = format!("'{key}':");
    let Some(at) = find(header, pat.as_bytes()) else {
        bail!(Input, ".npy header has no {key:?}: {}", header.escape_ascii())
    };
    let rest = header.get(at + pat.len()..).unwrap_or_default().trim_ascii_start();
    let end = if rest.starts_with(b"(") {
        rest.iter().position(|&b| b == b')').map(|e| e + 1)
    } else {
        rest.iter().position(|&b| b == b',' || b == b'}')
    };
    Ok(rest.get(..end.unwrap_or(rest.len())).unwrap_or(rest).trim_ascii())
}

/// A shape tuple `(2, 3)`, `(4,)`, `()`: sizes as decimal ASCII (a trailing `L` of Python 2 allowed).
fn parse_shape(s: &[u8]) -> Result<Vec<usize>> {
    let bad = || {
        crate::Error::new(crate::ErrorKind::Input, format!(".npy shape '{}' is not a tuple of sizes", s.escape_ascii()))
    };
    let inner = s.strip_prefix(b"(").and_then(|r| r.strip_suffix(b")")).ok_or_else(bad)?;
    let mut dims = Vec::new();
    for part in inner.split(|&b| b == b',').map(<[u8]>::trim_ascii).filter(|p| !p.is_empty()) {
        let digits = part.strip_suffix(b"L").unwrap_or(part);
        let text = std::str::from_utf8(digits).map_err(|_| bad())?;
        dims.push(text.parse::<usize>().map_err(|_| bad())?);
    }
    if dims.len() > crate::shape::MAX_RANK {
        bail!(Input, ".npy shape '{}' has rank {}, more than {}", s.escape_ascii(), dims.len(), crate::shape::MAX_RANK);
    }
    Ok(dims)
}

/// `N` bytes at `at`, or an `Input` error saying the preamble is truncated.
fn array_at<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N]> {
    match bytes.get(at..).and_then(|b| b.get(..N)).and_then(|b| <[u8; N]>::try_from(b).ok()) {
        Some(a) => Ok(a),
        None => bail!(Input, ".npy header is truncated: the preamble ends after {} bytes", bytes.len()),
    }
}

/// (header length, offset of the header) from the preamble, every read bounds-checked.
fn preamble(bytes: &[u8]) -> Result<(usize, usize)> {
    if bytes.get(..MAGIC.len()) != Some(MAGIC) {
        bail!(Input, "not a .npy file (missing the \\x93NUMPY magic)");
    }
    match array_at::<2>(bytes, 6)? {
        [1, _] => Ok((usize::from(u16::from_le_bytes(array_at(bytes, 8)?)), 10)),
        [2 | 3, _] => {
            let n = u32::from_le_bytes(array_at(bytes, 8)?);
            let Ok(n) = usize::try_from(n) else { bail!(Input, ".npy header length {n} does not fit this host") };
            Ok((n, 12))
        }
        [v, m] => bail!(Input, "unsupported .npy version {v}.{m}"),
    }
}

/// `s` without the quotes around it (`'<f4'` or `"<f4"`).
fn unquote(s: &[u8]) -> &[u8] {
    let q = |b: &u8| *b == b'\'' || *b == b'"';
    let s = s.strip_prefix(b"'").or_else(|| s.strip_prefix(b"\"")).unwrap_or(s);
    match s.split_last() {
        Some((last, rest)) if q(last) => rest,
        _ => s,
    }
}

/// What a `.npy` header declares: the tensor's type, where its data starts and how long it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyLayout {
    /// The element type.
    pub dtype: DType,
    /// Whether the data bytes are big-endian (swapped when read).
    pub big_endian: bool,
    /// The dims.
    pub shape: Vec<usize>,
    /// Offset of the first data byte: the length of preamble and header.
    pub data_offset: usize,
    /// The data's length in bytes, `nbytes(dtype, shape)` (checked).
    pub data_bytes: usize,
}

/// How many leading bytes [`header_end`] needs at most (the preamble of every version).
pub const PREAMBLE_LEN: usize = 12;

/// The offset where the data starts (preamble plus header length), from the first
/// [`PREAMBLE_LEN`] bytes (or fewer: a version-1.0 preamble is 10 bytes). Lets a reader of an
/// archive read exactly the header before deciding how much data to read.
pub fn header_end(preamble_bytes: &[u8]) -> Result<usize> {
    let (hlen, start) = preamble(preamble_bytes)?;
    match start.checked_add(hlen) {
        Some(end) => Ok(end),
        None => bail!(Input, ".npy header length {hlen} overflows"),
    }
}

/// Parses the preamble and header at the start of `head` (at least [`header_end`] bytes; data
/// after them is ignored). The declared shape's byte size is checked (`Shape` error past
/// [`MAX_TENSOR_BYTES`](crate::shape::MAX_TENSOR_BYTES)); nothing is allocated for the data.
pub fn read_layout(head: &[u8]) -> Result<NpyLayout> {
    let end = header_end(head)?;
    let (_, start) = preamble(head)?;
    let Some(header) = head.get(start..end) else {
        bail!(
            Input,
            ".npy header is truncated: it declares {} bytes, the file has {}",
            end.saturating_sub(start),
            head.len().saturating_sub(start)
        )
    };
    let (dtype, big_endian) = parse_descr(unquote(field(header, "descr")?))?;
    if field(header, "fortran_order")? != b"False" {
        bail!(Input, "Fortran-ordered .npy arrays are not supported; save with numpy.ascontiguousarray");
    }
    let shape = parse_shape(field(header, "shape")?)?;
    let data_bytes = crate::shape::nbytes(dtype, &shape).map_err(|e| e.context(format!(".npy {dtype}{shape:?}")))?;
    Ok(NpyLayout { dtype, big_endian, shape, data_offset: end, data_bytes })
}

/// Decodes a `.npy` file (versions 1.0, 2.0, 3.0; C order). The declared shape's byte size is
/// checked against the bytes present before anything is allocated, so a small file claiming a
/// huge shape is an `Input` (or `Shape`) error, never an allocation.
pub fn from_npy(bytes: &[u8]) -> Result<Tensor> {
    let l = read_layout(bytes)?;
    let body = bytes.get(l.data_offset..).unwrap_or_default();
    if body.len() != l.data_bytes {
        bail!(Input, ".npy {}{:?} needs {} data bytes, the file has {}", l.dtype, l.shape, l.data_bytes, body.len());
    }
    let mut data = body.to_vec();
    if l.big_endian {
        let w = if l.dtype == DType::C64 { 4 } else { l.dtype.size() };
        data.chunks_exact_mut(w).for_each(|c| c.reverse());
    }
    if l.dtype == DType::Bool {
        data.iter_mut().for_each(|b| *b = u8::from(*b != 0));
    }
    Tensor::from_bytes(l.dtype, &l.shape, data)
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

    /// A version-1.0 file of `header` (padded as NumPy pads it) followed by `data`.
    fn npy_with(header: &[u8], data: &[u8]) -> Vec<u8> {
        let mut h = header.to_vec();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(b' ');
        }
        h.push(b'\n');
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&u16::try_from(h.len()).unwrap().to_le_bytes());
        b.extend_from_slice(&h);
        b.extend_from_slice(data);
        b
    }

    #[test]
    fn a_truncated_header_is_an_error() {
        let full = to_npy(&Tensor::from_slice(&[2], &[1.0f32, 2.0]).unwrap()).unwrap();
        for n in 0..full.len() - 8 {
            let e = from_npy(&full[..n]).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Input, "{n} bytes: {e}");
        }
        assert!(from_npy(&full[..9]).unwrap_err().to_string().contains("truncated"));
        assert!(from_npy(&full[..20]).unwrap_err().to_string().contains("truncated"));
    }

    #[test]
    fn a_non_ascii_descr_is_an_error_not_a_panic() {
        for descr in ["\u{e9}f4", "<\u{e9}", "\u{1F600}", ""] {
            let h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (1,), }}");
            let e = from_npy(&npy_with(h.as_bytes(), &[0; 4])).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Input, "{descr:?}: {e}");
        }
        // Bytes that are not UTF-8 at all, anywhere in the header.
        let e =
            from_npy(&npy_with(b"{'descr': '\xff\xfe', 'fortran_order': False, 'shape': (\xc3,), }", &[])).unwrap_err();
        assert!(e.to_string().contains("descr"), "{e}");
        let e =
            from_npy(&npy_with(b"{'descr': '<f4', 'fortran_order': False, 'shape': (\xc3\xa9,), }", &[])).unwrap_err();
        assert!(e.to_string().contains("not a tuple of sizes"), "{e}");
    }

    #[test]
    fn a_small_file_claiming_a_huge_shape_is_refused_before_allocating() {
        let h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }";
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&u16::try_from(h.len()).unwrap().to_le_bytes());
        b.extend_from_slice(h);
        assert_eq!(b.len(), 87, "the issue's 87-byte file");
        let e = from_npy(&b).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Shape, "{e}");
        assert!(e.to_string().contains("4611686018427387904"), "{e}");
        // A shape that fits but is far larger than the data present.
        let e = from_npy(&npy_with(b"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000,), }", &[0; 8]))
            .unwrap_err();
        assert!(e.to_string().contains("needs 4000000000 data bytes, the file has 8"), "{e}");
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let full = to_npy(&Tensor::from_slice(&[2, 1], &[1i32, 2]).unwrap()).unwrap();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..4000 {
            let mut b = full.clone();
            for _ in 0..4 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let at = usize::try_from(state % b.len() as u64).unwrap();
                b[at] = (state >> 32) as u8;
            }
            let _ = from_npy(&b);
            let _ = from_npy(&b[..usize::try_from(state % b.len() as u64).unwrap()]);
        }
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

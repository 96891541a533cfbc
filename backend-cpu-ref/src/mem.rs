//! Memory: the backend's options (its memory cap), fallible allocation, and the running total of
//! live bytes a run checks against the cap, so that a graph declaring a huge tensor gets an `Err`
//! instead of aborting the process ("memory allocation of N bytes failed").

use crate::value::Scalar;
use backend_api::shape::nbytes;
use backend_api::{bail, DType, Error, ErrorKind, Result};

/// The cap used when physical memory cannot be read (non-Linux hosts, a `/proc` without
/// `MemTotal`): 8 GiB.
pub const FALLBACK_MAX_MEMORY_BYTES: u64 = 8 << 30;

/// Options of the reference backend, fixed when it is made ([`crate::CpuRefBackend::with_options`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuRefOptions {
    /// The most bytes a run may hold at once: its inputs, every value computed so far, and an
    /// estimate of the working memory of the node being evaluated. A node that would pass it
    /// fails with a `Capacity` error naming the node, the op, the size and the cap.
    pub max_memory_bytes: u64,
}

impl Default for CpuRefOptions {
    /// Half of physical memory (from `/proc/meminfo` on Linux), else
    /// [`FALLBACK_MAX_MEMORY_BYTES`]: a run past it would swap or be killed long before it ends.
    fn default() -> CpuRefOptions {
        let max_memory_bytes = physical_memory_bytes().map_or(FALLBACK_MAX_MEMORY_BYTES, |m| m / 2);
        CpuRefOptions { max_memory_bytes }
    }
}

/// Total physical memory in bytes, from `MemTotal` of `/proc/meminfo`; `None` where there is no
/// such file or it cannot be parsed.
pub fn physical_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_total(&text)
}

/// The `MemTotal:  N kB` line of a `/proc/meminfo` text, in bytes.
fn parse_mem_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line.split_whitespace().skip(1);
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        _ => None,
    }
}

/// An empty vector with room for exactly `n` values, or a `Capacity` error when the allocator
/// refuses (never an abort).
pub fn try_vec<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    match v.try_reserve_exact(n) {
        Ok(()) => Ok(v),
        Err(e) => bail!(Capacity, "cannot allocate {n} values of {} bytes: {e}", std::mem::size_of::<T>()),
    }
}

/// `n` copies of `x` in a fallibly allocated vector (see [`try_vec`]).
pub fn try_filled<T: Clone>(n: usize, x: T) -> Result<Vec<T>> {
    let mut v = try_vec(n)?;
    v.resize(n, x);
    Ok(v)
}

/// Bytes of a dense `dtype` tensor of `dims`: 0 when a dim is 0 (however the others multiply,
/// which [`nbytes`] would call an overflow for `[2^62, 2^62, 0]`), else [`nbytes`] (a `Shape`
/// error when impossible).
pub fn tensor_bytes(dtype: DType, dims: &[usize]) -> Result<usize> {
    if dims.contains(&0) {
        return Ok(0);
    }
    nbytes(dtype, dims)
}

/// A byte buffer with room for a dense `dtype` tensor of `dims`: the size is checked
/// ([`tensor_bytes`]) and allocated fallibly.
pub fn try_bytes(dtype: DType, dims: &[usize]) -> Result<Vec<u8>> {
    try_vec(tensor_bytes(dtype, dims)?)
}

/// Working bytes a kernel may hold per element of its inputs and outputs: each is decoded into
/// at most one [`Scalar`] (or a smaller f64) at a time.
const WORK_BYTES_PER_ELEMENT: u64 = std::mem::size_of::<Scalar>() as u64;

/// `n` as u64 (saturating; a usize fits u64 on every supported target).
pub(crate) fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The bytes of one run held so far, against the cap of [`CpuRefOptions::max_memory_bytes`].
#[derive(Debug)]
pub(crate) struct Meter {
    cap: u64,
    live: u64,
}

impl Meter {
    /// A meter with nothing live.
    pub fn new(opts: &CpuRefOptions) -> Meter {
        Meter { cap: opts.max_memory_bytes, live: 0 }
    }

    /// Counts `bytes` more as live (`what` names them in the error), or a `Capacity` error when
    /// that passes the cap.
    pub fn hold(&mut self, bytes: usize, what: &str) -> Result<()> {
        let total = self.with(to_u64(bytes));
        if total > self.cap {
            return Err(self.over(total, what));
        }
        self.live = total;
        Ok(())
    }

    /// Counts `bytes` as no longer live (values dropped after their last reader).
    pub fn release(&mut self, bytes: usize) {
        self.live = self.live.saturating_sub(to_u64(bytes));
    }

    /// Checks, without counting it, that a node whose inputs and outputs have `elements` elements
    /// in all and whose outputs take `out_bytes` fits under the cap beside what is live.
    pub fn check_node(&self, out_bytes: usize, elements: u64, what: &str) -> Result<()> {
        let work = elements.saturating_mul(WORK_BYTES_PER_ELEMENT);
        let total = self.with(to_u64(out_bytes)).saturating_add(work);
        if total > self.cap {
            let detail = format!("{what}: {out_bytes} bytes of outputs plus about {work} bytes of working memory");
            return Err(self.over(total, &detail));
        }
        Ok(())
    }

    fn with(&self, bytes: u64) -> u64 {
        self.live.saturating_add(bytes)
    }

    fn over(&self, total: u64, what: &str) -> Error {
        Error::new(
            ErrorKind::Capacity,
            format!(
                "{what} would bring cpu-ref's memory to {total} bytes ({} already live), past its cap of {} bytes \
                 (CpuRefOptions::max_memory_bytes)",
                self.live, self.cap
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_total() {
        let text = "MemFree: 5 kB\nMemTotal:       16384 kB\n";
        assert_eq!(parse_mem_total(text), Some(16384 * 1024));
        assert_eq!(parse_mem_total("MemTotal: 12 MB\n"), None);
        assert_eq!(parse_mem_total("MemTotal: 99999999999999999999 kB\n"), None);
        assert_eq!(parse_mem_total(""), None);
        assert!(CpuRefOptions::default().max_memory_bytes > 0);
    }

    #[test]
    fn impossible_allocations_are_errors() {
        let e = try_vec::<u64>(usize::MAX / 2).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Capacity, "{e}");
        let e = try_bytes(DType::F32, &[1 << 62, 4]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
        assert_eq!(try_bytes(DType::F32, &[1 << 62, 1 << 62, 0]).unwrap().capacity(), 0);
        assert_eq!(try_filled(3, 7u8).unwrap(), vec![7, 7, 7]);
    }

    #[test]
    fn the_meter_refuses_past_the_cap() {
        let mut m = Meter::new(&CpuRefOptions { max_memory_bytes: 100 });
        m.hold(60, "input x").unwrap();
        let e = m.hold(41, "input y").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Capacity);
        assert!(e.message().contains("input y") && e.message().contains("100"), "{e}");
        m.check_node(40, 0, "node").unwrap();
        assert!(m.check_node(9, 1, "node").is_err());
    }
}

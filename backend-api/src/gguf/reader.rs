//! A bounded little-endian reader: every read checks the bytes left in the file first, so a
//! truncated file is an error that says what was being read, and a length field can never make the
//! reader allocate more than the file holds.

use crate::{bail, Error, ErrorKind, Result};
use std::fmt::Display;
use std::io::Read;

/// Reads from `inner`, which holds `len` bytes in all, tracking the position.
pub(super) struct Reader<R> {
    inner: R,
    pos: u64,
    len: u64,
}

impl<R: Read> Reader<R> {
    /// A reader at offset 0 of a source of `len` bytes.
    pub(super) fn new(inner: R, len: u64) -> Reader<R> {
        Reader { inner, pos: 0, len }
    }

    /// The offset of the next byte.
    pub(super) fn pos(&self) -> u64 {
        self.pos
    }

    /// The bytes left after the position.
    pub(super) fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    /// Errs unless `n` more bytes are present (checked before reading or allocating).
    fn need(&self, n: u64, what: &dyn Display) -> Result<()> {
        if n > self.remaining() {
            bail!(Input, "truncated {what}: needs {n} bytes at offset {}, the file has {} bytes", self.pos, self.len);
        }
        Ok(())
    }

    /// Fills `buf` (whose length was checked against the bytes left).
    fn fill(&mut self, buf: &mut [u8], what: &dyn Display) -> Result<()> {
        self.inner.read_exact(buf).map_err(|e| read_error(&e, what, self.pos))?;
        // `buf.len()` was checked against `remaining`, so the position stays within `len`.
        self.pos = self.pos.saturating_add(buf.len() as u64);
        Ok(())
    }

    /// `N` bytes.
    pub(super) fn array<const N: usize>(&mut self, what: &dyn Display) -> Result<[u8; N]> {
        self.need(N as u64, what)?;
        let mut a = [0u8; N];
        self.fill(&mut a, what)?;
        Ok(a)
    }

    /// `n` bytes into a fallibly allocated vector.
    pub(super) fn bytes(&mut self, n: u64, what: &dyn Display) -> Result<Vec<u8>> {
        self.need(n, what)?;
        let Ok(len) = usize::try_from(n) else { bail!(Input, "{what} of {n} bytes does not fit this host") };
        let mut v = Vec::new();
        v.try_reserve_exact(len).map_err(|e| Error::new(ErrorKind::Input, format!("{what} of {n} bytes: {e}")))?;
        v.resize(len, 0);
        self.fill(&mut v, what)?;
        Ok(v)
    }

    /// A little-endian u32.
    pub(super) fn u32(&mut self, what: &dyn Display) -> Result<u32> {
        self.array(what).map(u32::from_le_bytes)
    }

    /// A little-endian u64.
    pub(super) fn u64(&mut self, what: &dyn Display) -> Result<u64> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// A GGUF string: a u64 byte length, then that many bytes of UTF-8.
    pub(super) fn string(&mut self, what: &dyn Display) -> Result<String> {
        let n = self.u64(&format_args!("length of {what}"))?;
        let at = self.pos;
        let b = self.bytes(n, what)?;
        String::from_utf8(b)
            .map_err(|e| Error::new(ErrorKind::Input, format!("{what} at offset {at} is not UTF-8: {e}")))
    }
}

/// An I/O failure while reading `what` (a short read is reported as truncation).
fn read_error(e: &std::io::Error, what: &dyn Display, at: u64) -> Error {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            Error::new(ErrorKind::Input, format!("truncated {what}: the source ended before offset {at} was filled"))
        }
        _ => Error::new(ErrorKind::Input, format!("cannot read {what} at offset {at}: {e}")),
    }
}

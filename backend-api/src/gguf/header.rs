//! The header: magic, version, counts, metadata, tensor infos, and where the data section starts.

use super::info::{read_info, GgufTensorInfo};
use super::reader::Reader;
use super::value::{read_type, read_value, GgufValue};
use crate::{bail, Error, ErrorKind, Result};
use std::collections::HashMap;
use std::io::Read;

/// `GGUF` as the first four bytes.
pub const MAGIC: [u8; 4] = *b"GGUF";

/// The data section's alignment when the metadata has no `general.alignment`.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// The fewest bytes one metadata pair takes (empty key, type, one-byte value), to bound the count.
const MIN_KV_BYTES: u64 = 8 + 4 + 1;

/// The fewest bytes one tensor info takes (empty name, no dims, type, offset), to bound the count.
const MIN_INFO_BYTES: u64 = 8 + 4 + 4 + 8;

/// Items in file order with an index by name (metadata keys and tensor names are unique).
pub(super) struct ByName<T> {
    pub items: Vec<T>,
    pub index: HashMap<String, usize>,
}

impl<T> ByName<T> {
    /// The item named `name`.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.index.get(name).and_then(|&i| self.items.get(i))
    }
}

/// Everything before the data: parsed and checked.
pub(super) struct Header {
    pub version: u32,
    pub metadata: ByName<(String, GgufValue)>,
    pub tensors: ByName<GgufTensorInfo>,
    pub alignment: u64,
    pub data_offset: u64,
}

/// Reads the header from `r` (positioned at the start of a file of `r`'s length) and checks every
/// tensor's data range against that length.
pub(super) fn read_header<R: Read>(r: &mut Reader<R>) -> Result<Header> {
    let version = read_preamble(r)?;
    let tensor_count = r.u64(&"tensor count")?;
    let kv_count = r.u64(&"metadata count")?;
    let metadata = read_metadata(r, kv_count)?;
    let alignment = alignment(&metadata)?;
    let tensors = read_infos(r, tensor_count)?;
    let data_offset = r.pos().checked_next_multiple_of(alignment).ok_or_else(|| overflow("data section start"))?;
    check_data_ranges(&tensors.items, data_offset, alignment, r.pos().saturating_add(r.remaining()))?;
    Ok(Header { version, metadata, tensors, alignment, data_offset })
}

/// Magic and version (2 or 3).
fn read_preamble<R: Read>(r: &mut Reader<R>) -> Result<u32> {
    let magic = r.array::<4>(&"magic")?;
    if magic != MAGIC {
        bail!(Input, "not a GGUF file: the magic is \"{}\", expected \"GGUF\"", magic.escape_ascii());
    }
    let version = r.u32(&"version")?;
    match version {
        2 | 3 => Ok(version),
        v if matches!(v.swap_bytes(), 2 | 3) => {
            bail!(
                Unsupported,
                "unsupported GGUF version {v}: a big-endian GGUF file? (supported: little-endian 2 and 3)"
            )
        }
        v => bail!(Unsupported, "unsupported GGUF version {v} (supported: 2 and 3)"),
    }
}

/// A vector of `count` items of at least `min_bytes` each, refused before allocating when the bytes
/// left cannot hold them.
fn bounded_vec<T, R: Read>(r: &Reader<R>, count: u64, min_bytes: u64, what: &str) -> Result<Vec<T>> {
    if count.checked_mul(min_bytes).is_none_or(|b| b > r.remaining()) {
        bail!(
            Input,
            "truncated file: {count} {what} cannot fit in the {} bytes left at offset {}",
            r.remaining(),
            r.pos()
        );
    }
    let mut v = Vec::new();
    let n = usize::try_from(count).map_err(|_| overflow(what))?;
    v.try_reserve_exact(n).map_err(|e| Error::new(ErrorKind::Input, format!("{count} {what}: {e}")))?;
    Ok(v)
}

/// The metadata pairs, in file order, with an index by key; a key given twice is an error.
fn read_metadata<R: Read>(r: &mut Reader<R>, count: u64) -> Result<ByName<(String, GgufValue)>> {
    let mut kvs = ByName { items: bounded_vec(r, count, MIN_KV_BYTES, "metadata pairs")?, index: HashMap::new() };
    for i in 0..count {
        let key = r.string(&format_args!("key of metadata pair {i}"))?;
        let what = format!("metadata {key:?}");
        let t = read_type(r, &what)?;
        let value = read_value(r, t, &what)?;
        if kvs.index.insert(key.clone(), kvs.items.len()).is_some() {
            bail!(Input, "duplicate metadata key {key:?} (pair {i})");
        }
        kvs.items.push((key, value));
    }
    Ok(kvs)
}

/// `general.alignment` if present (a u32 power of two), else 32.
fn alignment(kvs: &ByName<(String, GgufValue)>) -> Result<u64> {
    let Some((_, v)) = kvs.get("general.alignment") else { return Ok(DEFAULT_ALIGNMENT) };
    match v {
        GgufValue::U32(a) if a.is_power_of_two() => Ok(u64::from(*a)),
        GgufValue::U32(a) => bail!(Input, "general.alignment must be a power of two, found {a}"),
        other => bail!(Input, "general.alignment must be a u32, found a {}: {other:?}", other.value_type()),
    }
}

/// The tensor infos, in file order, with an index by name; a name given twice is an error.
fn read_infos<R: Read>(r: &mut Reader<R>, count: u64) -> Result<ByName<GgufTensorInfo>> {
    let mut infos = ByName { items: bounded_vec(r, count, MIN_INFO_BYTES, "tensor infos")?, index: HashMap::new() };
    for i in 0..count {
        let info = read_info(r, i)?;
        if let Some(&first) = infos.index.get(info.name()) {
            bail!(Input, "duplicate tensor name {:?} (tensors {first} and {i})", info.name());
        }
        infos.index.insert(info.name().to_string(), infos.items.len());
        infos.items.push(info);
    }
    Ok(infos)
}

/// Every tensor's data is aligned, lies inside the file and overlaps no other tensor's.
fn check_data_ranges(tensors: &[GgufTensorInfo], data_offset: u64, alignment: u64, file_len: u64) -> Result<()> {
    let mut ranges = Vec::new();
    ranges.try_reserve_exact(tensors.len()).map_err(|e| Error::new(ErrorKind::Input, e.to_string()))?;
    for t in tensors {
        let (offset, len) = (t.offset(), t.nbytes() as u64);
        if !offset.is_multiple_of(alignment) {
            bail!(Input, "tensor {:?}: data offset {offset} is not a multiple of the alignment {alignment}", t.name());
        }
        let end = data_offset.checked_add(offset).and_then(|s| s.checked_add(len));
        if end.is_none_or(|e| e > file_len) {
            bail!(
                Input,
                "tensor {:?}: its {len} data bytes at offset {offset} of the data section (which starts at byte \
                 {data_offset}) run past the end of the file ({file_len} bytes): truncated data or a bad offset",
                t.name()
            );
        }
        if len > 0 {
            ranges.push((offset, offset.saturating_add(len), t.name()));
        }
    }
    ranges.sort_unstable();
    for w in ranges.windows(2) {
        if let [(_, end_a, a), (start_b, _, b)] = w {
            if start_b < end_a {
                bail!(
                    Input,
                    "tensors {a:?} and {b:?} overlap: {b:?} starts at {start_b}, before {a:?} ends at {end_a}"
                );
            }
        }
    }
    Ok(())
}

fn overflow(what: &str) -> Error {
    Error::new(ErrorKind::Input, format!("{what} overflows"))
}

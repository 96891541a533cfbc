//! GGUF files (versions 2 and 3): metadata and weights by name, each tensor given as the op input a
//! host feeds (SPEC-ops §2.6.5–2.6.7).
//!
//! - F32, F16 and BF16 tensors become a [`Tensor`] of that dtype whose shape is the file's dims
//!   reversed (GGUF lists `ne[0]`, the fastest-varying dim, first; the IR is row-major).
//! - The GGML block types (`Q4_0` … `Q8_K`) become their [`QuantFormat`] and the raw blocks as one
//!   U8 tensor: a weight with `ne = [K, N]` is `w`: U8 `[N, K / QK · BB]`, the single weight input of
//!   `QuantMatMul` with that format; `ne = [K, N, E]` gives `[E, N, K / QK · BB]` for
//!   `QuantGroupedMatMul`. `K` must be a multiple of the format's block `QK`.
//! - A float weight matrix (`ne = [K, N]`) therefore comes out `[N, K]`, the orientation of
//!   PyTorch's `Linear.weight`; `MatMul` takes its `b` as `[K, N]`, so a graph that multiplies by it
//!   transposes it or contracts its last axis with `DotGeneral`.
//!
//! [`GgufFile::open`] reads only the header and reads each tensor's bytes when asked for it (the
//! file is never mapped); [`GgufFile::parse`] works on bytes already in memory. Every tensor's data
//! range is checked against the file's length when the header is read, and every length field
//! against the bytes left before anything is allocated for it, so a damaged or hostile file is an
//! error naming the file, the tensor or key, and what was expected and found.

mod array;
mod header;
mod info;
mod reader;
mod types;
mod value;

pub use array::{GgufArray, MAX_ARRAY_DEPTH};
pub use header::{DEFAULT_ALIGNMENT, MAGIC};
pub use info::{GgufTensorInfo, MAX_DIMS};
pub use types::{GgmlKind, GgmlType};
pub use value::{GgufValue, GgufValueType};

use crate::op::QuantFormat;
use crate::{bail, Error, ErrorKind, Result, Slot, Tensor};
use header::{read_header, Header};
use reader::Reader;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Mutex;

/// Where the tensor bytes are read from.
enum Data {
    /// The whole file, in memory.
    Bytes(Vec<u8>),
    /// The open file (locked so that a seek and its read stay together across threads).
    File(Mutex<File>),
}

/// A parsed GGUF file: version, metadata and tensor infos; tensor data is read on demand.
pub struct GgufFile {
    source: String,
    header: Header,
    data: Data,
}

/// One tensor as op input: its header and the tensor to feed.
#[derive(Clone, Debug, PartialEq)]
pub struct GgufTensor {
    /// The tensor's header in the file.
    pub info: GgufTensorInfo,
    /// The format of a block type (the `QuantMatMul` attribute), `None` for F32/F16/BF16.
    pub format: Option<QuantFormat>,
    /// The data: a float tensor with the dims reversed, or the raw blocks as U8 (see the module doc).
    pub tensor: Tensor,
}

impl std::fmt::Debug for GgufFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GgufFile")
            .field("source", &self.source)
            .field("version", &self.header.version)
            .field("metadata", &self.header.metadata.items.len())
            .field("tensors", &self.header.tensors.items.len())
            .finish()
    }
}

impl GgufFile {
    /// Opens `path` and reads its header; tensor data is read later by [`GgufFile::tensor`].
    pub fn open(path: impl AsRef<Path>) -> Result<GgufFile> {
        let path = path.as_ref();
        let source = path.display().to_string();
        let in_file = |e: Error| e.context(format_args!("GGUF file {source}"));
        let io = |e: std::io::Error| in_file(Error::new(ErrorKind::Input, format!("cannot open: {e}")));
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let header = read_header(&mut Reader::new(BufReader::new(&file), len)).map_err(in_file)?;
        Ok(GgufFile { source, header, data: Data::File(Mutex::new(file)) })
    }

    /// Parses a GGUF file held in memory; `source` names it in error messages.
    pub fn parse(bytes: Vec<u8>, source: impl Into<String>) -> Result<GgufFile> {
        let source = source.into();
        let header = read_header(&mut Reader::new(bytes.as_slice(), bytes.len() as u64))
            .map_err(|e| e.context(format_args!("GGUF {source}")))?;
        Ok(GgufFile { source, header, data: Data::Bytes(bytes) })
    }

    /// The name given in error messages (the path for [`GgufFile::open`]).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The format version (2 or 3).
    pub fn version(&self) -> u32 {
        self.header.version
    }

    /// The data section's alignment (`general.alignment`, default 32).
    pub fn alignment(&self) -> u64 {
        self.header.alignment
    }

    /// The offset of the data section from the start of the file.
    pub fn data_offset(&self) -> u64 {
        self.header.data_offset
    }

    /// The metadata value of `key`, if present.
    pub fn metadata(&self, key: &str) -> Option<&GgufValue> {
        self.header.metadata.get(key).map(|(_, v)| v)
    }

    /// Every metadata pair, in file order.
    pub fn metadata_pairs(&self) -> impl Iterator<Item = (&str, &GgufValue)> {
        self.header.metadata.items.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The tensor names, in file order.
    pub fn tensor_names(&self) -> impl Iterator<Item = &str> {
        self.header.tensors.items.iter().map(GgufTensorInfo::name)
    }

    /// Every tensor's header, in file order.
    pub fn tensor_infos(&self) -> &[GgufTensorInfo] {
        &self.header.tensors.items
    }

    /// The header of tensor `name`, or an `Input` error naming the file and the tensor.
    pub fn tensor_info(&self, name: &str) -> Result<&GgufTensorInfo> {
        match self.header.tensors.get(name) {
            Some(info) => Ok(info),
            None => bail!(
                Input,
                "GGUF {}: no tensor {name:?} (the file has {} tensors)",
                self.source,
                self.header.tensors.items.len()
            ),
        }
    }

    /// Checks that the tensor named like `slot` exists and that its op input has the slot's dtype
    /// and shape, before any data is read (how a host matches a file against a graph's params).
    pub fn check_param(&self, slot: &Slot) -> Result<()> {
        let info = self.tensor_info(&slot.name)?;
        info.check_param(slot).map_err(|e| e.context(format_args!("GGUF {}", self.source)))
    }

    /// Reads tensor `name` as its op input (see the module doc).
    pub fn tensor(&self, name: &str) -> Result<GgufTensor> {
        let info = self.tensor_info(name)?;
        let in_tensor = |e: Error| e.context(format_args!("GGUF {}: tensor {name:?}", self.source));
        let bytes = self.read_data(info).map_err(in_tensor)?;
        let tensor = Tensor::from_bytes(info.dtype(), info.shape(), bytes).map_err(in_tensor)?;
        Ok(GgufTensor { info: info.clone(), format: info.format(), tensor })
    }

    /// The data bytes of `info` (whose range was checked against the file's length).
    fn read_data(&self, info: &GgufTensorInfo) -> Result<Vec<u8>> {
        let start = self.header.data_offset.checked_add(info.offset()).ok_or_else(|| range_error(info))?;
        match &self.data {
            Data::Bytes(b) => {
                let range = usize::try_from(start).ok().and_then(|s| Some(s..s.checked_add(info.nbytes())?));
                let Some(slice) = range.and_then(|r| b.get(r)) else { return Err(range_error(info)) };
                let mut v = Vec::new();
                v.try_reserve_exact(slice.len()).map_err(|e| alloc_error(info, &e))?;
                v.extend_from_slice(slice);
                Ok(v)
            }
            Data::File(f) => read_file_range(f, start, info.nbytes()),
        }
    }
}

/// `len` bytes at offset `start` of the file, into a fallibly allocated vector; a file that has
/// shrunk since its header was read is a truncation error.
fn read_file_range(f: &Mutex<File>, start: u64, len: usize) -> Result<Vec<u8>> {
    let Ok(mut file) = f.lock() else { bail!(Input, "the file's lock was poisoned by a panic") };
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|e| Error::new(ErrorKind::Input, format!("cannot allocate {len} bytes: {e}")))?;
    let io = |e: std::io::Error| Error::new(ErrorKind::Input, format!("cannot read {len} data bytes at {start}: {e}"));
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    (&mut *file).take(len as u64).read_to_end(&mut v).map_err(io)?;
    if v.len() != len {
        bail!(
            Input,
            "truncated data: {len} bytes at {start} expected, the file ended after {} (did it change?)",
            v.len()
        );
    }
    Ok(v)
}

fn range_error(info: &GgufTensorInfo) -> Error {
    Error::new(ErrorKind::Input, format!("data offset {} is out of range", info.offset()))
}

fn alloc_error(info: &GgufTensorInfo, e: &std::collections::TryReserveError) -> Error {
    Error::new(ErrorKind::Input, format!("cannot allocate {} bytes: {e}", info.nbytes()))
}

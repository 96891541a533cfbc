//! A small GGUF writer for the tests, written from the format description (little-endian; magic,
//! version, counts, metadata, tensor infos, padding to the alignment, data).

use backend_api::gguf::{GgufArray, GgufValue, GgufValueType};

/// One tensor to write: the ggml type id, the dims as GGUF lists them and the raw data bytes.
#[derive(Clone)]
pub struct TensorSpec {
    pub name: String,
    pub type_id: u32,
    pub ne: Vec<u64>,
    pub data: Vec<u8>,
    /// The offset to write instead of the computed one (to test bad offsets).
    pub offset: Option<u64>,
}

impl TensorSpec {
    pub fn new(name: &str, type_id: u32, ne: &[u64], data: Vec<u8>) -> TensorSpec {
        TensorSpec { name: name.to_string(), type_id, ne: ne.to_vec(), data, offset: None }
    }
}

/// A file to write.
#[derive(Clone)]
pub struct Writer {
    pub version: u32,
    /// Written as a `general.alignment` u32 pair when set.
    pub alignment: Option<u32>,
    pub kvs: Vec<(String, GgufValue)>,
    pub tensors: Vec<TensorSpec>,
}

/// Where the parts of a written file start.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub metadata_start: usize,
    pub infos_start: usize,
    pub data_start: usize,
}

impl Writer {
    pub fn new(version: u32) -> Writer {
        Writer { version, alignment: None, kvs: Vec::new(), tensors: Vec::new() }
    }

    pub fn kv(mut self, key: &str, v: GgufValue) -> Writer {
        self.kvs.push((key.to_string(), v));
        self
    }

    pub fn tensor(mut self, t: TensorSpec) -> Writer {
        self.tensors.push(t);
        self
    }

    fn align(&self) -> usize {
        // An invalid alignment of 0 still gives a file to read (padded to 1).
        self.alignment.map_or(32, |a| (a as usize).max(1))
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.write().0
    }

    /// The file and where its parts start.
    pub fn write(&self) -> (Vec<u8>, Layout) {
        let mut kvs = self.kvs.clone();
        if let Some(a) = self.alignment {
            kvs.insert(0, ("general.alignment".to_string(), GgufValue::U32(a)));
        }
        let mut out = b"GGUF".to_vec();
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&(self.tensors.len() as u64).to_le_bytes());
        out.extend_from_slice(&(kvs.len() as u64).to_le_bytes());
        let metadata_start = out.len();
        for (k, v) in &kvs {
            string(&mut out, k);
            out.extend_from_slice(&type_id(v).to_le_bytes());
            value(&mut out, v);
        }
        let infos_start = out.len();
        let offsets = self.offsets();
        for (t, off) in self.tensors.iter().zip(&offsets) {
            string(&mut out, &t.name);
            out.extend_from_slice(&(t.ne.len() as u32).to_le_bytes());
            t.ne.iter().for_each(|d| out.extend_from_slice(&d.to_le_bytes()));
            out.extend_from_slice(&t.type_id.to_le_bytes());
            out.extend_from_slice(&t.offset.unwrap_or(*off as u64).to_le_bytes());
        }
        pad(&mut out, self.align());
        let data_start = out.len();
        for (t, off) in self.tensors.iter().zip(&offsets) {
            out.resize(data_start + off, 0);
            out.extend_from_slice(&t.data);
        }
        (out, Layout { metadata_start, infos_start, data_start })
    }

    /// Each tensor's offset in the data section: packed, each start aligned.
    fn offsets(&self) -> Vec<usize> {
        let mut at = 0usize;
        self.tensors
            .iter()
            .map(|t| {
                let o = at.next_multiple_of(self.align());
                at = o + t.data.len();
                o
            })
            .collect()
    }
}

fn pad(out: &mut Vec<u8>, align: usize) {
    out.resize(out.len().next_multiple_of(align), 0);
}

pub fn string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// A value's bytes without its type id.
pub fn value(out: &mut Vec<u8>, v: &GgufValue) {
    match v {
        GgufValue::U8(x) => out.extend_from_slice(&x.to_le_bytes()),
        GgufValue::I8(x) => out.extend_from_slice(&x.to_le_bytes()),
        GgufValue::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
        GgufValue::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
        GgufValue::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
        GgufValue::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
        GgufValue::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
        GgufValue::Bool(x) => out.push(u8::from(*x)),
        GgufValue::String(s) => string(out, s),
        GgufValue::Array(a) => array(out, a),
        GgufValue::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
        GgufValue::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
        GgufValue::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
    }
}

/// An array's bytes: element type id, count, elements.
pub fn array(out: &mut Vec<u8>, a: &GgufArray) {
    out.extend_from_slice(&elem_id(a.elem_type()).to_le_bytes());
    out.extend_from_slice(&(a.len() as u64).to_le_bytes());
    macro_rules! le {
        ($v:expr) => {
            $v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()))
        };
    }
    match a {
        GgufArray::U8(v) => le!(v),
        GgufArray::I8(v) => le!(v),
        GgufArray::U16(v) => le!(v),
        GgufArray::I16(v) => le!(v),
        GgufArray::U32(v) => le!(v),
        GgufArray::I32(v) => le!(v),
        GgufArray::F32(v) => le!(v),
        GgufArray::U64(v) => le!(v),
        GgufArray::I64(v) => le!(v),
        GgufArray::F64(v) => le!(v),
        GgufArray::Bool(v) => v.iter().for_each(|&x| out.push(u8::from(x))),
        GgufArray::String(v) => v.iter().for_each(|x| string(out, x)),
        GgufArray::Array(v) => v.iter().for_each(|x| array(out, x)),
    }
}

/// The value type ids of the format description (kept apart from the reader's own table).
pub fn type_id(v: &GgufValue) -> u32 {
    match v {
        GgufValue::U8(_) => 0,
        GgufValue::I8(_) => 1,
        GgufValue::U16(_) => 2,
        GgufValue::I16(_) => 3,
        GgufValue::U32(_) => 4,
        GgufValue::I32(_) => 5,
        GgufValue::F32(_) => 6,
        GgufValue::Bool(_) => 7,
        GgufValue::String(_) => 8,
        GgufValue::Array(..) => 9,
        GgufValue::U64(_) => 10,
        GgufValue::I64(_) => 11,
        GgufValue::F64(_) => 12,
    }
}

fn elem_id(t: GgufValueType) -> u32 {
    use GgufValueType as T;
    match t {
        T::U8 => 0,
        T::I8 => 1,
        T::U16 => 2,
        T::I16 => 3,
        T::U32 => 4,
        T::I32 => 5,
        T::F32 => 6,
        T::Bool => 7,
        T::String => 8,
        T::Array => 9,
        T::U64 => 10,
        T::I64 => 11,
        T::F64 => 12,
    }
}

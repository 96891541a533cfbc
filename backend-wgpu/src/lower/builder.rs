//! The lowering builder: what a family's kernel builders take and produce.
//!
//! A builder takes [`Operand`]s — a byte [`Window`] of a buffer, a dtype and dims — never a node's
//! input positions, so one lowering can chain other families' builders on scratch memory
//! (GEMM → softmax → GEMM inside one node) by passing them [`Lower::temp`] operands. Kernels are
//! appended in execution order with [`Lower::push`]; outputs that are another operand's memory
//! unchanged (Reshape, an identity copy, a contiguous slice) are declared with [`Lower::alias`].
//!
//! Buffers are named relative to the node ([`Buf`]); `compile.rs` resolves them to byte ranges of
//! the memory plan once every node is lowered.

use super::Grid;
use crate::device::DeviceCaps;
use crate::pipelines::BindKind;
use backend_api::{bail, ensure, DType, Result};
use shaders::params::{Params, ZeroParams};

mod splice;

/// A buffer a kernel binds, named relative to the node being lowered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Buf {
    /// The memory of the node's input `k`.
    In(usize),
    /// The memory of the node's output `k`.
    Out(usize),
    /// Scratch buffer `k` of this node, made by [`Lower::temp`] or [`Lower::temp_bytes`].
    Temp(usize),
    /// Control buffer `k` of this node, made by [`Lower::control`]: words that kernels write
    /// and later dispatches read as their workgroup counts ([`Grid::Indirect`]). Each is a
    /// buffer of its own, because one buffer cannot be a dispatch's indirect arguments and
    /// writable storage of the same dispatch, and every data binding is writable storage.
    Control(usize),
    /// The executable's param named by entry `k` of [`Lowering::params`]: a `Param` node inside
    /// a subgraph (§2.13), bound where the memory plan keeps that param.
    Param(usize),
    /// Constant `k` of [`Lowering::consts`]: a `Constant` node inside a subgraph, uploaded with
    /// the program's constants.
    Const(usize),
}

/// A byte range inside a [`Buf`]. Windows of one value let a later step bind a tensor larger than
/// one binding piecewise, and let a lowering read a slice without a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Window {
    /// The buffer.
    pub buf: Buf,
    /// Byte offset from the start of the buffer's value (a multiple of 4).
    pub offset: u64,
    /// Byte length.
    pub bytes: u64,
}

/// A dense row-major tensor in a window: what kernel builders read and write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    /// Where its bytes are.
    pub window: Window,
    /// Element type.
    pub dtype: DType,
    /// Static dims.
    pub dims: Vec<usize>,
}

/// Bytes of `numel` elements of `dtype`, checked.
pub fn tensor_bytes(dtype: DType, dims: &[usize]) -> Result<u64> {
    // An empty tensor has 0 bytes whatever its other dims (a product folded left to right would
    // overflow on [2^40, 2^40, 0] before it reaches the 0).
    if dims.contains(&0) {
        return Ok(0);
    }
    let b = backend_api::shape::nbytes(dtype, dims)?;
    match u64::try_from(b) {
        Ok(b) => Ok(b),
        Err(_) => bail!(DeviceLimit, "a {dtype} tensor of dims {dims:?} has more bytes than fit 64 bits"),
    }
}

/// The error for a workgroup count past 32 bits.
fn size_err(v: u64) -> backend_api::Error {
    backend_api::Error::new(backend_api::ErrorKind::DeviceLimit, format!("{v} workgroups do not fit 32 bits"))
}

/// `v` as a kernel's u32 param, or a `DeviceLimit` error naming `what`.
pub fn u32_of(v: usize, what: &str) -> Result<u32> {
    match u32::try_from(v) {
        Ok(x) => Ok(x),
        Err(_) => bail!(DeviceLimit, "{v} {what} do not fit the kernel's 32-bit indices"),
    }
}

/// `v` zero-padded into `N` vec4s of u32 (a WGSL `array<vec4<u32>, N>` params field), or a
/// `DeviceLimit` error when it has more than `4·N` entries or one exceeds 32 bits.
pub fn vec4s<const N: usize>(v: &[usize], what: &str) -> Result<[[u32; 4]; N]> {
    ensure!(v.len() <= 4 * N, DeviceLimit, "{} {what} exceed the kernel's {}", v.len(), 4 * N);
    let mut out = [[0u32; 4]; N];
    for (k, &x) in v.iter().enumerate() {
        out[k / 4][k % 4] = u32_of(x, what)?;
    }
    Ok(out)
}

impl Operand {
    /// The whole value in `buf`.
    pub fn whole(buf: Buf, dtype: DType, dims: Vec<usize>) -> Result<Operand> {
        let bytes = tensor_bytes(dtype, &dims)?;
        Ok(Operand { window: Window { buf, offset: 0, bytes }, dtype, dims })
    }

    /// Number of elements.
    /// Every operand is made through [`tensor_bytes`], so its count fits `usize`; saturating
    /// anyway, so that a hand-built operand cannot wrap.
    pub fn numel(&self) -> usize {
        self.dims.iter().fold(1usize, |n, &d| n.saturating_mul(d))
    }

    /// Number of u32 words its bytes cover (1- and 2-byte dtypes are packed in words).
    pub fn words(&self) -> u64 {
        self.window.bytes.div_ceil(4)
    }

    /// The same window read as other dims with the same element count (a reshape).
    pub fn reshaped(&self, dims: Vec<usize>) -> Result<Operand> {
        let bytes = tensor_bytes(self.dtype, &dims)?;
        ensure!(bytes == self.window.bytes, Shape, "cannot view {:?} as {dims:?}", self.dims);
        Ok(Operand { window: self.window, dtype: self.dtype, dims })
    }

    /// The `dims`-shaped tensor starting `elems` elements into this one. Its byte offset must be
    /// a multiple of 4 (a packed dtype's window starts on a word).
    pub fn slice(&self, elems: usize, dims: Vec<usize>) -> Result<Operand> {
        let start = tensor_bytes(self.dtype, &[elems])?;
        let bytes = tensor_bytes(self.dtype, &dims)?;
        let end = start.checked_add(bytes);
        if end.is_none_or(|e| e > self.window.bytes) {
            bail!(Shape, "a {dims:?} slice at element {elems} exceeds the {:?} operand", self.dims);
        }
        ensure!(start % 4 == 0, Shape, "a {} slice at element {elems} does not start on a 4-byte word", self.dtype);
        let window = Window { buf: self.window.buf, offset: self.window.offset + start, bytes };
        Ok(Operand { window, dtype: self.dtype, dims })
    }
}

/// One dispatch of one kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Complete WGSL source (entry point `main`).
    pub source: String,
    /// Storage bindings 1.. in order (binding 0 is the params uniform).
    pub bindings: Vec<(Window, BindKind)>,
    /// Bytes of the params uniform (padded by the runtime to 16).
    pub params: Vec<u8>,
    /// Invocation grid.
    pub grid: Grid,
    /// Arithmetic operations the dispatch performs, where the lowering knows them (a GEMM's
    /// 2·M·N·K, see [`product_flops`]); the profiler reports TFLOP/s for these. Never read by
    /// the kernel or the runtime.
    pub flops: Option<u64>,
}

/// The floating-point operations of one of `dispatches` equal dispatches of a batched matrix
/// product: 2·M·N·K per product (a multiply and an add), `batch` products, shared evenly.
/// `None` where the count overflows 64 bits or there are no dispatches.
pub fn product_flops(batch: usize, m: usize, n: usize, k: usize, dispatches: usize) -> Option<u64> {
    let total = [batch, m, n, k].iter().try_fold(2u64, |acc, &d| acc.checked_mul(u64::try_from(d).ok()?))?;
    total.checked_div(u64::try_from(dispatches).ok()?)
}

/// A body of kernels recorded once per iteration ([`Lower::repeat`]). Every iteration binds the
/// same windows and has the same grids; only the params differ, so the bind groups are made once
/// and each iteration selects its params block with a dynamic uniform offset.
#[derive(Clone, Debug)]
pub struct Repeat {
    /// The body's kernels, with iteration 0's params.
    pub body: Vec<Kernel>,
    /// `params[i][j]`: the params of kernel `j` in iteration `i` (`params.len()` iterations).
    pub params: Vec<Vec<Vec<u8>>>,
}

/// One step of a node's program, in execution order.
#[derive(Clone, Debug)]
pub enum Step {
    /// One dispatch.
    Kernel(Kernel),
    /// A body recorded once per iteration.
    Repeat(Repeat),
}

impl Step {
    /// Dispatches this step records.
    pub fn dispatches(&self) -> usize {
        match self {
            Step::Kernel(_) => 1,
            Step::Repeat(r) => r.body.len().saturating_mul(r.params.len()),
        }
    }
}

/// At most this many dispatches are recorded for one node, loops unrolled: recording costs host
/// time per dispatch even when a loop stops early (docs/DECISIONS.md, GPU-side control flow).
pub const MAX_RECORDED_DISPATCHES: usize = 65_536;

/// What lowering one node produced.
#[derive(Clone, Debug, Default)]
pub struct Lowering {
    /// Scratch buffer sizes in bytes (`Buf::Temp(k)` is entry `k`).
    pub temps: Vec<u64>,
    /// Control buffer sizes in bytes (`Buf::Control(k)` is entry `k`).
    pub controls: Vec<u64>,
    /// What runs, in order.
    pub steps: Vec<Step>,
    /// For each output, the window whose memory it is, if it aliases one (no kernel writes it).
    pub aliases: Vec<Option<Window>>,
    /// The params `Buf::Param(k)` names: (name, bytes of its declared type).
    pub params: Vec<(String, u64)>,
    /// The bytes of each `Buf::Const(k)`.
    pub consts: Vec<std::sync::Arc<[u8]>>,
}

impl Lowering {
    /// Every kernel in order, a repeated body's once (for tests that inspect a lowering).
    pub fn kernels(&self) -> Vec<&Kernel> {
        self.steps
            .iter()
            .flat_map(|s| match s {
                Step::Kernel(k) => std::slice::from_ref(k),
                Step::Repeat(r) => &r.body[..],
            })
            .collect()
    }

    /// Dispatches its steps record, repeated bodies once per iteration.
    pub fn dispatches(&self) -> usize {
        self.steps.iter().map(Step::dispatches).fold(0, usize::saturating_add)
    }
}

/// The builder one node is lowered with.
pub struct Lower<'a> {
    caps: &'a DeviceCaps,
    out: Lowering,
}

impl<'a> Lower<'a> {
    /// A builder for a node with `outputs` outputs.
    pub fn new(caps: &'a DeviceCaps, outputs: usize) -> Lower<'a> {
        Lower { caps, out: Lowering { aliases: vec![None; outputs], ..Lowering::default() } }
    }

    /// The device's capabilities and limits.
    pub fn caps(&self) -> &'a DeviceCaps {
        self.caps
    }

    /// A grid of `n` workgroups (one per row of a row kernel), folded into 2-D when `n` exceeds
    /// the device's per-dimension limit; the kernel skips the ids past `n`.
    pub fn workgroups(&self, n: usize) -> Result<Grid> {
        let max = usize::try_from(self.caps.limits.max_compute_workgroups_per_dimension).unwrap_or(usize::MAX).max(1);
        let x = n.clamp(1, max);
        let y = n.div_ceil(x).max(1);
        if y > max {
            bail!(DeviceLimit, "{n} workgroups exceed the device's {max}x{max} grid");
        }
        Ok(Grid::Workgroups([u32_of(x, "workgroups")?, u32_of(y, "workgroups")?, 1]))
    }

    /// A scratch buffer of `bytes` bytes, live only while this node runs.
    pub fn temp_bytes(&mut self, bytes: u64) -> Window {
        self.out.temps.push(bytes);
        Window { buf: Buf::Temp(self.out.temps.len() - 1), offset: 0, bytes }
    }

    /// A scratch tensor, live only while this node runs.
    pub fn temp(&mut self, dtype: DType, dims: Vec<usize>) -> Result<Operand> {
        let bytes = tensor_bytes(dtype, &dims)?;
        Ok(Operand { window: self.temp_bytes(bytes), dtype, dims })
    }

    /// A control buffer of `bytes` bytes (a multiple of 4), live only while this node runs:
    /// where kernels write the workgroup counts of [`Grid::Indirect`] dispatches. Its contents
    /// are undefined until a kernel of the node writes them.
    pub fn control(&mut self, bytes: u64) -> Result<Window> {
        ensure!(bytes > 0 && bytes.is_multiple_of(4), Shape, "a control buffer of {bytes} bytes is not whole words");
        self.out.controls.push(bytes);
        Ok(Window { buf: Buf::Control(self.out.controls.len() - 1), offset: 0, bytes })
    }

    /// Appends a dispatch.
    pub fn push(&mut self, k: Kernel) {
        self.out.steps.push(Step::Kernel(k));
    }

    /// Kernels pushed by `f`, taken out of the builder (temps and control buffers `f` makes stay).
    /// A repeated body `f` records (a loop inside a branch or inside another loop's body) comes
    /// out unrolled: its kernels once per iteration, each with that iteration's params.
    pub fn record(&mut self, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<Vec<Kernel>> {
        let outer = std::mem::take(&mut self.out.steps);
        let made = f(self);
        let inner = std::mem::replace(&mut self.out.steps, outer);
        made?;
        let total = inner.iter().map(Step::dispatches).fold(0, usize::saturating_add);
        self.check_recorded(total)?;
        let mut kernels = Vec::with_capacity(total);
        for s in inner {
            match s {
                Step::Kernel(k) => kernels.push(k),
                Step::Repeat(r) => {
                    for it in &r.params {
                        for (k, p) in r.body.iter().zip(it) {
                            kernels.push(Kernel { params: p.clone(), ..k.clone() });
                        }
                    }
                }
            }
        }
        Ok(kernels)
    }

    /// Appends `body` recorded `times` times with the same params every iteration (a `While`
    /// body, which does the same every iteration). The node may record at most
    /// [`MAX_RECORDED_DISPATCHES`] dispatches.
    pub fn repeat_same(&mut self, times: usize, body: Vec<Kernel>) -> Result<()> {
        self.repeat_kernels(times, body, |_, _, _| Ok(()))
    }

    /// Appends `body` recorded `times` times; `params(i, j, p)` rewrites `p`, kernel `j`'s params
    /// as recorded, for iteration `i` (a Scan's slice offsets). Windows and grids are the same
    /// in every iteration.
    pub fn repeat_kernels(
        &mut self,
        times: usize,
        body: Vec<Kernel>,
        mut params: impl FnMut(usize, usize, &mut Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        if times == 0 || body.is_empty() {
            return Ok(());
        }
        self.check_recorded(body.len().saturating_mul(times))?;
        let mut all = Vec::with_capacity(times);
        for i in 0..times {
            let mut it = Vec::with_capacity(body.len());
            for (j, k) in body.iter().enumerate() {
                let mut p = k.params.clone();
                params(i, j, &mut p)?;
                it.push(p);
            }
            all.push(it);
        }
        self.out.steps.push(Step::Repeat(Repeat { body, params: all }));
        Ok(())
    }

    /// The executable's param `name` (a `Param` node of a subgraph) as an operand.
    pub fn param(&mut self, name: &str, dtype: DType, dims: Vec<usize>) -> Result<Operand> {
        let bytes = tensor_bytes(dtype, &dims)?;
        let k = self.param_index(name, bytes);
        Ok(Operand { window: Window { buf: Buf::Param(k), offset: 0, bytes }, dtype, dims })
    }

    /// The index of param `name` in [`Lowering::params`], added on first use.
    fn param_index(&mut self, name: &str, bytes: u64) -> usize {
        match self.out.params.iter().position(|(n, _)| n == name) {
            Some(k) => k,
            None => {
                self.out.params.push((name.to_string(), bytes));
                self.out.params.len() - 1
            }
        }
    }

    /// A constant (a `Constant` node of a subgraph) as an operand: `data` holds its bytes.
    pub fn constant(&mut self, data: std::sync::Arc<[u8]>, dtype: DType, dims: Vec<usize>) -> Result<Operand> {
        let bytes = tensor_bytes(dtype, &dims)?;
        ensure!(
            u64::try_from(data.len()).is_ok_and(|n| n == bytes),
            Shape,
            "a {dtype} constant of dims {dims:?} holds {} bytes, not {bytes}",
            data.len()
        );
        self.out.consts.push(data);
        Ok(Operand { window: Window { buf: Buf::Const(self.out.consts.len() - 1), offset: 0, bytes }, dtype, dims })
    }

    /// Records `times` iterations of a body: `body(b, i)` pushes iteration `i`'s kernels. Every
    /// iteration must push the same kernels (source, bindings, grid) and differ only in their
    /// params: per-iteration offsets (a Scan's slice `i`) are params, not windows. Scratch
    /// memory the body makes is made once and shared by the iterations (each iteration must
    /// make the same). The whole node may record at most [`MAX_RECORDED_DISPATCHES`] dispatches.
    pub fn repeat(&mut self, times: usize, mut body: impl FnMut(&mut Self, usize) -> Result<()>) -> Result<()> {
        let (temps, controls) = (self.out.temps.len(), self.out.controls.len());
        let mut first: Option<Vec<Kernel>> = None;
        let mut params = Vec::with_capacity(times.min(MAX_RECORDED_DISPATCHES));
        for i in 0..times {
            // Every iteration makes its scratch at the same indices as iteration 0, so equal
            // windows mean equal memory.
            self.out.temps.truncate(temps);
            self.out.controls.truncate(controls);
            let kernels = self.record(|b| body(b, i))?;
            if let Some(f) = &first {
                same_structure(f, &kernels, i)?;
            }
            self.check_recorded(kernels.len().saturating_mul(i + 1))?;
            params.push(kernels.iter().map(|k| k.params.clone()).collect());
            first.get_or_insert(kernels);
        }
        match first {
            Some(body) if !body.is_empty() => self.out.steps.push(Step::Repeat(Repeat { body, params })),
            _ => {}
        }
        Ok(())
    }

    /// Errs when `more` dispatches on top of those recorded so far exceed the node's bound.
    fn check_recorded(&self, more: usize) -> Result<()> {
        let so_far: usize = self.out.steps.iter().map(Step::dispatches).fold(0, usize::saturating_add);
        let total = so_far.saturating_add(more);
        ensure!(
            total <= MAX_RECORDED_DISPATCHES,
            DeviceLimit,
            "the node records {total} dispatches (loops unrolled); at most {MAX_RECORDED_DISPATCHES} per node"
        );
        Ok(())
    }

    /// The workgroup counts `grid` dispatches on this device (an indirect grid has none here).
    pub fn workgroup_counts(&self, grid: Grid) -> Result<[u32; 3]> {
        let max = u64::from(self.caps.limits.max_compute_workgroups_per_dimension);
        match grid {
            Grid::Workgroups(w) => {
                if w.iter().any(|&x| u64::from(x) > max) {
                    bail!(DeviceLimit, "workgroup grid {w:?} exceeds {max} per dimension");
                }
                Ok(w)
            }
            Grid::Threads(n) => {
                let wg = n.div_ceil(256).max(1);
                let x = wg.min(max.max(1));
                let y = wg.div_ceil(x);
                if y > max {
                    bail!(DeviceLimit, "{n} invocations exceed the device's {max}x{max} workgroup grid");
                }
                let count = |v: u64| u32::try_from(v).map_err(|_| size_err(v));
                Ok([count(x)?, count(y)?, 1])
            }
            Grid::Indirect(_) => bail!(Shape, "an indirect grid's workgroup counts are known only on the GPU"),
        }
    }

    /// Appends a kernel that zeroes `o`'s words: packed (1- and 2-byte) dtypes are stored with
    /// atomic ORs, which need zeroed memory.
    pub fn zero(&mut self, o: &Operand) -> Result<()> {
        self.push(zero_kernel(o.window, o.words())?);
        Ok(())
    }

    /// Zeroes `o` when its dtype is stored packed.
    pub fn zero_if_packed(&mut self, o: &Operand) -> Result<()> {
        if shaders::is_packed(o.dtype) {
            self.zero(o)?;
        }
        Ok(())
    }

    /// Declares that output `out` is `src`'s memory unchanged: no kernel writes it.
    pub fn alias(&mut self, out: &Operand, src: &Operand) -> Result<()> {
        let Buf::Out(k) = out.window.buf else { bail!(Shape, "only a node output can alias another operand") };
        ensure!(out.window.offset == 0, Shape, "an aliased output must be its value's whole window");
        ensure!(
            src.window.bytes == out.window.bytes,
            Shape,
            "output {k} of {} bytes cannot alias {} bytes",
            out.window.bytes,
            src.window.bytes
        );
        if matches!(src.window.buf, Buf::Temp(_)) {
            bail!(Shape, "output {k} cannot alias scratch memory, which is freed when the node ends");
        }
        match self.out.aliases.get_mut(k) {
            Some(slot) => *slot = Some(src.window),
            None => bail!(Arity, "the node has no output {k}"),
        }
        Ok(())
    }

    /// The finished lowering.
    pub fn finish(self) -> Lowering {
        self.out
    }
}

/// Errs unless iteration `i`'s kernels match iteration 0's in everything but params.
fn same_structure(first: &[Kernel], now: &[Kernel], i: usize) -> Result<()> {
    ensure!(
        first.len() == now.len(),
        Shape,
        "iteration {i} of a repeated body pushes {} kernels, iteration 0 pushed {}",
        now.len(),
        first.len()
    );
    for (j, (a, b)) in first.iter().zip(now).enumerate() {
        let same = a.source == b.source && a.bindings == b.bindings && a.grid == b.grid;
        ensure!(
            same,
            Shape,
            "kernel {j} of iteration {i} of a repeated body differs from iteration 0 in more than its params"
        );
    }
    Ok(())
}

/// A kernel that zeroes `words` u32 words of `w`.
pub fn zero_kernel(w: Window, words: u64) -> Result<Kernel> {
    let Ok(n) = u32::try_from(words) else {
        bail!(DeviceLimit, "zeroing {words} words exceeds the kernel's u32 index")
    };
    let params = ZeroParams { n, ..ZeroParams::default() }.to_bytes();
    Ok(Kernel {
        source: shaders::zero_module(),
        bindings: vec![(w, BindKind::Write)],
        params,
        grid: Grid::Threads(words),
        flops: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_past_the_size_limit_are_shape_errors() {
        // 2^62 × 4 elements wrap to 0 in unchecked arithmetic; 2^61 F32 elements are 2^63 bytes.
        for dims in [vec![1usize << 62, 4], vec![1 << 61], vec![usize::MAX, 2]] {
            let e = Operand::whole(Buf::In(0), DType::F32, dims.clone()).unwrap_err();
            assert_eq!(e.kind(), backend_api::ErrorKind::Shape, "{dims:?}: {e}");
        }
        let x = Operand::whole(Buf::In(0), DType::F32, vec![4]).unwrap();
        assert!(x.reshaped(vec![(1 << 62) + 1, 4]).is_err());
        assert!(x.slice(usize::MAX, vec![1]).is_err());
        let caps = crate::device::DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        assert!(b.temp(DType::F64, vec![1 << 60, 1 << 4]).is_err());
    }

    #[test]
    fn slices_and_reshapes_stay_inside_their_window() {
        let x = Operand::whole(Buf::In(0), DType::F32, vec![4, 8]).unwrap();
        let row = x.slice(8, vec![8]).unwrap();
        assert_eq!(row.window, Window { buf: Buf::In(0), offset: 32, bytes: 32 });
        assert!(x.slice(30, vec![8]).is_err(), "past the end");
        assert!(x.reshaped(vec![32]).is_ok() && x.reshaped(vec![31]).is_err());
        let h = Operand::whole(Buf::In(1), DType::F16, vec![8]).unwrap();
        assert!(h.slice(1, vec![2]).is_err(), "a packed slice must start on a word");
        assert!(h.slice(2, vec![2]).is_ok());
        assert!(Operand::whole(Buf::In(0), DType::F32, vec![1 << 62, 8]).is_err(), "byte count overflows");
    }
}

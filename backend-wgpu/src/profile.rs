//! Per-kernel GPU profiles ([`WgpuExecutable::profile`](crate::WgpuExecutable::profile)): each
//! recorded dispatch's GPU time with its provenance (node, op, kernel), and the host-side costs of
//! the run, with a table formatter ([`Profile`]'s `Display`).

use crate::lower::Kernel;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Where a dispatch comes from and what it moves, fixed at compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The node of the graph as the host built it (legalisation may lower one node as several;
    /// each keeps its original node id).
    pub node: usize,
    /// The op label of the node that was lowered (`backend_api::spec::op_label`).
    pub op: String,
    /// The kernel: `file.wgsl:main#tag`, the WGSL file of its entry point and a hash of the
    /// rendered source that tells variants apart ([`shaders::kernel_name`]).
    pub kernel: String,
    /// Bytes the dispatch moves, estimated as the sum of the windows it binds for reading and
    /// writing (each counted once). A generic estimate: a kernel that reads a window several
    /// times (a GEMM's operands) or only part of it moves more or less.
    pub bytes: u64,
    /// Arithmetic operations, where the lowering knows them ([`Kernel::flops`]).
    pub flops: Option<u64>,
}

impl KernelInfo {
    /// The info of kernel `k`, lowered for node `node` (op `op`), named `kernel`
    /// (`shaders::kernel_name` of its source, which the caller computes once per source).
    pub(crate) fn of(node: usize, op: &str, k: &Kernel, kernel: String) -> KernelInfo {
        let bytes = k.bindings.iter().map(|(w, _)| w.bytes).fold(0u64, u64::saturating_add);
        KernelInfo { node, op: op.to_string(), kernel, bytes, flops: k.flops }
    }
}

/// How the GPU times were taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// One compute pass, a timestamp written between dispatches (`TIMESTAMP_QUERY_INSIDE_PASSES`).
    InsidePasses,
    /// Each dispatch in a compute pass of its own, timed at the pass's start and end
    /// (`TIMESTAMP_QUERY`). Pass boundaries add a little synchronisation to each dispatch.
    PassPerDispatch,
}

/// The host-side costs of one run, measured with `std::time::Instant`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostCosts {
    /// Writing the host inputs (queue writes or the mapped upload buffers).
    pub upload: Duration,
    /// Recording the dispatches and the copies into one command encoder.
    pub record: Duration,
    /// Submitting and waiting for the GPU to finish.
    pub submit_wait: Duration,
    /// Mapping the readback buffers and copying the outputs into host memory.
    pub readback: Duration,
}

impl HostCosts {
    /// The sum of the phases.
    pub fn total(&self) -> Duration {
        self.upload + self.record + self.submit_wait + self.readback
    }
}

/// One dispatch's GPU time.
#[derive(Clone, Debug)]
pub struct DispatchTime {
    /// Its provenance.
    pub info: Arc<KernelInfo>,
    /// GPU nanoseconds between its timestamps.
    pub gpu_ns: f64,
}

/// One profiled run: every dispatch in recorded order (a repeated body once per iteration).
#[derive(Clone, Debug, Default)]
pub struct ProfiledRun {
    /// Per-dispatch GPU times.
    pub dispatches: Vec<DispatchTime>,
    /// Host-side costs.
    pub host: HostCosts,
}

/// The result of profiling: several runs of the same executable.
#[derive(Clone, Debug)]
pub struct Profile {
    /// The device, as [`crate::DeviceCaps::description`].
    pub device: String,
    /// How GPU times were taken.
    pub timer: TimerKind,
    /// The runs, in order.
    pub runs: Vec<ProfiledRun>,
}

/// One row of a profile: the dispatches of one kernel of one node, per run.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelRow {
    /// Node id.
    pub node: usize,
    /// Op label.
    pub op: String,
    /// Kernel name.
    pub kernel: String,
    /// Dispatches per run.
    pub calls: usize,
    /// Median over runs of the GPU nanoseconds of these dispatches in that run.
    pub gpu_ns: f64,
    /// Bytes moved per run (the estimate of [`KernelInfo::bytes`]).
    pub bytes: u64,
    /// Operations per run, when every dispatch of the row knows them.
    pub flops: Option<u64>,
}

/// The median of `v` (0 for none).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn median_duration(v: impl Iterator<Item = Duration>) -> Duration {
    Duration::from_secs_f64(median(v.map(|d| d.as_secs_f64()).collect()).max(0.0))
}

impl Profile {
    /// One row per (node, op, kernel), sorted by GPU time, largest first.
    pub fn rows(&self) -> Vec<KernelRow> {
        type Key = (usize, String, String);
        let mut order: Vec<Key> = Vec::new();
        let mut rows: HashMap<Key, (KernelRow, Vec<f64>)> = HashMap::new();
        for (r, run) in self.runs.iter().enumerate() {
            for d in &run.dispatches {
                let key = (d.info.node, d.info.op.clone(), d.info.kernel.clone());
                let (row, per_run) = rows.entry(key.clone()).or_insert_with(|| {
                    order.push(key);
                    let row = KernelRow {
                        node: d.info.node,
                        op: d.info.op.clone(),
                        kernel: d.info.kernel.clone(),
                        calls: 0,
                        gpu_ns: 0.0,
                        bytes: 0,
                        flops: Some(0),
                    };
                    (row, vec![0.0; self.runs.len()])
                });
                if let Some(t) = per_run.get_mut(r) {
                    *t += d.gpu_ns;
                }
                // Calls, bytes and flops are the same every run: count the first run's.
                if r == 0 {
                    row.calls += 1;
                    row.bytes = row.bytes.saturating_add(d.info.bytes);
                    row.flops = row.flops.zip(d.info.flops).and_then(|(a, b)| a.checked_add(b));
                }
            }
        }
        let mut out: Vec<KernelRow> = order
            .into_iter()
            .filter_map(|k| rows.remove(&k))
            .map(|(mut row, per_run)| {
                row.gpu_ns = median(per_run);
                row
            })
            .collect();
        out.sort_by(|a, b| b.gpu_ns.total_cmp(&a.gpu_ns));
        out
    }

    /// The median over runs of each host phase.
    pub fn host_median(&self) -> HostCosts {
        let phase = |f: fn(&HostCosts) -> Duration| median_duration(self.runs.iter().map(|r| f(&r.host)));
        HostCosts {
            upload: phase(|h| h.upload),
            record: phase(|h| h.record),
            submit_wait: phase(|h| h.submit_wait),
            readback: phase(|h| h.readback),
        }
    }
}

/// `bytes / ns` in GB/s, or `-` for no time.
fn rate(amount: u64, ns: f64, scale: f64) -> String {
    if ns > 0.0 {
        format!("{:.2}", amount as f64 / ns / scale)
    } else {
        "-".to_string()
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

impl fmt::Display for Profile {
    /// A table: one row per kernel sorted by GPU time (node, op, kernel, calls per run, median GPU
    /// µs, % of the GPU total, bytes, GB/s, TFLOP/s where the flops are known), then the totals
    /// and the median host costs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rows = self.rows();
        let total = rows.iter().map(|r| r.gpu_ns).fold(0.0, |a, b| a + b);
        let timer = match self.timer {
            TimerKind::InsidePasses => "timestamps between dispatches",
            TimerKind::PassPerDispatch => "timestamps around one pass per dispatch",
        };
        writeln!(f, "device: {}", self.device)?;
        writeln!(f, "{} profiled run(s), {timer}; GPU times are medians over the runs", self.runs.len())?;
        let kw = rows.iter().map(|r| r.kernel.len()).chain([6]).max().unwrap_or(6);
        let ow = rows.iter().map(|r| r.op.len()).chain([2]).max().unwrap_or(2);
        writeln!(
            f,
            "{:>5}  {:<ow$}  {:<kw$}  {:>6}  {:>10}  {:>6}  {:>12}  {:>8}  {:>8}",
            "node", "op", "kernel", "calls", "GPU µs", "%", "bytes", "GB/s", "TFLOP/s"
        )?;
        for r in &rows {
            let pct = if total > 0.0 { 100.0 * r.gpu_ns / total } else { 0.0 };
            let tflops = r.flops.map_or_else(|| "-".to_string(), |fl| rate(fl, r.gpu_ns, 1e3));
            writeln!(
                f,
                "{:>5}  {:<ow$}  {:<kw$}  {:>6}  {:>10.2}  {:>6.1}  {:>12}  {:>8}  {:>8}",
                r.node,
                r.op,
                r.kernel,
                r.calls,
                r.gpu_ns / 1e3,
                pct,
                r.bytes,
                rate(r.bytes, r.gpu_ns, 1.0),
                tflops
            )?;
        }
        let calls: usize = rows.iter().map(|r| r.calls).sum();
        let bytes = rows.iter().map(|r| r.bytes).fold(0u64, u64::saturating_add);
        writeln!(
            f,
            "total: {calls} dispatches, GPU {:.2} µs, {bytes} bytes, {} GB/s",
            total / 1e3,
            rate(bytes, total, 1.0)
        )?;
        let h = self.host_median();
        writeln!(
            f,
            "host (median): upload {:.1} µs, record {:.1} µs, submit+wait {:.1} µs, readback {:.1} µs, total {:.1} µs",
            us(h.upload),
            us(h.record),
            us(h.submit_wait),
            us(h.readback),
            us(h.total())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(node: usize, kernel: &str, bytes: u64, flops: Option<u64>) -> Arc<KernelInfo> {
        Arc::new(KernelInfo { node, op: format!("Op{node}"), kernel: kernel.into(), bytes, flops })
    }

    fn run(times: &[(Arc<KernelInfo>, f64)], host_us: u64) -> ProfiledRun {
        let us = Duration::from_micros(host_us);
        ProfiledRun {
            dispatches: times.iter().map(|(i, t)| DispatchTime { info: i.clone(), gpu_ns: *t }).collect(),
            host: HostCosts { upload: us, record: us, submit_wait: us * 2, readback: us },
        }
    }

    #[test]
    fn rows_are_medians_sorted_by_gpu_time() {
        let (a, b) = (info(3, "linalg.wgsl:main#0", 1000, Some(2_000_000)), info(1, "zero.wgsl:main#1", 400, None));
        let p = Profile {
            device: "test".into(),
            timer: TimerKind::InsidePasses,
            runs: vec![
                run(&[(b.clone(), 100.0), (a.clone(), 1000.0), (b.clone(), 100.0)], 10),
                run(&[(b.clone(), 900.0), (a.clone(), 3000.0), (b.clone(), 100.0)], 30),
                run(&[(b.clone(), 150.0), (a.clone(), 2000.0), (b.clone(), 150.0)], 20),
            ],
        };
        let rows = p.rows();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].node, rows[0].calls, rows[0].gpu_ns, rows[0].bytes), (3, 1, 2000.0, 1000));
        assert_eq!(rows[0].flops, Some(2_000_000));
        // Per-run sums 200, 1000, 300: median 300.
        assert_eq!(
            (rows[1].node, rows[1].calls, rows[1].gpu_ns, rows[1].bytes, rows[1].flops),
            (1, 2, 300.0, 800, None)
        );
        assert_eq!(p.host_median().submit_wait, Duration::from_micros(40));
        let text = p.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].contains("GPU µs") && lines[2].contains("TFLOP/s"), "{text}");
        assert!(lines[3].contains("linalg.wgsl:main#0") && lines[3].contains("87.0"), "{text}");
        // 2e6 flops in 2000 ns: 1 TFLOP/s; 1000 bytes in 2000 ns: 0.5 GB/s.
        assert!(lines[3].trim_end().ends_with("1.00") && lines[3].contains("0.50"), "{text}");
        assert!(lines[4].contains("zero.wgsl") && lines[4].trim_end().ends_with('-'), "{text}");
        assert!(text.contains("total: 3 dispatches, GPU 2.30 µs, 1800 bytes"), "{text}");
        assert!(text.contains("submit+wait 40.0 µs") && text.contains("total 100.0 µs"), "{text}");
    }

    #[test]
    fn empty_profiles_format() {
        let p = Profile { device: "d".into(), timer: TimerKind::PassPerDispatch, runs: vec![] };
        assert!(p.rows().is_empty());
        assert!(p.to_string().contains("total: 0 dispatches, GPU 0.00 µs, 0 bytes, - GB/s"), "{p}");
    }
}

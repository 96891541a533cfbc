//! GPU timestamps around every dispatch of a run, for the profiler only: a normal run records
//! none of this. Timestamps are written between dispatches of one pass where the device has
//! `TIMESTAMP_QUERY_INSIDE_PASSES`, else each dispatch gets a pass of its own timed at its start
//! and end; they are resolved into a buffer, copied to a mapped staging buffer and converted with
//! the queue's timestamp period.

use crate::compile::{Program, ProgramStep};
use crate::device::DeviceContext;
use crate::exec::dispatch;
use crate::instance::Instance;
use crate::params::ParamStore;
use crate::profile::TimerKind;
use crate::resident::read_mapped;
use crate::scope;
use backend_api::{bail, Result};

/// Queries per query set (wgpu's maximum).
const SET_QUERIES: u32 = wgpu::QUERY_SET_MAX_QUERIES;

/// Query sets and buffers for timing every dispatch of one program.
pub(crate) struct Timer {
    kind: TimerKind,
    /// `(dispatch, iteration)` in recorded order.
    order: Vec<(usize, usize)>,
    sets: Vec<(wgpu::QuerySet, u32)>,
    resolve: wgpu::Buffer,
    staging: wgpu::Buffer,
    period_ns: f64,
}

/// Every dispatch of `program` in the order a run records it, with its iteration.
fn recorded_order(program: &Program) -> Vec<(usize, usize)> {
    let mut order = Vec::with_capacity(program.recorded_dispatches());
    for step in &program.steps {
        match *step {
            ProgramStep::Dispatch(k) => order.push((k, 0)),
            ProgramStep::Repeat { times, first, count } => {
                for i in 0..times {
                    order.extend((first..first + count).map(|k| (k, i)));
                }
            }
        }
    }
    order
}

impl Timer {
    /// A timer for `program`; errs (`Unsupported`) where the device has no timestamp queries.
    pub fn new(ctx: &DeviceContext, program: &Program) -> Result<Timer> {
        let caps = &ctx.caps;
        let kind = match (caps.timestamps, caps.timestamps_in_passes) {
            (true, true) => TimerKind::InsidePasses,
            (true, false) => TimerKind::PassPerDispatch,
            (false, _) => bail!(
                Unsupported,
                "profiling needs GPU timestamp queries (TIMESTAMP_QUERY), which {} lacks or which \
                 WgpuOptions::features turned off",
                caps.description
            ),
        };
        let order = recorded_order(program);
        let n = order.len();
        let queries = match kind {
            TimerKind::InsidePasses => n.checked_add(1),
            TimerKind::PassPerDispatch => n.checked_mul(2),
        };
        let Some(queries) = queries.and_then(|q| u32::try_from(q).ok()) else {
            bail!(DeviceLimit, "{n} dispatches need more timestamp queries than fit 32 bits")
        };
        let mut sets = Vec::new();
        let mut left = queries;
        while left > 0 {
            let count = left.min(SET_QUERIES);
            let set = scope::scoped(
                ctx,
                || "a timestamp query set".to_string(),
                || {
                    ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
                        label: Some("profile"),
                        ty: wgpu::QueryType::Timestamp,
                        count,
                    })
                },
            )?;
            sets.push((set, count));
            left -= count;
        }
        // Every set but the last is full, so query q resolves to byte 8·q.
        let bytes = u64::from(queries).max(1) * u64::from(wgpu::QUERY_SIZE);
        let size = bytes.next_multiple_of(wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT);
        let what = || format!("the timestamp buffers of {n} dispatches");
        let resolve = scope::buffer(
            ctx,
            "profile resolve",
            size,
            wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            &what,
        )?;
        let staging = scope::buffer(
            ctx,
            "profile readback",
            size,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            &what,
        )?;
        Ok(Timer { kind, order, sets, resolve, staging, period_ns: f64::from(caps.timestamp_period_ns) })
    }

    /// How the times are taken.
    pub fn kind(&self) -> TimerKind {
        self.kind
    }

    /// The dispatch index of each timed dispatch, in recorded order.
    pub fn dispatches(&self) -> impl Iterator<Item = usize> + '_ {
        self.order.iter().map(|&(k, _)| k)
    }

    /// Query `q`'s set and index in it.
    fn query(&self, q: usize) -> Result<(&wgpu::QuerySet, u32)> {
        let per = usize::try_from(SET_QUERIES).unwrap_or(usize::MAX);
        let (set, idx) = (q / per, q % per);
        match (self.sets.get(set), u32::try_from(idx)) {
            (Some((s, _)), Ok(i)) => Ok((s, i)),
            _ => bail!(Device, "timestamp query {q} was not allocated"),
        }
    }

    /// Records the program like a normal run does (same dispatches, same order, same bind
    /// groups), with timestamps, then resolves them into the staging buffer.
    pub fn record(&self, inst: &Instance, params: &ParamStore, enc: &mut wgpu::CommandEncoder) -> Result<()> {
        match self.kind {
            TimerKind::InsidePasses => {
                let mut pass =
                    enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
                if !self.order.is_empty() {
                    let (s, i) = self.query(0)?;
                    pass.write_timestamp(s, i);
                }
                for (j, &(k, it)) in self.order.iter().enumerate() {
                    dispatch(inst, params, &mut pass, k, it)?;
                    let (s, i) = self.query(j + 1)?;
                    pass.write_timestamp(s, i);
                }
            }
            TimerKind::PassPerDispatch => {
                for (j, &(k, it)) in self.order.iter().enumerate() {
                    // Queries 2j and 2j+1 lie in one set: sets hold an even number of queries.
                    let (s, begin) = self.query(2 * j)?;
                    let writes = wgpu::ComputePassTimestampWrites {
                        query_set: s,
                        beginning_of_pass_write_index: Some(begin),
                        end_of_pass_write_index: Some(begin + 1),
                    };
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: None,
                        timestamp_writes: Some(writes),
                    });
                    dispatch(inst, params, &mut pass, k, it)?;
                }
            }
        }
        let mut offset = 0u64;
        for (set, count) in &self.sets {
            enc.resolve_query_set(set, 0..*count, &self.resolve, offset);
            offset += u64::from(*count) * u64::from(wgpu::QUERY_SIZE);
        }
        if offset > 0 {
            enc.copy_buffer_to_buffer(&self.resolve, 0, &self.staging, 0, offset);
        }
        Ok(())
    }

    /// The GPU nanoseconds of each dispatch, in recorded order (after the run's submit). A
    /// timestamp earlier than the one before it (a wrapped counter) reads as 0.
    pub fn read(&self, ctx: &DeviceContext) -> Result<Vec<f64>> {
        if self.order.is_empty() {
            return Ok(Vec::new());
        }
        let ticks = read_mapped(ctx, &self.staging, |view| {
            Ok(view.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect::<Vec<_>>())
        })?;
        let at = |q: usize| ticks.get(q).copied().unwrap_or(0);
        let span = |a: usize, b: usize| at(b).saturating_sub(at(a)) as f64 * self.period_ns;
        Ok((0..self.order.len())
            .map(|j| match self.kind {
                TimerKind::InsidePasses => span(j, j + 1),
                TimerKind::PassPerDispatch => span(2 * j, 2 * j + 1),
            })
            .collect())
    }
}

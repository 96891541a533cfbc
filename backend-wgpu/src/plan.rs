//! Memory plan: every value gets a byte range sized by its real dtype. Activations and graph inputs
//! share arena buffers and reuse memory once their last reader has run (liveness); params and
//! constants live in buffers of their own that persist across runs.

use backend_api::{bail, Result};

/// Where a tensor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Home {
    /// Arena buffer `k`.
    Arena(usize),
    /// The param buffer `k`.
    Param(usize),
    /// The constant buffer `k`.
    Const(usize),
}

/// A tensor's byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Loc {
    /// Its buffer.
    pub home: Home,
    /// Byte offset (aligned to the device's storage offset alignment).
    pub offset: u64,
    /// Byte size, a multiple of 4 and at least 16 (empty tensors still get a bindable range).
    pub size: u64,
}

/// One arena allocation request: `size` bytes live from step `def` through step `last_use`.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// Bytes needed.
    pub size: u64,
    /// Step that writes it (inputs: 0, before every kernel).
    pub def: usize,
    /// Last step that reads it (`usize::MAX` for graph outputs).
    pub last_use: usize,
}

/// Rounds a tensor's byte size to a bindable size: a multiple of 4, and at least 16 so that an
/// empty tensor still gets a range a kernel with 8- or 16-byte elements accepts.
/// Errs (`DeviceLimit`) only for sizes within 3 bytes of `u64::MAX`.
pub fn bindable(bytes: u64) -> Result<u64> {
    match bytes.div_ceil(4).max(4).checked_mul(4) {
        Some(b) => Ok(b),
        None => bail!(DeviceLimit, "a tensor of {bytes} bytes has no 64-bit bindable size"),
    }
}

/// Assigns arena offsets to requests (first fit, in request order, which is definition order).
/// A range is free for a request at step `s` once its last reader ran strictly before `s`.
/// Arenas are at most `max_buffer` bytes; returns the locations and the arena sizes.
pub fn assign(reqs: &[Request], align: u64, max_buffer: u64, reuse: bool) -> Result<(Vec<Loc>, Vec<u64>)> {
    struct Live {
        offset: u64,
        end: u64,
        last_use: usize,
    }
    let mut arenas: Vec<(Vec<Live>, u64)> = Vec::new();
    let mut locs = vec![Loc { home: Home::Arena(0), offset: 0, size: 0 }; reqs.len()];
    // Requests come in node order, but graph inputs (def 0) may be declared after other nodes:
    // place them in definition order so that "free before step s" is decided correctly.
    let mut order: Vec<usize> = (0..reqs.len()).collect();
    order.sort_by_key(|&i| reqs.get(i).map_or(0, |r| r.def));
    for (ri, r) in order.iter().filter_map(|&ri| Some((ri, reqs.get(ri)?))) {
        if r.size > max_buffer {
            bail!(
                DeviceLimit,
                "a tensor of {} bytes (request {ri}, made at step {}) exceeds the device's max_buffer_size {max_buffer}",
                r.size,
                r.def
            );
        }
        let mut placed = None;
        for (ai, (lives, size)) in arenas.iter_mut().enumerate() {
            if reuse {
                lives.retain(|l| l.last_use >= r.def);
            }
            lives.sort_by_key(|l| l.offset);
            // Sizes are at most `max_buffer` here, so sums of two stay far below `u64::MAX`;
            // checked anyway, a failed sum meaning "does not fit this arena".
            let mut cursor = Some(0u64);
            let mut found = None;
            for l in lives.iter() {
                let (Some(c), Some(aligned)) = (cursor, l.end.checked_next_multiple_of(align.max(1))) else { break };
                if c.checked_add(r.size).is_some_and(|e| e <= l.offset) {
                    found = Some(c);
                    break;
                }
                cursor = Some(c.max(aligned));
            }
            let off = found.or(cursor);
            if let Some((off, end)) =
                off.and_then(|o| Some((o, o.checked_add(r.size)?))).filter(|&(_, e)| e <= max_buffer)
            {
                lives.push(Live { offset: off, end, last_use: r.last_use });
                *size = (*size).max(end);
                placed = Some(Loc { home: Home::Arena(ai), offset: off, size: r.size });
                break;
            }
        }
        let loc = match placed {
            Some(l) => l,
            None => {
                arenas.push((vec![Live { offset: 0, end: r.size, last_use: r.last_use }], r.size));
                Loc { home: Home::Arena(arenas.len() - 1), offset: 0, size: r.size }
            }
        };
        if let Some(l) = locs.get_mut(ri) {
            *l = loc;
        }
    }
    Ok((locs, arenas.into_iter().map(|(_, s)| s).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_memory_after_last_use_only() {
        let reqs = [
            Request { size: 100, def: 0, last_use: 1 },
            Request { size: 100, def: 1, last_use: 2 },
            Request { size: 100, def: 2, last_use: 3 },
        ];
        let (locs, sizes) = assign(&reqs, 256, 1 << 20, true).unwrap();
        assert_ne!(locs[0].offset, locs[1].offset, "live at step 1 together");
        assert_eq!(locs[2].offset, locs[0].offset, "first range is free at step 2");
        assert_eq!(sizes.len(), 1);
        let (locs, _) = assign(&reqs, 256, 1 << 20, false).unwrap();
        assert_ne!(locs[2].offset, locs[0].offset);
    }

    #[test]
    fn late_declared_inputs_do_not_overlap_live_ranges() {
        // node order: input a (def 0, read at 3), activation (def 2, read at 3), input b (def 0, read at 3)
        let reqs = [
            Request { size: 64, def: 0, last_use: 3 },
            Request { size: 64, def: 2, last_use: 3 },
            Request { size: 64, def: 0, last_use: 3 },
        ];
        let (locs, _) = assign(&reqs, 256, 1 << 20, true).unwrap();
        let mut offs: Vec<u64> = locs.iter().map(|l| l.offset).collect();
        offs.sort();
        offs.dedup();
        assert_eq!(offs.len(), 3, "{locs:?}");
    }

    #[test]
    fn sizes_near_u64_max_are_errors_not_wraps() {
        assert_eq!(bindable(0).unwrap(), 16);
        assert_eq!(bindable(u64::MAX - 3).unwrap(), u64::MAX - 3);
        assert_eq!(bindable(u64::MAX).unwrap_err().kind(), backend_api::ErrorKind::DeviceLimit);
        // Requests whose sums overflow u64 open new arenas or are refused; nothing wraps.
        let half = u64::MAX / 2 + 1;
        let reqs = [Request { size: half, def: 0, last_use: 9 }, Request { size: half, def: 0, last_use: 9 }];
        let (locs, sizes) = assign(&reqs, 256, u64::MAX, true).unwrap();
        assert_eq!((locs[1].home, sizes), (Home::Arena(1), vec![half, half]));
        let e = assign(&reqs, 256, half - 1, true).unwrap_err();
        assert!(e.to_string().contains("max_buffer_size"), "{e}");
    }

    #[test]
    fn splits_into_arenas_and_refuses_oversized() {
        let reqs = [Request { size: 600, def: 0, last_use: 9 }, Request { size: 600, def: 0, last_use: 9 }];
        let (locs, sizes) = assign(&reqs, 256, 1000, true).unwrap();
        assert_eq!(sizes.len(), 2);
        assert_eq!(locs[1].home, Home::Arena(1));
        assert!(assign(&[Request { size: 2000, def: 0, last_use: 0 }], 256, 1000, true).is_err());
    }
}

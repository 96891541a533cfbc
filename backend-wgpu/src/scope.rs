//! Creating wgpu objects without wgpu's default error handler, which panics: every creation that
//! can fail (a buffer, a bind group, a pipeline) runs inside an out-of-memory and a validation
//! error scope, and what they catch becomes an `Err`.

use crate::device::DeviceContext;
use backend_api::{bail, Error, ErrorKind, Result};

/// Runs `f` inside an out-of-memory and a validation error scope of `ctx`'s device. A caught
/// out-of-memory error becomes `DeviceLimit`, a validation error `Device`; `what` names what was
/// being made (the tensors, the buffer) for the message.
pub(crate) fn scoped<T>(ctx: &DeviceContext, what: impl FnOnce() -> String, f: impl FnOnce() -> T) -> Result<T> {
    let oom = ctx.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let out = f();
    // Scopes are a stack: the inner one is popped first.
    let invalid = pollster::block_on(validation.pop());
    let out_of_memory = pollster::block_on(oom.pop());
    if let Some(e) = out_of_memory {
        bail!(DeviceLimit, "the device ran out of memory making {}: {e}", what());
    }
    if let Some(e) = invalid {
        bail!(Device, "the device refused {}: {e}", what());
    }
    Ok(out)
}

/// Errs (`DeviceLimit`) when a buffer of `size` bytes exceeds the device's `max_buffer_size`;
/// `what` names the buffer for the message.
pub(crate) fn check_buffer_size(ctx: &DeviceContext, size: u64, what: impl FnOnce() -> String) -> Result<()> {
    let max = ctx.caps.limits.max_buffer_size;
    if size > max {
        bail!(DeviceLimit, "{} needs a buffer of {size} bytes; the device's max_buffer_size is {max}", what());
    }
    Ok(())
}

/// A buffer of `size` bytes with `usage`, checked against the device's limits and made inside
/// error scopes (see [`scoped`]).
pub(crate) fn buffer(
    ctx: &DeviceContext,
    label: &str,
    size: u64,
    usage: wgpu::BufferUsages,
    what: &dyn Fn() -> String,
) -> Result<wgpu::Buffer> {
    check_buffer_size(ctx, size, what)?;
    scoped(ctx, what, || {
        ctx.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false })
    })
}

/// A buffer holding `contents`, checked and scoped like [`buffer`].
pub(crate) fn buffer_init(
    ctx: &DeviceContext,
    label: &str,
    contents: &[u8],
    usage: wgpu::BufferUsages,
    what: &dyn Fn() -> String,
) -> Result<wgpu::Buffer> {
    // Not `DeviceExt::create_buffer_init`: it panics when the buffer comes back invalid (e.g.
    // after the driver failed an earlier pipeline and the device was lost), where this errs.
    let padded = contents.len().div_ceil(4).checked_mul(4);
    let Some(size) = padded.and_then(|n| u64::try_from(n).ok()) else {
        bail!(DeviceLimit, "{} exceeds 64 bits of bytes", what())
    };
    check_buffer_size(ctx, size, what)?;
    let buf = scoped(ctx, what, || {
        ctx.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: true })
    })?;
    {
        let mut view = buf
            .get_mapped_range_mut(..)
            .map_err(|e| Error::new(ErrorKind::Device, format!("filling {}: {e}", what())))?;
        view.slice(..contents.len()).copy_from_slice(contents);
        // At most 3 bytes of padding (a mapped-at-creation buffer starts zeroed; made explicit).
        let pad = [0u8; 3];
        if let Some(zeros) = pad.get(..padding(contents.len())).filter(|z| !z.is_empty()) {
            view.slice(contents.len()..).copy_from_slice(zeros);
        }
    }
    buf.unmap();
    Ok(buf)
}

/// Bytes that round `n` up to a multiple of 4.
fn padding(n: usize) -> usize {
    (4 - n % 4) % 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{LimitOverrides, WgpuOptions};
    use backend_api::ErrorKind;

    #[test]
    fn a_refused_creation_is_an_err_not_a_panic() {
        let limits = LimitOverrides { max_buffer_size: Some(4096), ..Default::default() };
        let ctx = DeviceContext::open(&WgpuOptions { limits, ..Default::default() }).expect("a wgpu adapter");
        let usage = wgpu::BufferUsages::STORAGE;
        // Past the limit: refused before wgpu sees it, naming the buffer.
        let e = buffer(&ctx, "big", 8192, usage, &|| "tensor \"x\"".into()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DeviceLimit);
        assert!(e.to_string().contains("tensor \"x\"") && e.to_string().contains("8192"), "{e}");
        // Made unchecked inside the scopes: wgpu's validation error is caught, not a panic.
        let e = scoped(
            &ctx,
            || "an oversized buffer".into(),
            || {
                ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: 8192,
                    usage,
                    mapped_at_creation: false,
                })
            },
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Device);
        assert!(e.to_string().contains("an oversized buffer"), "{e}");
        // A mappable storage buffer is invalid whatever its size.
        let bad = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE;
        assert_eq!(buffer(&ctx, "bad", 64, bad, &|| "b".into()).unwrap_err().kind(), ErrorKind::Device);
        assert!(buffer(&ctx, "ok", 4096, usage, &|| "ok".into()).is_ok());
    }

    #[test]
    fn initialised_buffers_are_padded_and_refusals_are_errs() {
        let limits = LimitOverrides { max_buffer_size: Some(4096), ..Default::default() };
        let ctx = DeviceContext::open(&WgpuOptions { limits, ..Default::default() }).expect("a wgpu adapter");
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let b = buffer_init(&ctx, "five", &[1, 2, 3, 4, 5], usage, &|| "five bytes".into()).unwrap();
        assert_eq!(b.size(), 8);
        let e = buffer_init(&ctx, "big", &[0; 4097], usage, &|| "a big constant".into()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DeviceLimit, "{e}");
        assert!(buffer_init(&ctx, "empty", &[], usage, &|| "nothing".into()).is_ok());
        assert_eq!((padding(0), padding(5), padding(8)), (0, 3, 0));
    }
}

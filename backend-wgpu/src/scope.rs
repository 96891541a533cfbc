//! Creating wgpu objects without wgpu's default error handler, which panics: every creation that
//! can fail (a buffer, a bind group, a pipeline) runs inside an out-of-memory and a validation
//! error scope, and what they catch becomes an `Err`.

use crate::device::DeviceContext;
use backend_api::{bail, Result};

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
    use wgpu::util::DeviceExt;
    let Ok(size) = u64::try_from(contents.len()) else { bail!(DeviceLimit, "{} exceeds 64 bits of bytes", what()) };
    check_buffer_size(ctx, size, what)?;
    scoped(ctx, what, || {
        ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents, usage })
    })
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
}

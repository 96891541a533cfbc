//! `wgml backends`: the registered backends (each created once to show its device) and the
//! adapters wgpu sees, with the limits that shape kernels and the optional features.

use anyhow::Result;
use backend_wgpu::adapters::{describe_adapters, AdapterDescription};
use backend_wgpu::ApiChoice;
use std::process::ExitCode;

/// Features per printed line.
const FEATURES_PER_LINE: usize = 4;

/// Runs the subcommand. A backend that cannot be created here is listed with the reason; that is
/// information, not a failure of the command.
pub fn backends() -> Result<ExitCode> {
    let registered = backend_api::available();
    let width = registered.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    println!("registered backends:");
    for (name, description) in &registered {
        println!("  {name:<width$}  {description}");
        match backend_api::create(name) {
            Ok(b) => {
                let caps = b.capabilities();
                let dtypes: Vec<&str> = caps.dtypes.iter().map(|d| d.name()).collect();
                println!("  {:width$}  device: {}", "", caps.device);
                println!("  {:width$}  dtypes: {}", "", dtypes.join(" "));
            }
            Err(e) => println!("  {:width$}  unavailable here: {e}", ""),
        }
    }
    let adapters = describe_adapters(ApiChoice::Primary);
    println!("\nwgpu adapters ({}):", adapters.len());
    if adapters.is_empty() {
        println!(
            "  none; on Linux without a GPU install Mesa's software Vulkan driver (mesa-vulkan-drivers libvulkan1)"
        );
    }
    for a in &adapters {
        print_adapter(a);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_adapter(a: &AdapterDescription) {
    println!("  {} ({}, {}), driver {}", a.name, a.backend, a.device_type, a.driver);
    for (name, value) in a.limits.entries() {
        println!("    {name:<40} {value:>14}{}", human_bytes(name, value));
    }
    println!("    features ({}):", a.features.len());
    for chunk in a.features.chunks(FEATURES_PER_LINE) {
        println!("      {}", chunk.join(" "));
    }
}

/// ` (128 MiB)` for byte-sized limits of at least 1 KiB; empty otherwise.
fn human_bytes(name: &str, value: u64) -> String {
    if !name.ends_with("_size") || value < 1024 {
        return String::new();
    }
    let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = value as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < units.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!(" ({v:.0} {})", units[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_limits_read_as_sizes() {
        assert_eq!(human_bytes("max_buffer_size", 128 << 20), " (128 MiB)");
        assert_eq!(human_bytes("max_compute_workgroup_storage_size", 32768), " (32 KiB)");
        assert_eq!(human_bytes("max_compute_workgroups_per_dimension", 65535), "");
    }
}

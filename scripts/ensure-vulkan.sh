#!/usr/bin/env bash
# Makes sure a Vulkan adapter exists. With no GPU driver, installs Mesa's software Vulkan driver
# (lavapipe) when running as root on Debian/Ubuntu; otherwise says exactly what to install.
set -euo pipefail

have_icd() {
    # (no `cmd | grep -q` here: with pipefail, grep's early exit would fail the pipeline)
    local icds loader
    icds=$(ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json /usr/local/share/vulkan/icd.d/*.json 2>/dev/null || true)
    loader=$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true) | grep 'libvulkan\.so\.1' || true)
    [ -n "$icds" ] && [ -n "$loader" ]
}

if have_icd; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    echo "No Vulkan driver found: installing the software one (mesa-vulkan-drivers, libvulkan1)..." >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null
    exit 0
fi
cat >&2 <<'MSG'
No Vulkan driver found. Install a GPU driver with Vulkan support, or the software driver:
    sudo apt-get install mesa-vulkan-drivers libvulkan1      # Debian/Ubuntu (lavapipe)
    sudo dnf install mesa-vulkan-drivers vulkan-loader        # Fedora
then run this command again.
MSG
exit 1

//! Which attention kernel a device and a problem get.

use super::coop::choose;
use crate::device::{DeviceCaps, SubgroupSizes};
use backend_api::DType;
use shaders::attention::coop::CoopAttnTile;
use wgpu::wgt::{CooperativeMatrixProperties, CooperativeScalarType};

fn config(size: u32, ab: CooperativeScalarType, cr: CooperativeScalarType) -> CooperativeMatrixProperties {
    CooperativeMatrixProperties {
        m_size: size,
        n_size: size,
        k_size: size,
        ab_type: ab,
        cr_type: cr,
        saturating_accumulation: false,
    }
}

/// A device like an NVIDIA GPU: subgroups of 32, f16, 48 KiB of workgroup memory, 16 x 16
/// f16 -> f32 fragments.
fn coop_caps() -> DeviceCaps {
    let mut caps = DeviceCaps::for_tests();
    caps.subgroups = Some(SubgroupSizes { min: 32, max: 32 });
    caps.f16 = true;
    caps.limits.max_compute_workgroup_storage_size = 49152;
    caps.cooperative_matrix = vec![config(16, CooperativeScalarType::F16, CooperativeScalarType::F32)];
    caps
}

#[test]
fn f16_with_whole_fragments_uses_tensor_cores() {
    let caps = coop_caps();
    for (d, dv) in [(128, 128), (64, 32), (16, 256), (256, 256)] {
        assert_eq!(
            choose(&caps, DType::F16, d, dv, true),
            Some(CoopAttnTile { subgroup: 32, d: d as u32, dv: dv as u32 })
        );
    }
}

#[test]
fn other_problems_keep_the_scalar_kernel() {
    let caps = coop_caps();
    for dtype in [DType::F32, DType::BF16] {
        assert_eq!(choose(&caps, dtype, 128, 128, true), None, "{dtype:?}");
    }
    for (d, dv) in [(120, 128), (128, 8), (272, 128), (128, 512)] {
        assert_eq!(choose(&caps, DType::F16, d, dv, true), None, "{d} {dv}");
    }
    assert_eq!(choose(&caps, DType::F16, 128, 128, false), None);
}

#[test]
fn devices_without_usable_fragments_keep_the_scalar_kernel() {
    use CooperativeScalarType::{F16, F32};
    let mut none = coop_caps();
    none.cooperative_matrix.clear();
    let mut eight = coop_caps();
    eight.cooperative_matrix = vec![config(8, F16, F32), config(16, F16, F16)];
    let mut mixed = coop_caps();
    mixed.subgroups = Some(SubgroupSizes { min: 16, max: 32 });
    let mut small = coop_caps();
    small.limits.max_compute_workgroup_storage_size = 16384;
    let mut no_f16 = coop_caps();
    no_f16.f16 = false;
    for caps in [none, eight, mixed, small, no_f16] {
        assert_eq!(choose(&caps, DType::F16, 128, 128, true), None, "{caps:?}");
    }
}

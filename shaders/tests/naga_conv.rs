//! Renders every direct convolution kernel for every float dtype, with and without a bias, and
//! validates it with naga.

use backend_api::{DType, ErrorKind};
use shaders::conv::direct::{direct_module, DirectKernel};

mod common;
use common::validate;

#[test]
fn every_direct_conv_variant_is_valid() {
    let mut count = 0;
    for k in DirectKernel::ALL {
        for d in DType::ALL {
            for bias in [false, true] {
                let name = format!("{k:?} {d:?} bias {bias}");
                match direct_module(k, d, bias) {
                    Ok(src) => {
                        validate(&name, &src);
                        count += 1;
                    }
                    Err(e) => {
                        assert_eq!(e.kind(), ErrorKind::Unsupported, "{name}: {e}");
                        let staged_f64 = k == DirectKernel::DepthwiseTile && d == DType::F64;
                        assert!(!d.is_float() || staged_f64, "{name}: {e}");
                    }
                }
            }
        }
    }
    // 3 kernels x 4 float dtypes + the staged depthwise x 3 (no F64), with and without a bias
    assert_eq!(count, (3 * 4 + 3) * 2);
}

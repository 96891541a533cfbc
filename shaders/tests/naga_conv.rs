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
                        assert!(!d.is_float(), "{name}: {e}");
                    }
                }
            }
        }
    }
    assert_eq!(count, 3 * 4 * 2);
}

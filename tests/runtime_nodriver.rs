//! Opening a device where there is no driver or no GPU is an error, never a panic.

use ptxkit::runtime::{Device, RuntimeError, device_count, driver_available};

#[test]
fn device_new_is_an_error_not_a_panic_without_a_gpu() {
    let r = std::panic::catch_unwind(|| Device::new(0).map(|d| d.attributes().name.clone()));
    let r = r.expect("Device::new panicked");
    if !driver_available() {
        assert!(matches!(r, Err(RuntimeError::NoDriver)), "{r:?}");
        assert!(matches!(device_count(), Err(RuntimeError::NoDriver)));
        let msg = r.unwrap_err().to_string();
        assert!(msg.contains("libcuda"), "{msg}");
    } else {
        match r {
            Ok(name) => println!("device 0: {name}"),
            Err(e) => assert!(
                matches!(e, RuntimeError::NoDevice { .. } | RuntimeError::Driver(_)),
                "{e}"
            ),
        }
    }
}

#[test]
fn a_far_ordinal_is_no_device() {
    match Device::new(10_000) {
        Err(RuntimeError::NoDriver) | Err(RuntimeError::NoDevice { .. }) => {}
        other => panic!("{other:?}"),
    }
}

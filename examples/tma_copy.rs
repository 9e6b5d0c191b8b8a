//! A 2-D TMA copy through shared memory, written as a kernel author writes one: each CTA loads a
//! 32 x 32 f32 box of `src` with one `cp.async.bulk.tensor` (128-byte swizzle, completing on an
//! mbarrier), adds to every element its row-major index within the box (through the swizzled
//! shared buffer, so a wrong swizzle shows in the result) and stores the box to `dst` with a TMA
//! store. Prints the PTX, then (on a Hopper GPU) runs it on fresh data of several shapes and
//! checks it against the host.
//!
//! The tensors are declared once, in the kernel, with their box and swizzle
//! (`KernelBuilder::tma_tensor`); the kernel copies a CTA's box (`tma_tile_at`) to and from the
//! shared box buffer with the `copy_async` tile op; the launch passes the device tensors themselves
//! and the launcher builds their tensor maps. The shape is symbolic: one kernel serves every whole
//! number of boxes.
//!
//! ```text
//! cargo run --example tma_copy
//! ```

use ptxkit::isa::builder::CmpOp;
use ptxkit::isa::space::SharedScope;
use ptxkit::isa::{StateSpace, Target, ty};
use ptxkit::kernel::{BuiltKernel, KernelBuilder, Result};
use ptxkit::runtime::{Arg, Device, DeviceTensor, ExtentFacts, JitOptions, TmaBox};
use ptxkit::smem::SwizzleMode;
use ptxkit::smem::pipeline::sync::{BarrierSync, WaitMode};
use ptxkit::tile::ExecScope;

/// The box: 32 rows of 32 f32 = 128 bytes, the 128-byte swizzle's span.
const BOX: u32 = 32;
const THREADS: u32 = 128;

/// `dst[r, c] = src[r, c] + (r % 32) * 32 + c % 32` over `rows x cols` f32 tensors, both whole
/// numbers of 32 x 32 boxes; one CTA per box.
fn tma_copy(target: Target) -> Result<BuiltKernel> {
    let mut k = KernelBuilder::new("tma_copy", target);
    // Facts the launcher checks: a shape that is not whole boxes is refused before the launch.
    let boxes = ExtentFacts::NONE
        .multiple_of(u64::from(BOX))
        .at_least(u64::from(BOX));
    let rows = k.symbol_with("rows", boxes)?;
    let cols = k.symbol_with("cols", boxes)?;
    let tma = TmaBox::new([BOX, BOX]).swizzle(SwizzleMode::B128);
    let src = k.tma_tensor::<ty::F32>("src", [rows, cols], tma.clone())?;
    let dst = k.tma_tensor::<ty::F32>("dst", [rows, cols], tma)?;
    let [bx, by] = k.cta_id([cols / BOX, rows / BOX])?;
    let [tx] = k.thread_id([THREADS])?;
    // The shared tile is the box, swizzled as the tensor map writes it.
    let tile = k.tma_box_buffer("tile", &src)?;
    // One mbarrier, named in the kernel's barrier protocol: the TMA load records the bytes it
    // delivers against it, and `sync.finish()` below holds them to the `expect_tx` announced (a
    // mismatch is a build error naming `full`, not a hang on the GPU).
    let addr = k.pool_bytes("full", 8, 8)?;
    let mut sync = BarrierSync::new("tma_copy", WaitMode::Spin);
    let full = sync
        .declare_one("full", 1, addr)
        .map_err(|e| k.error(e.to_string()))?;
    // This CTA's box of each tensor, at block coordinates (row, column): tile operands with the
    // box's shape and swizzle.
    let src_box = k.tma_tile_at(&src, [by.into(), bx.into()])?;
    let dst_box = k.tma_tile_at(&dst, [by.into(), bx.into()])?;
    let leader = k.cmp(CmpOp::Eq, tx, 0)?;
    let one = ExecScope::Thread;

    // Thread 0: the barrier for one arrival and the box's bytes, then the load.
    k.if_(leader, |k| {
        sync.init(k.isa(), full)?;
        k.fence_mbarrier_init()?;
        let bytes = src.box_bytes() as u32;
        sync.arrive_expect_tx(k.isa(), full.at, full.addr, bytes)?;
        k.copy_async(&tile, &src_box, Some((&mut sync, full)), None, one)?; // copy_async.tma_load
        Ok(())
    })
    .end()?;
    k.bar_sync(0u32, None)?;
    sync.wait(k.isa(), full.at, None, full.addr, 0u32)?;

    // Every thread: tile[r, c] += r * 32 + c, through the swizzle.
    k.unroll(0..BOX * BOX / THREADS, |k, e| {
        let r = k.let_("r", tx / BOX + e * (THREADS / BOX))?;
        let c = k.let_("c", tx % BOX)?;
        let v = k.load(&tile, [r, c])?;
        let idx = k.eval(r * BOX + c)?;
        let f = k.reg::<ty::F32>();
        k.cvt(f, idx)?;
        k.add(v, v, f)?;
        k.store(&tile, [r, c], v)
    })?;

    // The generic-proxy writes are made visible to the TMA store (the async proxy), then thread
    // 0 stores the box and waits until shared memory has been read.
    k.fence_proxy_async(Some(StateSpace::Shared(SharedScope::Cta)))?;
    k.bar_sync(0u32, None)?;
    k.if_(leader, |k| {
        k.copy_async(&dst_box, &tile, None, None, one)?; // copy_async.tma_store
        k.cp_async_bulk_commit_group()?;
        k.cp_async_bulk_wait_group(0, true)?;
        Ok(())
    })
    .end()?;
    sync.finish()
        .map_err(|e| k.error(format!("barrier protocol: {e}")))?;
    k.finish()
}

/// The host reference: `src` plus each element's index within its box.
fn reference(src: &[f32], cols: usize) -> Vec<f32> {
    let b = BOX as usize;
    src.iter()
        .enumerate()
        .map(|(i, &x)| x + (((i / cols) % b) * b + (i % cols) % b) as f32)
        .collect()
}

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    print!("{}", tma_copy(Target::Sm90a)?.ptx());

    let dev = match Device::new(0) {
        Ok(d) if d.attributes().compute_capability.0 >= 9 => d,
        Ok(_) => {
            eprintln!("tma_copy: not run: TMA needs compute capability 9.0 or more");
            return Ok(());
        }
        Err(e) => {
            eprintln!("tma_copy: not run on a GPU: {e}");
            return Ok(());
        }
    };
    let stream = dev.default_stream();
    let kernel = tma_copy(dev.target())?.load(&dev, &JitOptions::default())?;
    for (rows, cols) in [(32, 32), (256, 512), (96, 1024)] {
        let n = rows * cols;
        let host: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 8.0).collect();
        let src = DeviceTensor::from_host(&stream, &host, vec![rows, cols])?;
        let mut dst = DeviceTensor::from_host(&stream, &vec![f32::NAN; n], vec![rows, cols])?;
        // The launcher checks both tensors against the kernel's declaration, builds their tensor
        // maps (box 32 x 32, 128-byte swizzle) and sizes the grid from rows and cols.
        kernel.launch(&stream, &mut [Arg::tensor(&src), Arg::tensor_mut(&mut dst)])?;
        let got = dst.to_host(&stream)?;
        let wrong = got
            .iter()
            .zip(reference(&host, cols))
            .filter(|(g, w)| **g != *w)
            .count();
        let verdict = if wrong == 0 { "PASS" } else { "FAIL" };
        println!("{verdict} tma_copy {rows}x{cols}: {wrong} elements differ");
        if wrong > 0 {
            return Err(format!("tma_copy {rows}x{cols}: wrong result").into());
        }
    }
    // A shape that is not whole boxes is refused by the launcher, naming the symbol.
    let odd = DeviceTensor::from_host(&stream, &vec![0f32; 32 * 40], vec![32, 40])?;
    let mut out = DeviceTensor::from_host(&stream, &vec![0f32; 32 * 40], vec![32, 40])?;
    match kernel.launch(&stream, &mut [Arg::tensor(&odd), Arg::tensor_mut(&mut out)]) {
        Err(e) => println!("PASS refused 32x40: {e}"),
        Ok(_) => return Err("tma_copy: a 32x40 tensor was launched on".into()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ptxkit::isa::{ScalarType, Target};
    use ptxkit::runtime::{ArgDesc, RuntimeError, TensorDesc};

    /// `cargo test` holds the example's kernel to ptxas (the example runs it only on a GPU), and
    /// checks what its launch would be given.
    #[test]
    fn the_kernel_assembles_and_checks_its_tensors() {
        let built = super::tma_copy(Target::Sm90a).unwrap();
        assert!(
            built
                .ptx()
                .contains("cp.async.bulk.tensor.2d.shared::cluster.global")
        );
        if let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() {
            let out = ptxas.assemble(built.ptx(), Target::Sm90a, &[]).unwrap();
            assert!(out.ok, "{}", out.log);
        }
        let t = |shape: &[usize], addr| {
            ArgDesc::Tensor(TensorDesc {
                dtype: ScalarType::F32,
                shape: shape.to_vec(),
                addr,
                device: 0,
            })
        };
        let (cfg, symbols) = built
            .config_for(&[t(&[96, 1024], 0x1000), t(&[96, 1024], 0x20_0000)], 0)
            .unwrap();
        assert_eq!(cfg.grid, [32, 3, 1]);
        assert_eq!((symbols["rows"], symbols["cols"]), (96, 1024));
        let e = built
            .config_for(&[t(&[32, 40], 0x1000), t(&[32, 40], 0x20_0000)], 0)
            .unwrap_err();
        assert!(
            matches!(&e, RuntimeError::ExtentFact { symbol, .. } if symbol == "cols"),
            "{e}"
        );
        let r = super::reference(&[0.5; 64 * 64], 64);
        assert_eq!((r[33], r[64 * 33 + 2]), (1.5, 34.5));
    }
}

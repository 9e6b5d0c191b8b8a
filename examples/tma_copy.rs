//! A 2-D TMA copy through shared memory, written as a kernel author writes one: each CTA loads a
//! 32 x 32 f32 box of `src` with one `cp.async.bulk.tensor` (128-byte swizzle, completing on an
//! mbarrier), adds to every element its row-major index within the box (through the swizzled
//! shared buffer, so a wrong swizzle shows in the result) and stores the box to `dst` with a TMA
//! store. Prints the PTX, then (on a Hopper GPU) runs it on fresh data of several shapes and
//! checks it against the host.
//!
//! The tensors are declared once, in the kernel, with their box and swizzle
//! (`KernelBuilder::tma_tensor`); the launch passes the device tensors themselves and the launcher
//! builds their tensor maps. The shape is symbolic: one kernel serves every whole number of boxes.
//!
//! ```text
//! cargo run --example tma_copy
//! ```

use ptxkit::isa::builder::{ArriveOpts, CmpOp, TmaLoadOpts};
use ptxkit::isa::space::SharedScope;
use ptxkit::isa::spaces::{Shared, SharedCluster};
use ptxkit::isa::{Addr, Reg, Sinkable, StateSpace, Target, ty};
use ptxkit::kernel::{BuiltKernel, KernelBuilder, Ptr, Result};
use ptxkit::runtime::{Arg, Device, DeviceTensor, ExtentFacts, JitOptions, TmaBox};
use ptxkit::smem::SwizzleMode;

/// The box: 32 rows of 32 f32 = 128 bytes, the 128-byte swizzle's span.
const BOX: u32 = 32;
const THREADS: u32 = 128;

fn s32(k: &KernelBuilder, r: Reg<ty::U32>) -> Result<Reg<ty::S32>> {
    r.retype::<ty::S32>().map_err(|e| k.error(e.to_string()))
}

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
    let bar = k.pool_bytes("full", 8, 8)?;
    let Some(Ptr::Shared(base)) = tile.data() else {
        return Err(k.error("the tile is not in shared memory"));
    };
    let x0 = k.eval(bx * BOX)?;
    let y0 = k.eval(by * BOX)?;
    let (x0, y0) = (s32(&k, x0)?, s32(&k, y0)?);
    let leader = k.cmp(CmpOp::Eq, tx, 0)?;

    // Thread 0: a barrier expecting one arrival and the box's bytes, then the load (coordinates
    // innermost first: column, row).
    k.if_(leader, |k| {
        k.mbarrier_init(Addr::<Shared>::reg32(bar), 1u32)?;
        k.fence_mbarrier_init()?;
        let expect = ArriveOpts {
            expect_tx: Some((src.box_bytes() as u32).into()),
            ..ArriveOpts::default()
        };
        k.mbarrier_arrive_with(&expect, Sinkable::Sink, Addr::<Shared>::reg32(bar))?;
        k.tma_load(
            &TmaLoadOpts::default(),
            Addr::<SharedCluster>::reg32(base),
            src.map(),
            &[x0.into(), y0.into()],
            Addr::<SharedCluster>::reg32(bar),
        )?;
        Ok(())
    })
    .end()?;
    k.bar_sync(0u32, None)?;
    k.mbarrier_wait_parity(Addr::<Shared>::reg32(bar), 0u32)?;

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
        k.tma_store(
            dst.map(),
            &[x0.into(), y0.into()],
            Addr::<Shared>::reg32(base),
            None,
        )?;
        k.cp_async_bulk_commit_group()?;
        k.cp_async_bulk_wait_group(0, true)?;
        Ok(())
    })
    .end()?;
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

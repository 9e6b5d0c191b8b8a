//! Launches on borrowed memory: kernels run on cudarc slices and views the caller owns (a
//! framework's tensors), at offsets into larger allocations, with no copy.
//!
//! Without a GPU: the GEMM's C alignment follows its epilogue, operands borrowed off 16 bytes
//! break the tensor-map rule, and the operand checks name what does not fit. With a GPU
//! (skipped, with the reason printed, where there is no driver, no device or no sm_90): memory
//! allocated through cudarc alone, `vector_add` and the GEMM launched on views at non-zero
//! offsets on a stream of the caller's, outputs poisoned first, checked against the host, and
//! the margins around every view left as they were.

use half::bf16;
use ptxkit::isa::ScalarType;
use ptxkit::isa::Target;
use ptxkit::library::gemm::{
    Gemm, GemmConfig, GemmError, build_with, check::CheckResult, check::random_values,
    check_operands,
};
use ptxkit::runtime::cuda::{CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut};
use ptxkit::runtime::{
    ArgDesc, Device, JitOptions, Param, RuntimeError, Scalar, TensorDesc, TensorMapRule, TensorMut,
    TensorRef, check_and_pack, device_count, driver_available,
};
use ptxkit::smem::pipeline::sync::WaitMode;
use std::sync::Arc;

/// Where `cuMemAlloc` puts an allocation: 256-byte aligned.
const BASE: u64 = 0x7f3a_0000_0000;

fn desc(dtype: ScalarType, offset: usize, shape: &[usize]) -> TensorDesc {
    let addr = BASE + (offset * dtype.bytes() as usize) as u64;
    let len = shape.iter().product();
    TensorDesc::of_memory("CudaView", dtype, addr, len, shape.to_vec(), 0).unwrap()
}

/// The arguments of a GEMM launch (`[m, k]` A and `[n, k]` B at offset 0) with C `[m, n]`
/// described by `c`: the tensors and, with alpha/beta, the two scalars (m, n and k are read from
/// the shapes).
fn gemm_args(cfg: &GemmConfig, a: TensorDesc, c: TensorDesc, k: usize) -> Vec<ArgDesc> {
    let n = c.shape[1];
    let b = desc(cfg.input, 0, &[n, k]);
    let mut args = vec![ArgDesc::Tensor(a), ArgDesc::Tensor(b), ArgDesc::Tensor(c)];
    if cfg.alpha_beta {
        args.extend([
            ArgDesc::Scalar(Scalar::F32(1.0)),
            ArgDesc::Scalar(Scalar::F32(0.0)),
        ]);
    }
    args
}

/// For each epilogue, the element offsets of a C view the launcher takes are exactly those
/// where the epilogue's widest access is aligned: a TMA store's 16 bytes (the tensor map's
/// rule, C being a TMA tensor there), a pair store's two elements, one element otherwise.
#[test]
fn gemm_c_alignment_follows_the_epilogue() {
    let large = GemmConfig::large();
    let cases = [
        (large, ScalarType::Bf16, 16),
        (
            GemmConfig {
                tma_store: false,
                ..large
            },
            ScalarType::Bf16,
            4,
        ),
        (
            GemmConfig {
                tma_store: false,
                output: ScalarType::F32,
                alpha_beta: true,
                ..large
            },
            ScalarType::F32,
            8,
        ),
        (
            GemmConfig {
                tma_store: false,
                n_even: false,
                ..large
            },
            ScalarType::Bf16,
            2,
        ),
    ];
    for (cfg, dtype, align) in cases {
        // The signature the kernel declares, as the launcher gets it.
        let sig = build_with(&cfg, WaitMode::Spin)
            .unwrap()
            .signature()
            .clone();
        let declared = sig.params.iter().find_map(|p| match p {
            Param::Tensor { name, align, .. } if name == "c" => Some(*align),
            Param::TmaTensor { name, .. } if name == "c" => Some(16),
            _ => None,
        });
        assert_eq!(declared, Some(align), "{}", cfg.name());
        let (m, n) = (64, if cfg.n_even { 64 } else { 63 });
        for offset in 0..32 {
            let c = desc(dtype, offset, &[m, n]);
            let addr = c.addr;
            let a = desc(cfg.input, 0, &[m, 64]);
            let got = check_and_pack(&sig, &gemm_args(&cfg, a, c, 64), 0);
            if (offset * dtype.bytes() as usize) % align == 0 {
                assert!(
                    got.is_ok(),
                    "{} offset {offset}: {:?}",
                    cfg.name(),
                    got.err()
                );
            } else {
                let e = got.unwrap_err();
                let tma_rule = matches!(&e, RuntimeError::TmaTensor { param, rule: Some(TensorMapRule::GlobalAddressAlign), .. } if param == "c");
                let misaligned = matches!(&e, RuntimeError::Misaligned { param, align: a, addr: at }
                        if param == "c" && *a == align && *at == addr);
                assert!(
                    tma_rule || misaligned,
                    "{} offset {offset}: {e}",
                    cfg.name()
                );
            }
        }
    }
}

/// A and B reach the kernel as TMA tensors: the launcher builds their maps from their own
/// addresses, so a view whose address is not 16-byte aligned is refused by the driver's rule,
/// checked on the host first and named by the parameter.
#[test]
fn gemm_operands_off_16_bytes_break_the_tensor_map_rule() {
    let cfg = GemmConfig::large();
    let sig = build_with(&cfg, WaitMode::Spin)
        .unwrap()
        .signature()
        .clone();
    for offset in 0..64 {
        let a = desc(ScalarType::Bf16, offset, &[300, 136]);
        let c = desc(ScalarType::Bf16, 0, &[300, 520]);
        let got = check_and_pack(&sig, &gemm_args(&cfg, a, c, 136), 0);
        if offset % 8 == 0 {
            assert!(got.is_ok(), "offset {offset}: {:?}", got.err());
        } else {
            assert!(
                matches!(
                    &got,
                    Err(RuntimeError::TmaTensor {
                        param,
                        rule: Some(TensorMapRule::GlobalAddressAlign),
                        ..
                    }) if param == "a"
                ),
                "offset {offset}: {got:?}"
            );
        }
    }
}

#[test]
fn gemm_operand_checks_name_what_does_not_fit() {
    let cfg = GemmConfig::large();
    let ok = check_operands(
        &cfg,
        &desc(ScalarType::Bf16, 0, &[300, 136]),
        &desc(ScalarType::Bf16, 0, &[520, 136]),
        &desc(ScalarType::Bf16, 0, &[300, 520]),
        None,
    );
    assert_eq!(ok.unwrap(), (300, 520, 136));
    let fails = |a: &[usize], b: &[usize], c: &[usize], dt: ScalarType, ab: Option<(f32, f32)>| {
        match check_operands(
            &cfg,
            &desc(dt, 0, a),
            &desc(dt, 0, b),
            &desc(ScalarType::Bf16, 0, c),
            ab,
        ) {
            Err(GemmError::Operands(why)) => why,
            other => panic!("{a:?} {b:?} {c:?}: {other:?}"),
        }
    };
    let bf = ScalarType::Bf16;
    assert!(fails(&[300, 136], &[520, 128], &[300, 520], bf, None).contains("want [m, k]"));
    assert!(fails(&[300, 136], &[520, 136], &[520, 300], bf, None).contains("want [m, k]"));
    assert!(
        fails(&[300, 136], &[520, 136], &[300, 520], ScalarType::F16, None).contains("takes bf16")
    );
    assert!(fails(&[300, 0], &[520, 0], &[300, 520], bf, None).contains("k = 0"));
    assert!(fails(&[300, 136], &[519, 136], &[300, 519], bf, None).contains("n_even"));
    assert!(fails(&[300, 136], &[520, 136], &[300, 520], bf, Some((1.0, 0.0))).contains("alpha"));
    assert!(fails(&[300, 136], &[522, 136], &[300, 522], bf, None).contains("multiple of 8"));
}

#[test]
fn fp8_operands_need_k_a_multiple_of_16() {
    let e4 = ScalarType::E4m3;
    let cfg = GemmConfig::fp8(300, 520, 132, e4, ScalarType::Bf16);
    let run = |k: usize| {
        check_operands(
            &cfg,
            &desc(e4, 0, &[300, k]),
            &desc(e4, 0, &[520, k]),
            &desc(ScalarType::Bf16, 0, &[300, 520]),
            None,
        )
    };
    assert_eq!(run(272).unwrap(), (300, 520, 272));
    // 8-bit rows of 136 bytes: a tensor map needs a multiple of 16 (16-bit K = 136 is fine).
    match run(136) {
        Err(
            e @ GemmError::UnalignedK {
                k: 136,
                input: "e4m3",
            },
        ) => {
            assert!(e.to_string().contains("multiple of 16"))
        }
        other => panic!("k = 136: {other:?}"),
    }
}

// ---- on a GPU --------------------------------------------------------------------------------

/// The caller's context (cudarc alone, as a framework holds it), or why the GPU test is skipped.
fn cuda_context() -> Result<Arc<CudaContext>, String> {
    if !driver_available() {
        return Err("no CUDA driver".into());
    }
    match device_count() {
        Ok(0) => return Err("no GPU".into()),
        Ok(_) => {}
        Err(e) => return Err(e.to_string()),
    }
    CudaContext::new(0).map_err(|e| format!("opening device 0: {e}"))
}

/// `len` copies of `poison` with `values` at `offset`.
fn arena<T: Copy>(len: usize, poison: T, offset: usize, values: &[T]) -> Vec<T> {
    let mut v = vec![poison; len];
    v[offset..offset + values.len()].copy_from_slice(values);
    v
}

/// Elements of `got` outside `offset..offset + n` that are not `poison` (bit for bit).
fn margin_changes(got: &[u32], poison: u32, offset: usize, n: usize) -> usize {
    got.iter()
        .enumerate()
        .filter(|&(i, &g)| (i < offset || i >= offset + n) && g != poison)
        .count()
}

/// `vector_add` on three views of cudarc allocations at element offsets 3, 5 and 7 (f32: any
/// element offset is aligned), launched on a stream of the caller's.
fn vector_add_on_views(device: &Device, stream: &Arc<CudaStream>) -> Result<(), String> {
    let e2s = |e: RuntimeError| e.to_string();
    let kernel = ptxkit::library::vector_add::build(Target::Sm90a)
        .map_err(|e| e.to_string())?
        .load(device, &JitOptions::default())
        .map_err(e2s)?;
    let n = 100_003;
    let (ha, hb) = (random_values(n, 1), random_values(n, 2));
    let poison = f32::NAN;
    let (oa, ob, oc) = (3, 5, 7);
    let a_all = stream
        .clone_htod(&arena(n + 16, poison, oa, &ha))
        .map_err(|e| e.to_string())?;
    let b_all = stream
        .clone_htod(&arena(n + 16, poison, ob, &hb))
        .map_err(|e| e.to_string())?;
    let mut c_all: CudaSlice<f32> = stream
        .clone_htod(&vec![poison; n + 16])
        .map_err(|e| e.to_string())?;
    {
        let (a, b) = (a_all.slice(oa..oa + n), b_all.slice(ob..ob + n));
        let mut c = c_all.slice_mut(oc..oc + n);
        kernel
            .launch(
                stream,
                &mut [
                    TensorRef::view(&a, [n]).map_err(e2s)?.into(),
                    TensorRef::view(&b, [n]).map_err(e2s)?.into(),
                    TensorMut::view(&mut c, [n]).map_err(e2s)?.into(),
                ],
            )
            .map_err(e2s)?;
    }
    let got = stream.clone_dtoh(&c_all).map_err(|e| e.to_string())?;
    let wrong = (0..n).filter(|&i| got[oc + i] != ha[i] + hb[i]).count();
    let bits: Vec<u32> = got.iter().map(|x| x.to_bits()).collect();
    let margins = margin_changes(&bits, poison.to_bits(), oc, n);
    if wrong != 0 || margins != 0 {
        return Err(format!(
            "vector_add on views: {wrong} of {n} wrong, {margins} margin elements written"
        ));
    }
    Ok(())
}

/// `gemm` on the views A `[m, k]`, B `[n, k]` and C `[m, n]` (C = A·Bᵀ), on `stream`.
fn gemm_views(
    gemm: &Gemm,
    stream: &Arc<CudaStream>,
    (a, b, c): (
        &CudaView<'_, bf16>,
        &CudaView<'_, bf16>,
        &mut CudaViewMut<'_, bf16>,
    ),
    (m, n, k): (usize, usize, usize),
) -> Result<(), GemmError> {
    gemm.run_borrowed(
        stream,
        &TensorRef::view(a, [m, k])?,
        &TensorRef::view(b, [n, k])?,
        TensorMut::view(c, [m, n])?,
        None,
    )
}

/// A refusal by the tensor-map rule on the global address.
fn refused_by_address_rule(got: &Result<(), GemmError>) -> bool {
    // A and B are TMA tensors (and C with the TMA store): the launcher refuses the map it would
    // build from the view, naming the parameter and the driver's rule.
    matches!(
        got,
        Err(GemmError::Runtime(RuntimeError::TmaTensor {
            rule: Some(TensorMapRule::GlobalAddressAlign),
            ..
        }))
    )
}

/// One GEMM problem on views: A and B in one allocation (A at element offset 40, B after a gap,
/// 16-byte aligned), C at offset 72 of a second; every margin poisoned (NaN in the inputs, so a
/// read outside a view would show in C).
fn gemm_on_views(
    device: &Device,
    stream: &Arc<CudaStream>,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<(), String> {
    let cfg = GemmConfig::for_problem(m, n, device.attributes().sm_count);
    let gemm = Gemm::new(device, cfg).map_err(|e| e.to_string())?;
    let to_bf16 = |v: Vec<f32>| -> Vec<bf16> { v.into_iter().map(bf16::from_f32).collect() };
    let ha = to_bf16(random_values(m * k, seed));
    let hb = to_bf16(random_values(n * k, seed ^ 0x5555));
    let nan = bf16::from_bits(0xFFFF);
    let oa = 40;
    let ob = (oa + m * k + 24).next_multiple_of(8);
    let mut host_ab = arena(ob + n * k + 8, nan, oa, &ha);
    host_ab[ob..ob + n * k].copy_from_slice(&hb);
    let ab = stream.clone_htod(&host_ab).map_err(|e| e.to_string())?;
    let oc = 72;
    let mut c_all = stream
        .clone_htod(&vec![nan; oc + m * n + 40])
        .map_err(|e| e.to_string())?;
    {
        let (a, b) = (ab.slice(oa..oa + m * k), ab.slice(ob..ob + n * k));
        let mut c = c_all.slice_mut(oc..oc + m * n);
        gemm_views(&gemm, stream, (&a, &b, &mut c), (m, n, k))
            .map_err(|e| format!("{m}x{n}x{k}: {e}"))?;
    }
    let got = stream.clone_dtoh(&c_all).map_err(|e| e.to_string())?;

    let (af, bf): (Vec<f32>, Vec<f32>) = (
        ha.iter().map(|x| x.to_f32()).collect(),
        hb.iter().map(|x| x.to_f32()).collect(),
    );
    let (mut num, mut den, mut unwritten) = (0.0f64, 0.0f64, 0usize);
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..k)
                .map(|l| af[i * k + l] as f64 * bf[j * k + l] as f64)
                .sum();
            let g = got[oc + i * n + j];
            if g.is_nan() {
                unwritten += 1;
            }
            num += (g.to_f64() - want).powi(2);
            den += want * want;
        }
    }
    let rel = (num / den.max(f64::MIN_POSITIVE)).sqrt();
    let bits: Vec<u32> = got.iter().map(|x| x.to_bits() as u32).collect();
    let margins = margin_changes(&bits, 0xFFFF, oc, m * n);
    if unwritten != 0 || margins != 0 || !rel.is_finite() || rel > CheckResult::TOLERANCE {
        return Err(format!(
            "{m}x{n}x{k} ({}): rel err {rel:.2e}, {unwritten} unwritten, {margins} margin \
             elements written",
            cfg.name()
        ));
    }
    println!(
        "gemm on views {m}x{n}x{k} ({}): rel err {rel:.2e}",
        cfg.name()
    );
    Ok(())
}

/// Views the launcher must refuse before anything runs, with addresses from cudarc itself: A
/// one element past a 16-byte boundary (its tensor map), C one element off for a TMA-store
/// epilogue (its tensor map) and for a pair-store epilogue (the signature's 4 bytes).
fn gemm_refuses_misaligned_views(device: &Device, stream: &Arc<CudaStream>) -> Result<(), String> {
    let (m, n, k) = (128, 256, 64);
    let gemm = Gemm::new(device, GemmConfig::large()).map_err(|e| e.to_string())?;
    let ab = stream
        .alloc_zeros::<bf16>(m * k + n * k + 8)
        .map_err(|e| e.to_string())?;
    let mut c_all = stream
        .alloc_zeros::<bf16>(m * n + 8)
        .map_err(|e| e.to_string())?;
    let a_odd = ab.slice(1..1 + m * k);
    let b = ab.slice(m * k + 8..m * k + 8 + n * k);
    let refused = {
        let mut c = c_all.slice_mut(0..m * n);
        gemm_views(&gemm, stream, (&a_odd, &b, &mut c), (m, n, k))
    };
    if !refused_by_address_rule(&refused) {
        return Err(format!("A one element off 16 bytes: {refused:?}"));
    }
    let a = ab.slice(0..m * k);
    let mut c_odd = c_all.slice_mut(1..1 + m * n);
    let refused = gemm_views(&gemm, stream, (&a, &b, &mut c_odd), (m, n, k));
    if !refused_by_address_rule(&refused) {
        return Err(format!(
            "C one element off 16 bytes (TMA store): {refused:?}"
        ));
    }
    // The pair-store epilogue: the signature's 4 bytes refuse C two bytes off, naming the
    // view's own address.
    let pairs = Gemm::new(
        device,
        GemmConfig {
            tma_store: false,
            ..GemmConfig::large()
        },
    )
    .map_err(|e| e.to_string())?;
    let refused = gemm_views(&pairs, stream, (&a, &b, &mut c_odd), (m, n, k));
    match refused {
        Err(GemmError::Runtime(RuntimeError::Misaligned {
            ref param,
            align: 4,
            addr,
        })) if param == "c" && addr % 4 == 2 => Ok(()),
        other => Err(format!("C one element off a pair (pair stores): {other:?}")),
    }
}

#[test]
fn gpu_launches_on_cudarc_views() {
    let ctx = match cuda_context() {
        Ok(c) => c,
        Err(why) => {
            println!("borrowed: GPU test skipped: {why}");
            return;
        }
    };
    let device = Device::from_context(ctx.clone()).expect("device over the caller's context");
    if device.attributes().compute_capability != (9, 0) {
        println!(
            "borrowed: GPU test skipped: the GEMM is built for sm_90a; this is {}",
            device.attributes().name
        );
        return;
    }
    // The caller's own stream, not the device's default one.
    let stream = ctx.new_stream().expect("stream");
    let mut failures = Vec::new();
    if let Err(e) = vector_add_on_views(&device, &stream) {
        failures.push(e);
    }
    // Edges in M and N with a TMA store; N odd and K not a multiple of 8 (the zero-padding
    // copies read the views); a square with every tile whole.
    for (i, shape) in [(300, 520, 136), (257, 383, 203), (512, 512, 256)]
        .into_iter()
        .enumerate()
    {
        if let Err(e) = gemm_on_views(&device, &stream, shape, 31 + i as u64) {
            failures.push(e);
        }
    }
    if let Err(e) = gemm_refuses_misaligned_views(&device, &stream) {
        failures.push(e);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

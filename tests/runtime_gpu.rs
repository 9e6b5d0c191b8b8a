//! GPU tests of the runtime: hand-written PTX loaded through the driver JIT, launched through the
//! checked launcher on fresh random data, checked against the host. Skipped (with the reason
//! printed) where there is no driver or no GPU.
//!
//! Everything runs in one test so the cases share one device and end in one table.

use ptxkit::isa::ScalarType;
use smem::SwizzleMode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use ptxkit::runtime::cuda::CudaStream;
use ptxkit::runtime::{
    Arg, Device, DeviceTensor, JitOptions, KernelSignature, LaunchConfig, Param, RuntimeError,
    TensorMapDType, TensorMapDesc, TensorMapRule, TmaBox,
};

// The hand-written kernels, each in `tests/ptx/` with a comment on what it computes, and the
// signatures they are launched with.
#[path = "ptx/signatures.rs"]
mod signatures;
const VADD: &str = include_str!("ptx/vadd.ptx");
const SCALE: &str = include_str!("ptx/scale.ptx");
const BIGSMEM: &str = include_str!("ptx/bigsmem.ptx");
const CLUSTER: &str = include_str!("ptx/cluster_rank.ptx");
const TMA: &str = include_str!("ptx/tma_load.ptx");

/// Line 13 uses an undeclared register; line 14 an unknown instruction.
const BAD: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n\n.visible .entry bad(\n    \
    .param .u64 out\n)\n{\n    .reg .b32 %r<4>;\n    .reg .b64 %rd<3>;\n    \
    ld.param.u64 %rd1, [out];\n    mov.u32 %r1, %tid.x;\n    add.u32 %r2, %r1, %r9;\n    \
    frobnicate.u32 %r3, %r2;\n    st.global.u32 [%rd1], %r3;\n    ret;\n}\n";

/// splitmix64, seeded from the clock: fresh data every run.
struct Rng(u64);

impl Rng {
    fn fresh() -> Rng {
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(1);
        Rng(t as u64)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
    fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}

type CaseResult = Result<String, String>;

fn e2s(e: RuntimeError) -> String {
    e.to_string()
}

fn max_rel_err(got: &[f32], want: &[f32]) -> f32 {
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs() / w.abs().max(1e-6))
        .fold(0.0, f32::max)
}

struct Ctx {
    dev: Device,
    stream: Arc<CudaStream>,
    rng: Rng,
}

fn case_attributes(c: &mut Ctx) -> CaseResult {
    let a = c.dev.attributes();
    if a.sm_count == 0 || a.max_shared_memory_per_block_optin < 48 * 1024 {
        return Err(format!("implausible attributes {a:?}"));
    }
    Ok(format!(
        "{} cc {}.{}, {} SMs, smem opt-in {} B, clusters {}",
        a.name,
        a.compute_capability.0,
        a.compute_capability.1,
        a.sm_count,
        a.max_shared_memory_per_block_optin,
        a.cluster_launch
    ))
}

fn case_vadd(c: &mut Ctx) -> CaseResult {
    let k = c
        .dev
        .kernel(VADD, &JitOptions::default(), signatures::vadd())
        .map_err(e2s)?;
    let mut report = Vec::new();
    for n in [1usize, 1000, 1 << 20] {
        let (ha, hb) = (c.rng.vec_f32(n), c.rng.vec_f32(n));
        let a = DeviceTensor::from_host(&c.stream, &ha, vec![n]).map_err(e2s)?;
        let b = DeviceTensor::from_host(&c.stream, &hb, vec![n]).map_err(e2s)?;
        let mut out =
            DeviceTensor::from_host(&c.stream, &vec![f32::NAN; n], vec![n]).map_err(e2s)?;
        let syms = k
            .launch(
                &c.stream,
                &LaunchConfig::for_elements(n, 256),
                &mut [Arg::tensor(&a), Arg::tensor(&b), Arg::tensor_mut(&mut out)],
            )
            .map_err(e2s)?;
        let got = out.to_host(&c.stream).map_err(e2s)?;
        let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
        if got != want {
            return Err(format!("n={n}: max rel err {}", max_rel_err(&got, &want)));
        }
        report.push(format!("n={}", syms["n"]));
    }
    Ok(format!("exact for {}", report.join(", ")))
}

fn case_scale(c: &mut Ctx) -> CaseResult {
    let sig = signatures::scale();
    let opts = JitOptions {
        opt_level: Some(3),
        max_registers: Some(32),
        verbose: true,
        ..Default::default()
    };
    let k = c.dev.kernel(SCALE, &opts, sig).map_err(e2s)?;
    let m = 333;
    let hx = c.rng.vec_f32(m * 64);
    let s = c.rng.f32() * 4.0;
    let x = DeviceTensor::from_host(&c.stream, &hx, vec![m, 64]).map_err(e2s)?;
    let mut y =
        DeviceTensor::from_host(&c.stream, &vec![f32::NAN; m * 64], vec![m, 64]).map_err(e2s)?;
    k.launch(
        &c.stream,
        &LaunchConfig::for_elements(m * 64, 128),
        &mut [(&x).into(), (&mut y).into(), s.into()],
    )
    .map_err(e2s)?;
    let got = y.to_host(&c.stream).map_err(e2s)?;
    let want: Vec<f32> = hx.iter().map(|v| v * s).collect();
    if got != want {
        return Err(format!("max rel err {}", max_rel_err(&got, &want)));
    }
    let info = k
        .module()
        .info_log()
        .lines()
        .filter(|l| l.contains("registers"))
        .collect::<Vec<_>>()
        .join("; ");
    Ok(format!("exact, m={m}, s={s:.4}; JIT info: {info}"))
}

/// scale then vadd with programmatic dependent launch on the same stream; the second kernel
/// waits with griddepcontrol.wait.
fn case_pdl(c: &mut Ctx) -> CaseResult {
    let vadd_pdl = VADD.replace("//WAIT", "griddepcontrol.wait;");
    let k2 = c
        .dev
        .kernel(&vadd_pdl, &JitOptions::default(), signatures::vadd())
        .map_err(e2s)?;
    let sig = signatures::scale();
    let k1 = c
        .dev
        .kernel(SCALE, &JitOptions::default(), sig)
        .map_err(e2s)?;
    let m = 4096;
    let n = m * 64;
    let (hx, hb) = (c.rng.vec_f32(n), c.rng.vec_f32(n));
    let x = DeviceTensor::from_host(&c.stream, &hx, vec![m, 64]).map_err(e2s)?;
    let mut y = DeviceTensor::from_host(&c.stream, &vec![f32::NAN; n], vec![m, 64]).map_err(e2s)?;
    let b = DeviceTensor::from_host(&c.stream, &hb, vec![n]).map_err(e2s)?;
    let mut out = DeviceTensor::from_host(&c.stream, &vec![f32::NAN; n], vec![n]).map_err(e2s)?;
    k1.launch(
        &c.stream,
        &LaunchConfig::for_elements(n, 256),
        &mut [(&x).into(), (&mut y).into(), 2.0f32.into()],
    )
    .map_err(e2s)?;
    // y viewed as a flat vector for vadd.
    let y_flat = DeviceTensor::new(y.into_slice(), vec![n]).map_err(e2s)?;
    k2.launch(
        &c.stream,
        &LaunchConfig::for_elements(n, 256).with_pdl(),
        &mut [(&y_flat).into(), (&b).into(), (&mut out).into()],
    )
    .map_err(e2s)?;
    let got = out.to_host(&c.stream).map_err(e2s)?;
    let want: Vec<f32> = hx.iter().zip(&hb).map(|(x, b)| 2.0 * x + b).collect();
    if got != want {
        return Err(format!("max rel err {}", max_rel_err(&got, &want)));
    }
    Ok(format!("scale -> vadd(PDL) exact, n={n}"))
}

fn case_cache(c: &mut Ctx) -> CaseResult {
    let before = c.dev.module_cache().stats();
    let m1 = c.dev.load_ptx(VADD, &JitOptions::default()).map_err(e2s)?;
    let m2 = c.dev.load_ptx(VADD, &JitOptions::default()).map_err(e2s)?;
    let m3 = c
        .dev
        .load_ptx(
            VADD,
            &JitOptions {
                opt_level: Some(1),
                ..Default::default()
            },
        )
        .map_err(e2s)?;
    let after = c.dev.module_cache().stats();
    if !Arc::ptr_eq(&m1, &m2) || Arc::ptr_eq(&m1, &m3) {
        return Err("cache did not share / separate modules as keyed".into());
    }
    let t0 = std::time::Instant::now();
    let _ = c
        .dev
        .load_ptx_uncached(VADD, &JitOptions::default())
        .map_err(e2s)?;
    let jit_us = t0.elapsed().as_secs_f64() * 1e6;
    let t0 = std::time::Instant::now();
    let _ = c.dev.load_ptx(VADD, &JitOptions::default()).map_err(e2s)?;
    let hit_us = t0.elapsed().as_secs_f64() * 1e6;
    Ok(format!(
        "hits {} -> {}, misses {} -> {}, {} modules; uncached load {jit_us:.0} us, cache hit {hit_us:.1} us",
        before.0,
        after.0,
        before.1,
        after.1,
        c.dev.module_cache().len()
    ))
}

fn case_jit_error(c: &mut Ctx) -> CaseResult {
    match c.dev.load_ptx(BAD, &JitOptions::default()) {
        Ok(_) => Err("bad PTX loaded".into()),
        Err(RuntimeError::Jit {
            line: Some(line),
            source_line: Some(src),
            message,
            log,
        }) => {
            let want = BAD.lines().nth(line - 1).unwrap_or_default();
            if !(line == 13 || line == 14) || src != want.trim_end() {
                return Err(format!("line {line} `{src}`; log:\n{log}"));
            }
            println!(
                "--- JIT error as shown to the user ---\n{}\n---",
                RuntimeError::Jit {
                    line: Some(line),
                    source_line: Some(src.clone()),
                    message: message.clone(),
                    log: log.clone()
                }
            );
            Ok(format!("line {line}: `{}`: {message}", src.trim()))
        }
        Err(e) => Err(format!("wrong error: {e:?}")),
    }
}

fn case_missing_kernel(c: &mut Ctx) -> CaseResult {
    let mut sig = signatures::vadd();
    sig.name = "nope".into();
    match c.dev.kernel(VADD, &JitOptions::default(), sig) {
        Err(RuntimeError::KernelNotFound { name }) => Ok(format!("KernelNotFound({name})")),
        Err(e) => Err(format!("wrong error {e}")),
        Ok(_) => Err("found a kernel that does not exist".into()),
    }
}

/// A bad argument is refused before anything runs: the poisoned output stays poisoned.
fn case_arg_check(c: &mut Ctx) -> CaseResult {
    let k = c
        .dev
        .kernel(VADD, &JitOptions::default(), signatures::vadd())
        .map_err(e2s)?;
    let n = 1000;
    let a = DeviceTensor::from_host(&c.stream, &c.rng.vec_f32(n), vec![n]).map_err(e2s)?;
    let b = DeviceTensor::from_host(&c.stream, &c.rng.vec_f32(n - 1), vec![n - 1]).map_err(e2s)?;
    let mut out = DeviceTensor::from_host(&c.stream, &vec![-7.0f32; n], vec![n]).map_err(e2s)?;
    let err = k
        .launch(
            &c.stream,
            &LaunchConfig::for_elements(n, 256),
            &mut [(&a).into(), (&b).into(), (&mut out).into()],
        )
        .err()
        .ok_or("mismatched n was launched")?;
    if !matches!(err, RuntimeError::SymbolMismatch { .. }) {
        return Err(format!("wrong error {err}"));
    }
    let err2 = k
        .launch(
            &c.stream,
            &LaunchConfig::for_elements(n, 256),
            &mut [(&a).into(), 1.0f32.into(), (&mut out).into()],
        )
        .err()
        .ok_or("scalar for tensor was launched")?;
    let got = out.to_host(&c.stream).map_err(e2s)?;
    if got.iter().any(|&v| v != -7.0) {
        return Err("output changed: something launched".into());
    }
    Ok(format!("refused: `{err}`; `{err2}`"))
}

fn case_bigsmem(c: &mut Ctx) -> CaseResult {
    let sig = KernelSignature::new(
        "bigsmem",
        vec![
            Param::tensor("out", ScalarType::U32, vec![256.into()]),
            Param::scalar("nbytes", ScalarType::U32),
        ],
    );
    let k = c
        .dev
        .kernel(BIGSMEM, &JitOptions::default(), sig)
        .map_err(e2s)?;
    let optin = c.dev.attributes().max_shared_memory_per_block_optin;
    let mut report = Vec::new();
    for nbytes in [100 * 1024, optin & !3] {
        let mut out =
            DeviceTensor::from_host(&c.stream, &vec![u32::MAX; 256], vec![256]).map_err(e2s)?;
        let cfg = LaunchConfig::new([1, 1, 1], [256, 1, 1]).with_dynamic_smem(nbytes);
        k.launch(&c.stream, &cfg, &mut [(&mut out).into(), nbytes.into()])
            .map_err(e2s)?;
        let got = out.to_host(&c.stream).map_err(e2s)?;
        let want: Vec<u32> = (0..256).map(|t| nbytes - 4 - 4 * t).collect();
        if got != want {
            return Err(format!("{nbytes} B: got {:?}..", &got[..4]));
        }
        report.push(nbytes.to_string());
    }
    let mut out = DeviceTensor::from_host(&c.stream, &vec![0u32; 256], vec![256]).map_err(e2s)?;
    let too_big = LaunchConfig::new([1, 1, 1], [256, 1, 1]).with_dynamic_smem(optin + 1024);
    match k.launch(&c.stream, &too_big, &mut [(&mut out).into(), 0u32.into()]) {
        Err(e @ RuntimeError::SharedMemoryTooLarge { .. }) => Ok(format!(
            "ok at {} B dynamic; refused: {e}",
            report.join(" and ")
        )),
        Err(e) => Err(format!("wrong error {e}")),
        Ok(_) => Err("launched past the opt-in limit".into()),
    }
}

fn case_cluster(c: &mut Ctx) -> CaseResult {
    let sig = KernelSignature::new(
        "cluster_rank",
        vec![Param::tensor("out", ScalarType::U32, vec!["g2".into()])],
    );
    let k = c
        .dev
        .kernel(CLUSTER, &JitOptions::default(), sig)
        .map_err(e2s)?;
    let mut report = Vec::new();
    for cl in [2u32, 4, 16] {
        let grid = 32u32;
        let mut out = DeviceTensor::from_host(
            &c.stream,
            &vec![u32::MAX; 2 * grid as usize],
            vec![2 * grid as usize],
        )
        .map_err(e2s)?;
        let cfg = LaunchConfig::new([grid, 1, 1], [32, 1, 1]).with_cluster([cl, 1, 1]);
        match k.launch(&c.stream, &cfg, &mut [(&mut out).into()]) {
            Ok(_) => {}
            Err(e) if cl == 16 => {
                report.push(format!("cluster 16 refused by driver: {e}"));
                continue;
            }
            Err(e) => return Err(e2s(e)),
        }
        let got = out.to_host(&c.stream).map_err(e2s)?;
        for b in 0..grid {
            let (rank, n) = (got[2 * b as usize], got[2 * b as usize + 1]);
            if rank != b % cl || n != cl {
                return Err(format!("cluster {cl}: block {b} has rank {rank} of {n}"));
            }
        }
        report.push(format!("cluster {cl} ok"));
    }
    // 32 blocks per cluster is over every limit: refused on the host.
    let mut out = DeviceTensor::from_host(&c.stream, &vec![0u32; 64], vec![64]).map_err(e2s)?;
    let cfg = LaunchConfig::new([32, 1, 1], [32, 1, 1]).with_cluster([32, 1, 1]);
    match k.launch(&c.stream, &cfg, &mut [(&mut out).into()]) {
        Err(RuntimeError::ClusterTooLarge { .. }) => {
            report.push("32 refused (ClusterTooLarge)".into())
        }
        other => return Err(format!("cluster 32: {other:?}")),
    }
    // Preferred cluster (a CUDA 12.8+ attribute): report what the driver does on this device.
    let mut out = DeviceTensor::from_host(&c.stream, &vec![u32::MAX; 64], vec![64]).map_err(e2s)?;
    let cfg = LaunchConfig::new([32, 1, 1], [32, 1, 1])
        .with_cluster([2, 1, 1])
        .with_preferred_cluster([4, 1, 1]);
    let pref = match k.launch(&c.stream, &cfg, &mut [(&mut out).into()]) {
        Ok(_) => {
            let got = out.to_host(&c.stream).map_err(e2s)?;
            let sizes: std::collections::BTreeSet<u32> = (0..32).map(|b| got[2 * b + 1]).collect();
            format!("preferred 4 launched, cluster sizes seen {sizes:?}")
        }
        Err(e) => format!("preferred 4: {e}"),
    };
    report.push(pref);
    Ok(report.join("; "))
}

fn case_tensor_map(c: &mut Ctx) -> CaseResult {
    let (rows, cols) = (256usize, 128usize);
    let bits: Vec<u16> = (0..rows * cols).map(|_| c.rng.next_u64() as u16).collect();
    let host: Vec<half::bf16> = bits.iter().map(|&b| half::bf16::from_bits(b)).collect();
    let g = DeviceTensor::from_host(&c.stream, &host, vec![rows, cols]).map_err(e2s)?;
    // A 64 x 64 bf16 box: 128-byte rows, 128B swizzle.
    let desc = TensorMapDesc::row_major(
        TensorMapDType::BF16,
        g.addr(),
        &[rows, cols],
        &TmaBox::new([64, 64]).swizzle(SwizzleMode::B128),
    );
    let map = c.dev.encode_tensor_map(&desc).map_err(e2s)?;

    // Broken rules are caught on the host with the rule named; the driver, asked directly, only
    // says INVALID_VALUE.
    let mut wide = desc.clone();
    wide.box_dims[0] = 128; // 256 bytes > 128-byte swizzle span
    let mut odd = desc.clone();
    odd.global_address += 8;
    let mut stride = desc.clone();
    stride.global_strides[0] = 200;
    let mut rejections = Vec::new();
    for (what, bad, rule) in [
        (
            "box 256 B > swizzle 128 B",
            &wide,
            TensorMapRule::BoxInnerBytesSwizzle,
        ),
        ("address % 16 = 8", &odd, TensorMapRule::GlobalAddressAlign),
        ("stride 200 B", &stride, TensorMapRule::GlobalStride),
    ] {
        match c.dev.encode_tensor_map(bad) {
            Err(RuntimeError::TensorMapRule { rule: r, .. }) if r == rule => {}
            other => return Err(format!("{what}: host check gave {other:?}")),
        }
        let driver = match c.dev.encode_tensor_map_unchecked(bad) {
            Ok(_) => "driver accepted".to_string(),
            Err(e) => format!("driver: {e}"),
        };
        rejections.push(format!("{what}: host {rule:?}, {driver}"));
    }

    // Load the box at (x0, y0) = (64, 64) with TMA and compare the swizzled shared-memory image.
    let sig = KernelSignature::new(
        "tma_load",
        vec![
            Param::tensor_map("tmap"),
            Param::tensor("out", ScalarType::U32, vec![2049.into()]),
            Param::scalar("x0", ScalarType::U32),
            Param::scalar("y0", ScalarType::U32),
            Param::scalar("nbytes", ScalarType::U32),
        ],
    );
    let k = c
        .dev
        .kernel(TMA, &JitOptions::default(), sig)
        .map_err(e2s)?;
    let nbytes = 64 * 64 * 2u32;
    let mut tile_addr = 0;
    // An inner box, then one hanging over the right and bottom edges (out of bounds reads as 0).
    for (x0, y0) in [(64u32, 64u32), (96, 224)] {
        let mut out = DeviceTensor::from_host(&c.stream, &vec![0xdead_beefu32; 2049], vec![2049])
            .map_err(e2s)?;
        let cfg = LaunchConfig::new([1, 1, 1], [128, 1, 1]).with_dynamic_smem(nbytes + 64);
        let mut args = [
            (&map).into(),
            (&mut out).into(),
            x0.into(),
            y0.into(),
            nbytes.into(),
        ];
        k.launch(&c.stream, &cfg, &mut args).map_err(e2s)?;
        let words = out.to_host(&c.stream).map_err(e2s)?;
        tile_addr = words[2048];
        let bytes: Vec<u8> = words[..2048].iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut bad = 0;
        for r in 0..64usize {
            for col in 0..64usize {
                // Logical byte offset in the box, then the 128B swizzle on the absolute shared
                // address (Swizzle<3,4,3>: bits [7,10) XOR into bits [4,7)).
                let logical = r * 128 + col * 2;
                let abs = tile_addr as usize + logical;
                let phys = (abs ^ (((abs >> 7) & 7) << 4)) - tile_addr as usize;
                let got = u16::from_le_bytes([bytes[phys], bytes[phys + 1]]);
                let (gy, gx) = (y0 as usize + r, x0 as usize + col);
                let want = if gy < rows && gx < cols {
                    bits[gy * cols + gx]
                } else {
                    0
                };
                if got != want {
                    bad += 1;
                }
            }
        }
        if bad != 0 {
            return Err(format!(
                "box at ({x0}, {y0}): {bad} of 4096 elements differ (tile at smem {tile_addr:#x})"
            ));
        }
    }
    Ok(format!(
        "2-D bf16 128B-swizzle map encoded; TMA boxes (inner, and over the edge with zero fill) match the swizzled host reference (tile at smem {tile_addr:#x}); {}",
        rejections.join("; ")
    ))
}

/// The built-in `vector_add`, written by the PTX builder (`ptxkit::kernels`), through the runtime.
/// Its `.maxntid 256` makes the function's thread limit 256: a 512-thread launch is refused on the
/// host.
fn case_builtin_vector_add(c: &mut Ctx) -> CaseResult {
    // The kernel's own signature (the builder declared it once; a restated copy went stale
    // when the parameter order changed and launched `n` into a pointer slot).
    let built = ptxkit::library::vector_add::build(ptxkit::isa::Target::Sm90a)
        .map_err(|e| e.to_string())?;
    let k = c
        .dev
        .kernel(
            built.ptx(),
            &JitOptions::default(),
            built.signature().clone(),
        )
        .map_err(e2s)?;
    let n = 100_003;
    let (ha, hb) = (c.rng.vec_f32(n), c.rng.vec_f32(n));
    let a = DeviceTensor::from_host(&c.stream, &ha, vec![n]).map_err(e2s)?;
    let b = DeviceTensor::from_host(&c.stream, &hb, vec![n]).map_err(e2s)?;
    let mut out = DeviceTensor::from_host(&c.stream, &vec![f32::NAN; n], vec![n]).map_err(e2s)?;
    let block = 256; // the kernel's `.maxntid`
    let refused = k
        .launch(
            &c.stream,
            &LaunchConfig::for_elements(n, 2 * block),
            &mut [(&a).into(), (&b).into(), (&mut out).into()],
        )
        .err()
        .ok_or("a 512-thread launch of a .maxntid 256 kernel was not refused")?;
    k.launch(
        &c.stream,
        &LaunchConfig::for_elements(n, block),
        &mut [(&a).into(), (&b).into(), (&mut out).into()],
    )
    .map_err(e2s)?;
    let got = out.to_host(&c.stream).map_err(e2s)?;
    let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
    if got != want {
        return Err(format!("max rel err {}", max_rel_err(&got, &want)));
    }
    Ok(format!(
        "builder PTX, n={n}: exact; 512 threads refused: {refused}"
    ))
}

/// Inputs written on one stream, the kernel on a second, the result read back on the first: the
/// launcher's cudarc guards must order all three (no explicit synchronisation here).
fn case_cross_stream(c: &mut Ctx) -> CaseResult {
    let k = c
        .dev
        .kernel(VADD, &JitOptions::default(), signatures::vadd())
        .map_err(e2s)?;
    let other = c.dev.new_stream().map_err(e2s)?;
    let n = 1 << 24;
    let (ha, hb) = (c.rng.vec_f32(n), c.rng.vec_f32(n));
    let a = DeviceTensor::from_host(&c.stream, &ha, vec![n]).map_err(e2s)?;
    let b = DeviceTensor::from_host(&c.stream, &hb, vec![n]).map_err(e2s)?;
    let mut out = DeviceTensor::from_host(&c.stream, &vec![f32::NAN; n], vec![n]).map_err(e2s)?;
    k.launch(
        &other,
        &LaunchConfig::for_elements(n, 256),
        &mut [(&a).into(), (&b).into(), (&mut out).into()],
    )
    .map_err(e2s)?;
    let got = out.to_host(&c.stream).map_err(e2s)?;
    let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
    if got != want {
        let bad = got.iter().zip(&want).filter(|(g, w)| g != w).count();
        return Err(format!("{bad} of {n} differ"));
    }
    Ok(format!("n={n}: exact without explicit synchronisation"))
}

fn case_no_device(_c: &mut Ctx) -> CaseResult {
    match Device::new(99) {
        Err(e @ RuntimeError::NoDevice { .. }) => Ok(e.to_string()),
        other => Err(format!("{other:?}")),
    }
}

#[test]
fn gpu_suite() {
    let dev = match Device::new(0) {
        Ok(d) => d,
        Err(e @ (RuntimeError::NoDriver | RuntimeError::NoDevice { .. })) => {
            println!("runtime_gpu: skipped: {e}");
            return;
        }
        Err(e) => panic!("opening device 0 failed: {e}"),
    };
    let stream = dev.new_stream().expect("stream");
    let mut c = Ctx {
        dev,
        stream,
        rng: Rng::fresh(),
    };
    type Case = fn(&mut Ctx) -> CaseResult;
    let cases: [(&str, Case); 14] = [
        ("attributes", case_attributes),
        ("vadd (symbolic n)", case_vadd),
        ("scale (scalar, 2-D)", case_scale),
        ("PDL chain", case_pdl),
        ("module cache", case_cache),
        ("JIT error -> line", case_jit_error),
        ("missing kernel", case_missing_kernel),
        ("arg check before launch", case_arg_check),
        ("dyn smem > 48 KB", case_bigsmem),
        ("cluster launch", case_cluster),
        ("tensor map + TMA", case_tensor_map),
        ("built-in vector_add (builder)", case_builtin_vector_add),
        ("cross-stream ordering", case_cross_stream),
        ("no such device", case_no_device),
    ];
    let mut rows = Vec::new();
    for (name, f) in cases {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut c)))
            .unwrap_or_else(|p| Err(format!("panicked: {:?}", p.downcast_ref::<String>())));
        rows.push((name, r));
    }
    println!("\n| case | result | detail |\n| --- | --- | --- |");
    for (name, r) in &rows {
        match r {
            Ok(d) => println!("| {name} | PASS | {d} |"),
            Err(d) => println!("| {name} | FAIL | {d} |"),
        }
    }
    let failed: Vec<&str> = rows
        .iter()
        .filter(|(_, r)| r.is_err())
        .map(|(n, _)| *n)
        .collect();
    assert!(failed.is_empty(), "failed: {failed:?}");
}

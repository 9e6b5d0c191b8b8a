//! The decode attention kernels assemble with ptxas for sm_90a (the CI has no GPU; this is its
//! check): every configuration and the split combine of every head dim, with no register spills,
//! no serialized wgmma (C7515) and no ignored `setmaxnreg` (C7508), within shared memory at the
//! CTAs an SM the configuration promises; and the parts of the kernel the check cannot see.

mod support;

use ptxkit::isa::{Target, ptxas};
use ptxkit::library::decode::{
    DecodeConfig, DecodeConfigError, DecodeShape, PrefetchSize, build, build_combine, reference,
};

/// Shared memory an SM gives its CTAs on sm_90 (228 KB, 1 KB of it reserved a CTA).
const SM_SMEM: u32 = 228 * 1024;

/// A kernel's name without the suffix of its KV heads' CTAs in pairs (`_ch2`, the FP8 default,
/// `DecodeConfig::cluster_heads`).
fn without_pairs(name: &str) -> &str {
    let name = name.strip_suffix("_st3").unwrap_or(name);
    name.strip_suffix("_ch2").unwrap_or(name)
}
#[test]
fn decode_kernels_assemble_without_spills() {
    let Some(ptxas) = ptxas::for_tests().unwrap() else {
        return;
    };
    for cfg in DecodeConfig::all() {
        let built = build(Target::Sm90a, &cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        support::assemble_clean(&ptxas, &cfg.name(), built.ptx(), Target::Sm90a);
        let smem = built.launch_spec().dynamic_smem_bytes;
        assert!(
            (smem + 1024) * cfg.ctas_per_sm() <= SM_SMEM,
            "{}: {smem} bytes of shared memory a CTA, {} CTAs an SM",
            cfg.name(),
            cfg.ctas_per_sm()
        );
    }
    for d in [64, 128, 256] {
        let built = build_combine(Target::Sm90a, d).unwrap();
        support::assemble_clean(
            &ptxas,
            &format!("decode_combine_d{d}"),
            built.ptx(),
            Target::Sm90a,
        );
    }
}

/// The producer reads each key tile's pages from the block table (one lookup a box: four of
/// 16 rows at 16-row boxes, one of 64; a tile ahead, the first before the loop) and loads every
/// box by TMA onto the stage's barrier (with `evict_first`, the cache's boxes carrying an
/// evict-first L2 policy, Q's not); the consumer releases each stage once.
#[test]
fn a_key_tile_is_one_box_a_page_and_slab() {
    for (rows, boxes) in [(16u32, 4usize), (64, 1)] {
        for evict_first in [false, true] {
            let cfg = DecodeConfig::new(128, 4, rows).with_evict_first(evict_first);
            let ptx = build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
            // Q's 2 slabs, then K's and V's: 2 slabs x boxes each.
            let loads = ptx.matches("cp.async.bulk.tensor.4d").count();
            assert_eq!(loads, 2 + 2 * 2 * boxes, "{}", cfg.name());
            let hinted = ptx
                .lines()
                .filter(|l| l.contains("cp.async.bulk.tensor.4d") && l.contains("L2::cache_hint"))
                .count();
            assert_eq!(hinted, if evict_first { 2 * 2 * boxes } else { 0 });
            assert_eq!(
                ptx.contains("createpolicy.fractional.L2::evict_first.b64"),
                evict_first
            );
            assert_eq!(
                ptx.matches("ld.global.s32").count() - 1,
                2 * boxes,
                "seq_lens, then a page a box: the first tile's before the loop, the next in it"
            );
            assert!(ptx.contains(".minnctapersm 2"), "two CTAs an SM");
        }
    }
}

/// With `cp_async` (an FP8 cache) the producer warpgroup's threads copy the tiles' rows: per
/// tile and thread `d / 32` 16-byte `cp.async.cg` copies of K and as many of V, one block-table
/// read (the warp's 16 keys are one page) and one `cp.async.mbarrier.arrive.noinc` on the
/// stage's `full`, which expects the warpgroup's 128 arrivals; only Q is loaded by TMA. A bf16
/// cache (read by wgmma through the async proxy) refuses it.
#[test]
fn cp_async_pages_are_the_producer_threads_copies() {
    for d in [64u32, 128, 256] {
        for rows in [16u32, 64] {
            let cfg = DecodeConfig::new(d, 4, rows).with_fp8().with_cp_async(true);
            let ptx = build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
            let name = cfg.name();
            assert!(name.contains("_ca"), "{name}");
            assert_eq!(
                ptx.matches("cp.async.cg.shared.global").count() as u32,
                2 * d / 32,
                "{name}"
            );
            assert_eq!(
                ptx.matches("cp.async.mbarrier.arrive.noinc.shared.b64")
                    .count(),
                1,
                "{name}"
            );
            // Q's slabs of 64 columns, nothing of the caches.
            let q_boxes = (d / 64) as usize;
            assert_eq!(ptx.matches("cp.async.bulk.tensor.4d").count(), q_boxes);
            assert_eq!(
                ptx.matches("ld.global.s32").count(),
                3,
                "{name}: seq_lens, then one page a tile: the first tile's before the loop, the \
                 next in it"
            );

            // The ring's full barriers expect 128 arrivals, its empty ones the 4 warps'.
            let inits = |count: &str| {
                ptx.lines()
                    .filter(|l| l.contains("mbarrier.init") && l.trim_end().ends_with(count))
                    .count()
            };
            assert_eq!(inits(", 128;"), cfg.stages() as usize, "{name}");
            assert_eq!(inits(", 4;"), cfg.stages() as usize, "{name}");
        }
    }
    let bf16 = DecodeConfig::new(128, 4, 16).with_cp_async(true);
    assert!(bf16.validate().is_err());
    assert!(build(Target::Sm90a, &bf16).is_err());
    // Evict-first is a TMA box's L2 policy.
    let evict = DecodeConfig::new(128, 4, 16)
        .with_fp8()
        .with_evict_first(true);
    assert!(evict.validate().is_err());
    assert!(evict.with_cp_async(false).validate().is_ok());
}

/// The bodies of the PTX's loops closed by an unconditional branch back to a label (the
/// authoring model's `for_range`: `$L__n:` ... `bra $L__n;`), each from its label on.
fn loop_bodies(ptx: &str) -> Vec<String> {
    let lines: Vec<&str> = ptx.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for (end, line) in lines.iter().enumerate() {
        let Some(label) = line.strip_prefix("bra ").and_then(|l| l.strip_suffix(';')) else {
            continue;
        };
        let head = format!("{label}:");
        if let Some(start) = lines[..end].iter().position(|l| *l == head) {
            out.push(lines[start..end].join("\n"));
        }
    }
    out
}

/// The producer's loop over the key tiles (the loop that loads the cache, by TMA boxes or by
/// `cp.async`) divides by nothing: each box's (or warp's) page slot and row move by adds a tile
/// (`parts::PageCursor`), the divisions by the run-time page size are made before the loop. The
/// pages of 16, 48 (boxes and warps crossing pages at a row that moves a tile) and 64 tokens and
/// a contiguous cache, bf16 and FP8 by both loads (the `cp.async` copies with both block-table
/// reads: a tile ahead, or a window of 32 tiles across the warp's lanes,
/// `DecodeConfig::table_window`, a tile's page then one `shfl.sync.idx`).
#[test]
fn the_producer_divides_by_the_page_size_only_before_its_loop() {
    for page in [16u32, 48, 64, 4096] {
        let bf16 = DecodeConfig::new(128, 4, page);
        let fp8 = bf16.with_fp8();
        let copies = fp8.with_cp_async(true);
        for window in [false, true] {
            let cfg = copies.with_table_window(window);
            let ptx = build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
            let name = cfg.name();
            let bodies: Vec<String> = loop_bodies(&ptx)
                .into_iter()
                .filter(|b| b.contains("cp.async.cg.shared.global"))
                .collect();
            assert_eq!(bodies.len(), 1, "{name}: one loop copies the cache");
            // A tile's page: a shuffle from the window (read again every 32 tiles, in the
            // loop), or a block-table read a tile ahead.
            let shuffles = bodies[0].matches("shfl.sync.idx.b32").count();
            assert_eq!(shuffles, usize::from(window), "{name}");
            assert_eq!(bodies[0].matches("ld.global.s32").count(), 1, "{name}");
            assert_eq!(without_pairs(&name).ends_with("_ca_tw"), window, "{name}");
        }
        for cfg in [
            bf16,
            copies,
            copies.with_table_window(true),
            fp8.with_cp_async(false),
        ] {
            let ptx = build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
            let name = cfg.name();
            let loads = |b: &String| {
                b.contains("cp.async.cg.shared.global") || b.contains("cp.async.bulk.tensor.4d")
            };
            let bodies: Vec<String> = loop_bodies(&ptx).into_iter().filter(loads).collect();
            assert_eq!(bodies.len(), 1, "{name}: one loop loads the cache");
            for op in ["div.", "rem."] {
                assert!(
                    !bodies[0].contains(op),
                    "{name}: `{op}` in the producer's loop"
                );
            }
            assert!(
                ptx.contains("div.u32"),
                "{name}: the divisions before the loop"
            );
        }
    }
}

/// The page touch (`DecodeConfig::touch_pages`, off by default): with it the copies' loop
/// shuffles a second entry from the block-table window each tile (the page `L` tiles on) and
/// lane 0 issues one `prefetch.global.L2` into it in K and one in V (nothing else touches a
/// page: no prefetch anywhere without it); the kernel assembles clean and is named for it.
/// Without the copies' window (or past `PageWindow::MAX_LOOK` tiles) it is a typed error.
#[test]
fn the_page_touch_is_one_prefetch_a_tile_of_k_and_of_v() {
    let ptxas = ptxas::for_tests().unwrap();
    for page in [16u32, 48, 64] {
        let window = DecodeConfig::new(128, 4, page)
            .with_fp8()
            .with_table_window(true);
        assert_eq!(window.touch_pages, 0, "off by default");
        for tiles in [0, 1, 8, ptxkit::parts::PageWindow::MAX_LOOK] {
            let cfg = window.with_touch_pages(tiles);
            let name = cfg.name();
            let ptx = build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
            let bodies: Vec<String> = loop_bodies(&ptx)
                .into_iter()
                .filter(|b| b.contains("cp.async.cg.shared.global"))
                .collect();
            assert_eq!(bodies.len(), 1, "{name}: one loop copies the cache");
            let touches = usize::from(tiles > 0);
            assert_eq!(
                ptx.matches("prefetch.global").count(),
                2 * touches,
                "{name}"
            );
            let prefetches: Vec<&str> = bodies[0]
                .lines()
                .filter(|l| l.contains("prefetch.global.L2 ["))
                .collect();
            assert_eq!(prefetches.len(), 2 * touches, "{name}");
            assert!(
                prefetches.iter().all(|l| l.starts_with("@%p")),
                "{name}: lane 0's"
            );
            let shuffles = bodies[0].matches("shfl.sync.idx.b32").count();
            assert_eq!(shuffles, 1 + touches, "{name}");
            assert_eq!(
                without_pairs(&name).ends_with(&format!("_tw_pt{tiles}")),
                tiles > 0,
                "{name}"
            );
            assert_eq!(cfg.validate(), Ok(()), "{name}");
            if tiles > 0 {
                if let Some(ptxas) = &ptxas {
                    support::assemble_clean(ptxas, &name, &ptx, Target::Sm90a);
                }
            }
        }
    }
    let fp8 = DecodeConfig::new(128, 4, 16).with_fp8();
    let too_far = ptxkit::parts::PageWindow::MAX_LOOK + 1;
    for (cfg, tiles) in [
        (fp8.with_touch_pages(too_far), too_far),
        (fp8.with_table_window(false).with_touch_pages(4), 4),
        (fp8.with_cp_async(false).with_touch_pages(4), 4),
        (DecodeConfig::new(128, 4, 16).with_touch_pages(4), 4),
    ] {
        let name = cfg.name();
        assert_eq!(
            cfg.validate(),
            Err(DecodeConfigError::TouchPages(tiles)),
            "{name}"
        );
        assert!(build(Target::Sm90a, &cfg).is_err(), "{name}");
    }
    // A launcher's TMA-box kernel (DecodeConfig::solo_boxes) touches nothing.
    let boxes = fp8.with_touch_pages(4).with_solo_boxes(true).solo_config();
    let boxes = boxes.expect("a TMA-box kernel at one CTA an SM");
    assert_eq!((boxes.cp_async, boxes.touch_pages), (false, 0));
    assert_eq!(boxes.validate(), Ok(()));
}

/// The copies' L2 prefetch size (`DecodeConfig::l2_prefetch`, off by default): with it every
/// `cp.async` of the cache carries `.L2::64B/128B/256B` after `.global` (PTX ISA 9.7.9.25.3.1)
/// and no copy is without it; without it none carries one. The kernel assembles clean and is
/// named for it. Over TMA boxes (a bf16 cache, FP8 boxes) it is a typed error, and a launcher's
/// TMA-box kernel at one CTA an SM drops it.
#[test]
fn the_l2_prefetch_size_is_on_every_copy_of_the_cache() {
    let ptxas = ptxas::for_tests().unwrap();
    for page in [16u32, 64] {
        let fp8 = DecodeConfig::new(128, 4, page).with_fp8();
        assert_eq!(fp8.l2_prefetch, None, "off by default");
        for (size, q, suffix) in [
            (None, "", ""),
            (Some(PrefetchSize::B64), ".L2::64B", "_l2p64"),
            (Some(PrefetchSize::B128), ".L2::128B", "_l2p128"),
            (Some(PrefetchSize::B256), ".L2::256B", "_l2p256"),
        ] {
            let cfg = fp8.with_l2_prefetch(size);
            let name = cfg.name();
            assert_eq!(cfg.validate(), Ok(()), "{name}");
            let ptx = build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
            let copies = ptx.matches("cp.async.cg.shared.global").count();
            assert!(copies > 0, "{name}");
            let with = ptx
                .matches(&format!("cp.async.cg.shared.global{q} ["))
                .count();
            assert_eq!(with, copies, "{name}: every copy ({q})");
            assert_eq!(
                ptx.matches(".L2::").count(),
                copies * usize::from(size.is_some())
            );
            assert_eq!(
                without_pairs(&name).ends_with(&format!("_tw{suffix}")),
                page == 16,
                "{name}"
            );
            assert!(name.contains(suffix), "{name}");
            if size.is_some() {
                if let Some(ptxas) = &ptxas {
                    support::assemble_clean(ptxas, &name, &ptx, Target::Sm90a);
                }
            }
        }
    }
    let b256 = Some(PrefetchSize::B256);
    let fp8 = DecodeConfig::new(128, 4, 16).with_fp8();
    for cfg in [
        fp8.with_cp_async(false).with_l2_prefetch(b256),
        DecodeConfig::new(128, 4, 16).with_l2_prefetch(b256),
        DecodeConfig::new(128, 4, 4096)
            .with_fp8()
            .with_l2_prefetch(b256),
    ] {
        let name = cfg.name();
        assert_eq!(
            cfg.validate(),
            Err(DecodeConfigError::L2PrefetchTma),
            "{name}"
        );
        assert!(build(Target::Sm90a, &cfg).is_err(), "{name}");
    }
    let boxes = fp8
        .with_l2_prefetch(b256)
        .with_solo_boxes(true)
        .solo_config();
    let boxes = boxes.expect("a TMA-box kernel at one CTA an SM");
    assert_eq!((boxes.cp_async, boxes.l2_prefetch), (false, None));
    assert_eq!(boxes.validate(), Ok(()));
}

/// The default page loads over an FP8 cache: `cp.async` for pages of at most
/// `DecodeConfig::CP_ASYNC_PAGE` (64) tokens, whatever their boxes' rows (16 at 16 and 48
/// tokens, 32, 64), TMA boxes for larger pages and a contiguous cache (one page of the longest
/// sequence); a bf16 cache always by TMA. The configuration keeps its page size.
#[test]
fn fp8_pages_up_to_64_tokens_are_copied_by_cp_async() {
    assert_eq!(DecodeConfig::CP_ASYNC_PAGE, 64);
    for (page, rows, cp_async) in [
        (16, 16, true),
        (32, 32, true),
        (48, 16, true),
        (64, 64, true),
        (128, 64, false),
        (192, 64, false),
        (256, 64, false),
        (131072, 64, false),
    ] {
        let cfg = DecodeConfig::new(128, 4, page);
        assert_eq!((cfg.page_size, cfg.page_rows), (page, rows), "page {page}");
        assert!(!cfg.cp_async, "bf16, page {page}");
        let fp8 = cfg.with_fp8();
        assert_eq!(fp8.cp_async, cp_async, "e4m3, page {page}");
        assert_eq!(fp8.name().contains("_ca"), cp_async, "{}", fp8.name());
        // The copies of 16-row boxes read their block-table entries a window ahead.
        let window = cp_async && rows == 16;
        assert_eq!(fp8.table_window, window, "{}", fp8.name());
        assert_eq!(
            without_pairs(&fp8.name()).ends_with("_ca_tw"),
            window,
            "{}",
            fp8.name()
        );
        // The KV heads' CTAs in pairs over an FP8 cache (DecodeConfig::cluster_heads).
        assert_eq!(fp8.cluster_heads, 2, "{}", fp8.name());
        assert!(fp8.name().contains("_ch2"), "{}", fp8.name());
        // The copies' 3 stages where two CTAs share an SM (DecodeConfig::stage_limit).
        assert_eq!(fp8.stage_limit, cp_async.then_some(3), "{}", fp8.name());
        assert_eq!(cfg.cluster_heads, 1, "bf16, page {page}");
        assert_eq!(fp8.validate(), Ok(()), "{}", fp8.name());
    }
}

/// A page size that is not a positive multiple of its boxes' rows is a typed error, from the
/// check and from the build.
#[test]
fn a_page_size_off_its_boxes_is_refused() {
    let empty = DecodeConfig::new(128, 4, 0);
    let want = DecodeConfigError::PageSize {
        page_size: 0,
        page_rows: 64,
    };
    assert_eq!(empty.validate(), Err(want));
    assert!(build(Target::Sm90a, &empty).is_err());
    let off = DecodeConfig {
        page_size: 40,
        ..DecodeConfig::new(128, 4, 64)
    };
    let want = DecodeConfigError::PageSize {
        page_size: 40,
        page_rows: 64,
    };
    assert_eq!(off.validate(), Err(want));
    assert!(build(Target::Sm90a, &off).is_err());
}

/// Launched as a programmatic dependent (`dependent_launch`, the default), the decode kernel
/// waits for the kernel before it (`griddepcontrol.wait`) before its first global access (the
/// sequence lengths' load); launched as an ordinary kernel it never waits.
#[test]
fn a_dependent_launch_waits_before_its_first_global_access() {
    for fp8 in [false, true] {
        let mut dependent = DecodeConfig::new(128, 4, 16);
        if fp8 {
            dependent = dependent.with_fp8();
        }
        assert!(dependent.dependent_launch, "on by default");
        let ptx = |cfg: DecodeConfig| build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
        let ordinary = dependent.with_dependent_launch(false);
        assert_eq!(ptx(ordinary).matches("griddepcontrol.wait").count(), 0);
        assert_eq!(
            dependent.name().replacen("_dl", "", 1),
            ordinary.name(),
            "{}",
            dependent.name()
        );
        let text = ptx(dependent);
        assert_eq!(text.matches("griddepcontrol.wait").count(), 1);
        let (Some(wait), Some(load)) = (text.find("griddepcontrol.wait"), text.find("ld.global"))
        else {
            panic!("{}: a wait and a load", dependent.name());
        };
        assert!(
            wait < load,
            "{}: the wait before the first load",
            dependent.name()
        );
    }
}

/// The KV heads' CTAs in clusters (`DecodeConfig::cluster_heads`, pairs by default over an FP8
/// cache): the grid's heads rounded up to whole clusters, and a CTA past the KV heads ends at
/// once, before its first barrier or global access; unclustered, no CTA ends early.
#[test]
fn a_clustered_cta_past_the_kv_heads_ends_before_its_barriers() {
    let ptxas = ptxas::for_tests().unwrap();
    for (cfg, clustered) in [
        (DecodeConfig::new(128, 4, 16).with_fp8(), true),
        (
            DecodeConfig::new(128, 4, 16)
                .with_fp8()
                .with_cluster_heads(4),
            true,
        ),
        (
            DecodeConfig::new(128, 4, 16)
                .with_fp8()
                .with_cluster_heads(1),
            false,
        ),
        (DecodeConfig::new(128, 4, 16), false),
    ] {
        let built = build(Target::Sm90a, &cfg).unwrap();
        let text = built.ptx().to_string();
        let name = cfg.name();
        let cluster = built.launch_spec().cluster;
        let want = clustered.then_some([1, cfg.cluster_heads, 1]);
        assert_eq!(cluster, want, "{name}");
        let exits = text
            .lines()
            .filter(|l| l.trim_start().starts_with("@%p") && l.trim_end().ends_with("exit;"))
            .count();
        assert_eq!(exits, usize::from(clustered), "{name}");
        if clustered {
            let at = |what: &str| text.find(what).unwrap_or_else(|| panic!("{name}: {what}"));
            let exit = at("exit;");
            assert!(
                exit < at("mbarrier.init"),
                "{name}: the exit before the barriers"
            );
            assert!(exit < at("ld.global"), "{name}: the exit before the loads");
        }
        if let Some(ptxas) = &ptxas {
            support::assemble_clean(ptxas, &name, &text, Target::Sm90a);
        }
    }
}

/// The combine waits for the decode kernel's grid before it reads the splits (at once unless
/// launched as its programmatic dependent); with `dependent_combine` (the default) the decode
/// kernel lets it start after each consumer's last key tile, bf16 or FP8, and not when it folds
/// the splits.
#[test]
fn the_dependent_combine_is_ordered_by_griddepcontrol() {
    let combine = build_combine(Target::Sm90a, 128).unwrap().ptx().to_string();
    assert_eq!(combine.matches("griddepcontrol.wait").count(), 1);
    for fp8 in [false, true] {
        let mut cfg = DecodeConfig::new(128, 4, 16);
        if fp8 {
            cfg = cfg.with_fp8();
        }
        let ptx = |cfg: DecodeConfig| build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
        let launches = |p: String| p.matches("griddepcontrol.launch_dependents").count();
        assert!(cfg.dependent_combine);
        assert_eq!(launches(ptx(cfg)), 1, "{}", cfg.name());
        assert_eq!(launches(ptx(cfg.with_dependent_combine(false))), 0);
        assert_eq!(launches(ptx(cfg.with_fold())), 0);
    }
}

/// Over an FP8 cache the consumer reads K and V from the ring into registers (`ldmatrix`, V's
/// transposed), converts them there and multiplies with `mma.sync`: no wgmma, no f16 copy of a
/// tile in shared memory (its only shared stores are Q's conversion and the warps' merge).
#[test]
fn the_fp8_consumer_converts_in_registers() {
    let cfg = DecodeConfig::new(128, 4, 16).with_fp8();
    let ptx = build(Target::Sm90a, &cfg).unwrap().ptx().to_string();
    assert!(!ptx.contains("wgmma"), "{}", cfg.name());
    assert!(ptx.contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
    assert!(ptx.contains("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
    // K: 4 ldmatrix of 4 words, each word two conversions; V the same.
    assert_eq!(ptx.matches("cvt.rn.f16x2.e4m3x2").count(), 2 * 4 * 4 * 2);
    // S: 8 k-steps x 2 key blocks; O: 16 column blocks.
    let mmas = ptx
        .matches("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
        .count();
    assert_eq!(mmas, 8 * 2 + 16);
    // Q's conversion in place: 8 words a thread (16 rows x 128 columns / 2 / 128).
    assert_eq!(
        ptx.matches("st.shared.b32").count() + ptx.matches("st.shared.u32").count(),
        8
    );
    // The warps' merge: O's 64 values a thread stored in pairs, read back in pairs (two rows
    // x 4 column pairs x 4 warps).
    assert_eq!(ptx.matches("st.shared.v2.f32").count(), 32);
    assert_eq!(ptx.matches("ld.shared.v2.f32").count(), 2 * 4 * 4);
}

/// At head dims 64 and 128 the launcher's kernel for launches whose CTAs fit one an SM has two
/// consumer warpgroups (`DecodeConfig::solo_consumers`, the default): 384 threads, one CTA an
/// SM, each consumer raised to 240 registers. Over an FP8 cache they take alternate tiles over
/// an even count of ring stages, Q's conversion and the eight warps' merge the 256 consumer
/// threads' at one named barrier (4 words a thread; one turn of rows, 4 column pairs of 8
/// warps); over bf16 each takes its half of every tile's keys (`DecodeConfig::key_halves`, the
/// rule's stages: 3 at 128; alternate tiles 4), clears V at its own barrier (1 and 2), and the
/// second hands its state to the first at barrier 3 (`bar.arrive`, `bar.sync`). Two at head
/// dim 256, over an odd count of stages on alternate tiles or fewer than the merge takes, and
/// key halves over FP8, are typed errors.
#[test]
fn two_consumer_warpgroups_take_the_split_problems() {
    for fp8 in [false, true] {
        for d in [64u32, 128] {
            for page in [16u32, 64, 4096] {
                let mut cfg = DecodeConfig::new(d, 4, page);
                if fp8 {
                    cfg = cfg.with_fp8();
                }
                let pair = cfg.solo_config().unwrap();
                let name = pair.name();
                assert_eq!((pair.consumers, pair.ctas_per_sm()), (2, 1), "{name}");
                // Alternate tiles (FP8) take an even count of stages.
                assert!(!fp8 || pair.stages() % 2 == 0, "{name}");
                let suffix = if fp8 { "_c2" } else { "_c2h" };
                assert!(name.ends_with(suffix), "{name}");
                assert_eq!(pair.roles().threads(), 384);
                let ptx = build(Target::Sm90a, &pair).unwrap().ptx().to_string();
                assert!(ptx.contains(".maxntid 384, 1, 1"), "{name}");
                assert!(ptx.contains(".minnctapersm 1"), "{name}");
                assert!(ptx.contains("setmaxnreg.inc.sync.aligned.u32 240;"));
                if fp8 {
                    assert!(ptx.contains("bar.sync 1, 256;"), "{name}");
                    assert!(!ptx.contains("bar.sync 1, 128;"), "{name}");
                    let words =
                        ptx.matches("st.shared.b32").count() + ptx.matches("st.shared.u32").count();
                    assert_eq!(words as u32, 16 * d / 2 / 256, "{name}");
                    let pairs = ptx.matches("ld.shared.v2.f32").count() as u32;
                    assert_eq!(pairs, d / 32 * 8, "{name}");
                } else {
                    // Key halves (the default): the rule's 3 or 6; alternate tiles 4 or 6.
                    assert_eq!(pair.stages(), if d == 128 { 3 } else { 6 }, "{name}");
                    let alternate = cfg.with_key_halves(false).solo_config().unwrap();
                    assert_eq!(alternate.stages(), if d == 128 { 4 } else { 6 }, "{name}");
                    assert!(ptx.contains("bar.arrive 3, 256;"), "{name}");
                    assert!(ptx.contains("bar.sync 3, 256;"), "{name}");
                    // The clearing barrier from a register (1 + the consumer's index).
                    assert!(!ptx.contains("bar.sync 1, 128;") || cfg.fold, "{name}");
                }
                // One consumer warpgroup where asked (DecodeConfig::solo_consumers 1).
                let one = cfg.with_solo_consumers(1).solo_config();
                assert!(one.is_none_or(|c| c.consumers == 1), "{}", cfg.name());
            }
        }
    }
    let fp8 = DecodeConfig::new(128, 4, 4096).with_fp8();
    let two = fp8.with_consumers(2);
    assert_eq!(two.validate(), Ok(()));
    for cfg in [
        DecodeConfig::new(256, 4, 4096).with_fp8(),
        DecodeConfig::new(256, 4, 4096),
    ] {
        assert_eq!(cfg.solo_config(), None);
        let wide = cfg.with_consumers(2);
        assert_eq!(wide.validate(), Err(DecodeConfigError::Consumers(2)));
    }
    assert_eq!(
        fp8.with_solo_consumers(3).validate(),
        Err(DecodeConfigError::Consumers(3))
    );
    let bf16 = DecodeConfig::new(128, 4, 4096).with_consumers(2);
    for (cfg, stages, ok) in [
        (two, 3, false),
        (two, 4, false),
        (two, 5, false),
        (two, 6, true),
        (bf16, 2, true),
        (bf16, 3, true),
        (bf16.with_key_halves(false), 3, false),
    ] {
        let got = cfg.with_stage_limit(Some(stages)).validate();
        let fewest = cfg.pair_stages();
        let want = match ok {
            true => Ok(()),
            false => Err(DecodeConfigError::ConsumerStages { stages, fewest }),
        };
        assert_eq!(got, want, "{} at {stages} stages", cfg.name());
    }
    assert_eq!(bf16.validate(), Ok(()));
    assert_eq!(
        fp8.with_key_halves(true).validate(),
        Err(DecodeConfigError::KeyHalvesFp8)
    );
}

/// The split rule: one split when the batch fills the SMs, several for one long sequence (one
/// CTA an SM where that fills them, else two; two first for a kernel of fewer stages than the
/// rule's), none that leaves a split under 4 key tiles.
#[test]
fn splits_fill_the_sms() {
    // A bf16 cache at the rule's stages (16-token pages have a limit: below).
    let cfg = DecodeConfig::new(128, 4, 16).with_stage_limit(None);
    assert_eq!(cfg.splits(64, 8, 1, 4096, 132), 1);
    // One 128k sequence over 8 KV heads: 16 splits, one CTA on 128 of 132 SMs (a contiguous
    // FP8 cache alike).
    assert_eq!(cfg.splits(1, 8, 1, 131072, 132), 16);
    let contiguous = DecodeConfig::new(128, 4, 131072).with_fp8();
    assert_eq!(contiguous.splits(1, 8, 1, 131072, 132), 16);
    // Eight sequences of 64k: 2 splits (128 CTAs).
    assert_eq!(cfg.splits(8, 8, 1, 65536, 132), 2);
    // FP8 pages copied by cp.async, whose kernel for two CTAs an SM has 3 stages of the rule's
    // 6 (DecodeConfig::stage_limit): two CTAs an SM first, 33 splits (264 CTAs) and 4 (256);
    // with the rule's stages one CTA an SM first again.
    let copies = DecodeConfig::new(128, 4, 16).with_fp8();
    assert_eq!(copies.splits(1, 8, 1, 131072, 132), 33);
    let bf16 = DecodeConfig::new(128, 4, 16);
    assert_eq!(bf16.splits(8, 8, 1, 65536, 132), 4);
    assert_eq!(copies.splits(8, 8, 1, 65536, 132), 4);
    let rule = copies.with_stage_limit(None);
    assert_eq!(rule.splits(1, 8, 1, 131072, 132), 16);
    assert_eq!(copies.splits(32, 8, 1, 16384, 132), 1);
    // Eleven of 64k: one CTA an SM fills 88 of 132 at most, one wave of two an SM all 264
    // slots (3 splits).
    assert_eq!(cfg.splits(11, 8, 1, 65536, 132), 3);
    assert_eq!(cfg.splits(32, 8, 1, 16384, 132), 1);
    assert_eq!(cfg.splits(1, 8, 1, 256, 132), 1);
}

/// The launcher's kernel for one CTA an SM (`DecodeConfig::solo`, off by default): at head dims
/// 64 and 128 the configuration built for one (`.minnctapersm 1`, twice the ring's stages, the
/// same name with `_1cta`); none at 256 (every kernel is one) or without `solo`.
#[test]
fn the_solo_kernel_is_built_for_one_cta_an_sm() {
    for fp8 in [false, true] {
        for d in [64u32, 128] {
            let mut cfg = DecodeConfig::new(d, 4, 16)
                .with_stage_limit(None)
                .with_solo_consumers(1);
            if fp8 {
                // Without the TMA boxes or two consumer warpgroups for launches whose CTAs fit
                // one an SM, with the rule's stages (DecodeConfig::stage_limit).
                cfg = cfg
                    .with_fp8()
                    .with_solo_boxes(false)
                    .with_solo_consumers(1)
                    .with_stage_limit(None);
            }
            assert!(!cfg.solo);
            assert_eq!(cfg.solo_config(), None);
            let one = cfg.with_solo(true).solo_config().unwrap();
            assert_eq!((one.ctas_per_sm(), cfg.ctas_per_sm()), (1, 2));
            assert_eq!(one.stages(), 2 * cfg.stages(), "{}", one.name());
            assert_eq!(one.name(), format!("{}_1cta", cfg.name()));
            assert!(one.solo);
            let ptx = build(Target::Sm90a, &one).unwrap().ptx().to_string();
            assert!(ptx.contains(".minnctapersm 1"), "{}", one.name());
            let inits = ptx.matches("mbarrier.init").count() as u32;
            // Each stage's full and empty barriers, and Q's.
            assert_eq!(inits, 2 * one.stages() + 1, "{}", one.name());
        }
        let mut wide = DecodeConfig::new(256, 4, 16).with_solo(true);
        if fp8 {
            wide = wide.with_fp8();
        }
        assert_eq!(wide.solo_config(), None);
        assert_eq!(wide.with_one_cta(true).name(), wide.name());
    }
}

/// With `DecodeConfig::solo_boxes` (off by default since session 18), launches whose CTAs fit
/// one an SM take TMA boxes over an FP8 cache of 16-row pages that `cp.async` copies otherwise
/// (head dims 64 and 128):
/// the launcher's second kernel is the same configuration with TMA boxes (and, with `solo`,
/// built for one CTA an SM); none for 32- and 64-row pages, bf16, TMA-box configurations, head
/// dim 256, or with `solo_boxes` off.
#[test]
fn fp8_16_row_pages_take_tma_boxes_at_one_cta_an_sm() {
    for d in [64u32, 128] {
        for page in [16u32, 48] {
            // With the rule's stages (DecodeConfig::stage_limit) and one consumer warpgroup
            // (DecodeConfig::solo_consumers): its own second kernel.
            let copies = DecodeConfig::new(d, 4, page)
                .with_fp8()
                .with_solo_consumers(1)
                .with_stage_limit(None);
            assert!(!copies.solo_boxes && copies.cp_async, "{}", copies.name());
            assert_eq!(copies.solo_config(), None, "{}", copies.name());
            let cfg = copies.with_solo_boxes(true);
            let boxes = cfg.solo_config().unwrap();
            assert_eq!(boxes, cfg.with_cp_async(false), "{}", cfg.name());
            assert_eq!(boxes.ctas_per_sm(), 2);
            assert!(
                !build(Target::Sm90a, &boxes)
                    .unwrap()
                    .ptx()
                    .contains("cp.async.cg")
            );
            let one = cfg.with_solo(true).solo_config().unwrap();
            assert_eq!(
                one,
                cfg.with_cp_async(false).with_one_cta(true).with_solo(true)
            );
            assert_eq!(cfg.with_solo_boxes(false).solo_config(), None);
        }
        for page in [32u32, 64, 128] {
            let cfg = DecodeConfig::new(d, 4, page)
                .with_fp8()
                .with_solo_boxes(true)
                .with_solo_consumers(1)
                .with_stage_limit(None);
            assert_eq!(cfg.solo_config(), None);
        }
        let bf16 = DecodeConfig::new(d, 4, 16)
            .with_stage_limit(None)
            .with_solo_consumers(1);
        assert_eq!(bf16.solo_config(), None, "bf16");
        let tma = DecodeConfig::new(d, 4, 16)
            .with_fp8()
            .with_cp_async(false)
            .with_solo_consumers(1)
            .with_stage_limit(None);
        assert_eq!(tma.solo_config(), None);
    }
    assert_eq!(DecodeConfig::new(256, 4, 16).with_fp8().solo_config(), None);
}

/// At head dim 128 the kernel for launches whose CTAs share SMs has 3 ring stages over an FP8
/// cache copied by `cp.async` and 2 over a bf16 cache of 16-row page boxes or a contiguous one
/// (`DecodeConfig::stage_limit`, names `_st3`, `_st2`), and the launcher's second kernel, for
/// launches whose CTAs fit one an SM, the rule's 6 or 3; FP8 TMA boxes (a contiguous cache,
/// pages over 64 tokens) and bf16 32- and 64-row page boxes keep the rule's. Head dim 64
/// takes 3 of any cache, 256 FP8 4 and bf16 2 (`DecodeConfig::measured_stage_limit`). A limit
/// below 3 over FP8 (the warps' merge reuses 3 stages) or 2 over bf16 is a typed error.
#[test]
fn fp8_copies_take_three_stages_where_two_ctas_share_an_sm() {
    let inits = |cfg: &DecodeConfig| {
        let ptx = build(Target::Sm90a, cfg).unwrap().ptx().to_string();
        // Each stage's full and empty barriers, and Q's.
        (ptx.matches("mbarrier.init").count() as u32 - 1) / 2
    };
    for page in [16u32, 64] {
        let cfg = DecodeConfig::new(128, 4, page).with_fp8();
        assert!(cfg.cp_async, "{}", cfg.name());
        assert_eq!(
            (cfg.stage_limit, cfg.stages()),
            (Some(3), 3),
            "{}",
            cfg.name()
        );
        assert!(cfg.name().ends_with("_ch2_st3"), "{}", cfg.name());
        assert_eq!(inits(&cfg), 3, "{}", cfg.name());
        // With two consumer warpgroups (DecodeConfig::solo_consumers), one CTA an SM.
        let alone = cfg.solo_config().unwrap();
        assert_eq!(alone, cfg.with_stage_limit(None).with_consumers(2));
        assert_eq!((alone.stages(), alone.ctas_per_sm()), (6, 1));
        assert_eq!(inits(&alone), 6, "{}", alone.name());
        assert!(!alone.name().contains("_st"), "{}", alone.name());
    }
    // bf16 16-row page boxes: 2 of the rule's 3.
    let boxes = DecodeConfig::new(128, 4, 16);
    assert_eq!((boxes.stage_limit, boxes.stages()), (Some(2), 2));
    assert!(boxes.name().ends_with("_st2"), "{}", boxes.name());
    assert_eq!(inits(&boxes), 2);
    let pair = boxes.with_stage_limit(None).with_consumers(2);
    assert_eq!(boxes.solo_config(), Some(pair));
    assert_eq!(DecodeConfig::new(128, 4, 48).stage_limit, Some(2));
    // A contiguous bf16 cache: 2 of 3 on the two-CTA kernel, the rule's 3 on the second; its
    // split launches still one CTA an SM first (16 splits at 1 x 128k, 2 at 8 x 64k), not the
    // two CTAs an SM a stage limit puts first elsewhere.
    for page in [DecodeConfig::CONTIGUOUS_PAGE, 4096, 131072] {
        let contiguous = DecodeConfig::new(128, 4, page);
        assert_eq!((contiguous.stage_limit, contiguous.stages()), (Some(2), 2));
        assert!(contiguous.name().ends_with("_st2"), "{}", contiguous.name());
        let pair = contiguous.with_stage_limit(None).with_consumers(2);
        assert_eq!(contiguous.solo_config(), Some(pair));
        assert_eq!(contiguous.splits(1, 8, 1, 131072, 132), 16);
        assert_eq!(contiguous.splits(8, 8, 1, 65536, 132), 2);
    }
    assert_eq!(inits(&DecodeConfig::new(128, 4, 4096)), 2);
    for cfg in [
        DecodeConfig::new(128, 4, 4096)
            .with_fp8()
            .with_solo_consumers(1),
        DecodeConfig::new(128, 4, 128)
            .with_fp8()
            .with_solo_consumers(1),
        DecodeConfig::new(128, 4, DecodeConfig::CONTIGUOUS_PAGE - 64).with_solo_consumers(1),
        DecodeConfig::new(128, 4, 64).with_solo_consumers(1),
        DecodeConfig::new(128, 4, 32).with_solo_consumers(1),
    ] {
        assert_eq!(cfg.stage_limit, None, "{}", cfg.name());
        assert_eq!(cfg.stages(), cfg.stages_by_rule(), "{}", cfg.name());
        assert_eq!(cfg.solo_config(), None, "{}", cfg.name());
    }
    // Head dim 64: 3 stages of any cache (bf16 of 6, FP8 of 12), the rule's on the second
    // kernel; 256 (one CTA an SM): FP8 4 of 6, bf16 2 of 3, on every launch (no second kernel).
    for (cfg, stages, rule) in [
        (DecodeConfig::new(64, 4, 16), 3, 6),
        (DecodeConfig::new(64, 4, 4096), 3, 6),
        (DecodeConfig::new(64, 4, 16).with_fp8(), 3, 12),
        (DecodeConfig::new(64, 4, 4096).with_fp8(), 3, 12),
        (DecodeConfig::new(256, 4, 16).with_fp8(), 4, 6),
        (DecodeConfig::new(256, 4, 4096), 2, 3),
    ] {
        assert_eq!(
            (cfg.stages(), cfg.stages_by_rule()),
            (stages, rule),
            "{}",
            cfg.name()
        );
        assert_eq!(inits(&cfg), stages, "{}", cfg.name());
        let second = cfg.solo_config();
        let rule = cfg.with_stage_limit(None).with_consumers(2);
        match cfg.head_dim {
            256 => assert_eq!(second, None, "{}", cfg.name()),
            _ => assert_eq!(second, Some(rule), "{}", cfg.name()),
        }
    }
    let fp8 = DecodeConfig::new(128, 4, 16).with_fp8();
    assert_eq!(
        fp8.with_stage_limit(Some(2)).validate(),
        Err(DecodeConfigError::StageLimit { most: 2, fewest: 3 })
    );
    let bf16 = DecodeConfig::new(128, 4, 16);
    assert_eq!(bf16.with_stage_limit(Some(2)).validate(), Ok(()));
    assert_eq!(
        bf16.with_stage_limit(Some(1)).validate(),
        Err(DecodeConfigError::StageLimit { most: 1, fewest: 2 })
    );
    // A limit at or above the rule's is none: no second kernel (with one consumer warpgroup
    // there), the same name.
    let at_rule = fp8.with_stage_limit(Some(6)).with_solo_consumers(1);
    assert_eq!((at_rule.stages(), at_rule.solo_config()), (6, None));
    assert_eq!(at_rule.name(), fp8.with_stage_limit(None).name());
}

/// Launches of 2 to `DecodeConfig::fold_up_to` splits fold (the last split combines them in the
/// decode kernel; by default every split the rule chooses), more splits and one split do not; with `fold` every
/// launch does. The launcher's folded kernels are the configuration with `fold` (and its
/// one-CTA kernel's).
#[test]
fn launches_of_up_to_64_splits_fold() {
    let cfg = DecodeConfig::new(128, 4, 16).with_fp8();
    assert_eq!(cfg.fold_up_to, DecodeConfig::MOST_SPLITS);
    let folds: Vec<usize> = (1..=80).filter(|&s| cfg.folds(s)).collect();
    assert_eq!(folds, (2..=64).collect::<Vec<_>>());
    // The rule never chooses more than the default folds.
    for (batch, ctx) in [(1, 131_072), (1, 1 << 20), (2, 65_536), (8, 65_536)] {
        assert!(cfg.splits(batch, 8, 1, ctx, 132) <= cfg.fold_up_to as usize);
    }
    assert_eq!(cfg.folded_config(), Some(cfg.with_fold()));
    let folded = cfg.with_fold();
    assert!(folded.name().contains("_fold"), "{}", folded.name());
    assert_eq!(folded.solo_config().map(|c| c.fold), Some(true));
    assert!((1..=40).all(|s| folded.folds(s)));
    assert_eq!(folded.folded_config(), None);
    let never = cfg.with_fold_up_to(1);
    assert!((1..=40).all(|s| !never.folds(s)));
    assert_eq!(never.folded_config(), None);
}

/// The reference reads each sequence through its block table: two sequences whose pages are
/// interleaved give what the same keys give contiguous.
#[test]
fn reference_follows_the_block_table() {
    let (d, ps) = (4, 2);
    let shape = DecodeShape {
        seq_lens: vec![3, 4],
        q_len: 1,
        heads: 1,
        kv_heads: 1,
        head_dim: d,
        page_size: ps,
    };
    let q: Vec<f32> = (0..2 * d).map(|i| i as f32 * 0.1).collect();
    let keys: Vec<f32> = (0..8 * d).map(|i| ((i * 7) % 5) as f32 * 0.2).collect();
    // Contiguous: sequence 0 on pages 0-1, sequence 1 on pages 2-3; interleaved: 0 on 1 and 3,
    // 1 on 0 and 2, the same rows moved.
    let contiguous = reference(&q, &keys, &keys, &[0, 1, 2, 3], &shape, 0.5);
    let mut moved = vec![0f32; keys.len()];
    for (from, to) in [(0usize, 1usize), (1, 3), (2, 0), (3, 2)] {
        let n = ps * d;
        moved[to * n..][..n].copy_from_slice(&keys[from * n..][..n]);
    }
    let interleaved = reference(&q, &moved, &moved, &[1, 3, 0, 2], &shape, 0.5);
    assert_eq!(contiguous, interleaved);
}

/// The KV heads' CTAs in clusters (`DecodeConfig::cluster_heads`): off by default; at 2, 4 and 8
/// heads the kernel reads its KV head from its cluster and its rank in it (`%clusterid.y`,
/// `%cluster_ctaid.y`, PTX ISA 10.1), declares the cluster's shape and assembles clean, bf16 and
/// FP8; other sizes are a typed error.
#[test]
fn clusters_of_kv_heads_take_the_head_from_the_cluster() {
    let ptxas = ptxas::for_tests().unwrap();
    let base = DecodeConfig::new(128, 4, 16);
    assert_eq!(base.cluster_heads, 1, "off by default");
    assert!(
        !build(Target::Sm90a, &base)
            .unwrap()
            .ptx()
            .contains("%cluster_ctaid")
    );
    for cfg in [base, base.with_fp8()] {
        for heads in [2u32, 4, 8] {
            let c = cfg.with_cluster_heads(heads);
            let name = c.name();
            assert!(name.contains(&format!("_ch{heads}")), "{name}");
            assert_eq!(c.validate(), Ok(()), "{name}");
            let ptx = build(Target::Sm90a, &c).unwrap().ptx().to_string();
            assert!(ptx.contains("%cluster_ctaid.y"), "{name}");
            assert!(ptx.contains("%clusterid.y"), "{name}");
            if let Some(ptxas) = &ptxas {
                support::assemble_clean(ptxas, &name, &ptx, Target::Sm90a);
            }
        }
    }
    for heads in [0u32, 3, 16] {
        assert_eq!(
            base.with_cluster_heads(heads).validate(),
            Err(ptxkit::library::decode::DecodeConfigError::ClusterHeads(
                heads
            ))
        );
    }
}

/// A persistent grid (`DecodeConfig::persistent`): the launcher sizes the grid, each role walks
/// the items by the grid's stride, Q comes through a ring of two buffers both consumers
/// release, the second consumer's O through a buffer of its own after the two meet at their
/// own barrier, and the registers fit; a configuration without two bf16 consumer warpgroups on
/// key halves, or with clusters, is refused.
#[test]
fn a_persistent_grid_walks_the_items() {
    for d in [64u32, 128] {
        for page in [16u32, 64, 4096] {
            let cfg = DecodeConfig::new(d, 4, page)
                .with_consumers(2)
                .with_stage_limit(None)
                .with_persistent(true);
            let name = cfg.name();
            assert!(name.ends_with("_c2h_pg"), "{name}");
            assert_eq!(cfg.validate(), Ok(()), "{name}");
            let built = build(Target::Sm90a, &cfg).unwrap();
            assert!(built.launch_spec().persistent.is_some(), "{name}");
            let ptx = built.ptx().to_string();
            // Both roles stride by the grid (the producer's thread and each consumer).
            assert!(ptx.matches("%nctaid.x").count() >= 2, "{name}");
            assert!(
                ptx.contains("setmaxnreg.dec.sync.aligned.u32 56;"),
                "{name}"
            );
            assert!(
                ptx.contains("setmaxnreg.inc.sync.aligned.u32 224;"),
                "{name}"
            );
            // The two meet at their own barrier, then hand over at the handover's.
            assert!(ptx.contains("bar.sync 4, 256;"), "{name}");
            assert!(ptx.contains("bar.arrive 3, 256;"), "{name}");
            assert!(ptx.contains("bar.sync 3, 256;"), "{name}");
            assert!(!ptx.contains("q_full"), "{name}");
            // The one-CTA kernel of a CTA an item loads Q once.
            let once = cfg.with_persistent(false);
            let ptx = build(Target::Sm90a, &once).unwrap().ptx().to_string();
            assert!(!ptx.contains("bar.sync 4, 256;"), "{}", once.name());
        }
    }
    let bf16 = DecodeConfig::new(128, 4, 4096).with_persistent(true);
    for cfg in [
        bf16,
        bf16.with_consumers(2).with_key_halves(false),
        bf16.with_consumers(2).with_cluster_heads(2),
        DecodeConfig::new(128, 4, 4096)
            .with_fp8()
            .with_consumers(2)
            .with_persistent(true),
    ] {
        assert_eq!(
            cfg.validate(),
            Err(DecodeConfigError::Persistent),
            "{}",
            cfg.name()
        );
    }
}

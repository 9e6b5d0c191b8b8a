//! Several GPUs of one host in one process: a [`DeviceGroup`] opens one [`Device`] per rank with
//! a compute stream and a copy stream each, enables peer access between every pair (so each
//! rank's kernels and copy engines read and write the others' memory through their ordinary
//! device addresses: CUDA Driver API `cuCtxEnablePeerAccess`, and `cuMemPoolSetAccess` for the
//! stream-ordered allocations cudarc makes), and holds an NCCL communicator
//! per device (`ncclCommInitAll`, through cudarc's `nccl` feature) for the collectives.
//!
//! - [`Symmetric`]: one allocation of the same length on every rank; any rank's address is
//!   usable by every other rank's kernels and copies once peer access is on.
//! - [`Flags`]: 32-bit words per rank (`cuMemAlloc`: stream memory operations refuse pool
//!   memory).
//! - [`DeviceGroup::signal`] / [`DeviceGroup::wait_value`]: a stream writes a 32-bit flag
//!   (`cuStreamWriteValue32`, with its default memory barrier: the stream's earlier writes,
//!   copies included, are visible before the flag) or waits until one reaches a value
//!   (`cuStreamWaitValue32`, `GEQ`). A kernel waits on such a flag with an
//!   `ld.acquire.sys` poll ([`crate::kernel::KernelBuilder::wait_flag`]).
//! - [`DeviceGroup::copy`]: a copy-engine copy between any two ranks (`cuMemcpyPeerAsync`).
//!
//! No NVLink multicast: nothing here creates a multicast object, and the kernels never use
//! `multimem` (NCCL is expected to run with `NCCL_NVLS_ENABLE=0`).
//!
//! Kernels are loaded and launched per rank as on one GPU ([`Device::kernel`],
//! [`crate::runtime::LoadedKernel::launch`]), with the same argument checks. The libraries are
//! loaded dynamically: a machine without libcuda gets [`RuntimeError::NoDriver`], one without
//! libnccl [`RuntimeError::NoNccl`] from [`DeviceGroup::init_nccl`], never a panic.
//!
//! ```
//! use ptxkit::runtime::{DeviceGroup, nccl_available};
//!
//! // On a machine without GPUs (or without NCCL) these are errors, not panics.
//! match DeviceGroup::all() {
//!     Ok(group) => println!("{} GPUs, peer access on", group.world()),
//!     Err(e) => println!("no device group here: {e}"),
//! }
//! println!("NCCL loadable: {}", nccl_available());
//! ```

use std::sync::Arc;

use cudarc::driver::{
    CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, result, sys,
};
use cudarc::nccl::{Comm, NcclType, ReduceOp};

use super::device::{Device, device_count};
use super::error::{Result, RuntimeError};
use super::tensor::TensorRef;
use crate::runtime::{Element, TensorDesc};

/// Whether the NCCL library can be loaded on this machine (every NCCL call through cudarc panics
/// when it cannot, so [`DeviceGroup::init_nccl`] asks this first).
pub fn nccl_available() -> bool {
    // SAFETY: only tries to open the library by its candidate names; no symbol is called.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

/// What one NCCL call returns.
type NcclResult =
    std::result::Result<cudarc::nccl::result::NcclStatus, cudarc::nccl::result::NcclError>;

/// The two collectives [`DeviceGroup`] runs.
#[derive(Debug, Clone, Copy)]
enum Collective {
    /// `ncclAllGather`: each rank's `recv` is every rank's `send`.
    AllGather,
    /// `ncclReduceScatter`: each rank's `recv` is its part of the ranks' `send`s summed.
    ReduceScatter,
}

fn nccl_err(op: &'static str) -> impl Fn(cudarc::nccl::result::NcclError) -> RuntimeError {
    move |e| RuntimeError::Nccl {
        op,
        message: format!("{e:?}"),
    }
}

/// A driver call's error, named.
fn driver(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> RuntimeError {
    move |source| RuntimeError::DriverCall { call, source }
}

/// `cuStreamWriteValue32` or `cuStreamWaitValue32`: a stream memory operation on a 32-bit word.
type StreamValueOp = unsafe fn(sys::CUstream, sys::CUdeviceptr, u32, u32) -> sys::CUresult;

/// Enqueues `op` with its flags on `stream` for the word at `addr` and `value` (CUDA Driver API
/// stream memory operations); a failure names the driver call `call`.
fn stream_value(
    stream: &CudaStream,
    addr: u64,
    value: u32,
    (op, flags): (StreamValueOp, u32),
    call: &'static str,
) -> Result<()> {
    stream.context().bind_to_thread()?;
    // SAFETY: `addr` is a 4-byte word of device memory the stream's device can read and write
    // (the caller's flag array, allocated by its group); the operation is ordered on `stream`.
    unsafe { op(stream.cu_stream(), addr, value, flags) }
        .result()
        .map_err(driver(call))?;
    Ok(())
}

fn group_err(reason: impl Into<String>) -> RuntimeError {
    RuntimeError::Group {
        reason: reason.into(),
    }
}

/// The GPUs of one host driven by one process: a device, a compute stream and a copy stream per
/// rank, peer access between every pair, and (after [`DeviceGroup::init_nccl`]) an NCCL
/// communicator per device whose collectives run on the compute streams.
pub struct DeviceGroup {
    devices: Vec<Device>,
    streams: Vec<Arc<CudaStream>>,
    copy_streams: Vec<Arc<CudaStream>>,
    comms: Option<Vec<Comm>>,
}

impl std::fmt::Debug for DeviceGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceGroup")
            .field("devices", &self.devices)
            .field("nccl", &self.comms.is_some())
            .finish()
    }
}

impl DeviceGroup {
    /// Every GPU the driver sees, rank `i` on device `i`.
    pub fn all() -> Result<DeviceGroup> {
        let count = device_count()?;
        if count == 0 {
            return Err(RuntimeError::NoDevice { ordinal: 0, count });
        }
        DeviceGroup::new(&(0..count).collect::<Vec<_>>())
    }

    /// The devices `ordinals` (rank `i` on `ordinals[i]`, each at most once), with peer access
    /// enabled from every device to every other one: [`RuntimeError::PeerAccess`] when a pair
    /// has none.
    pub fn new(ordinals: &[usize]) -> Result<DeviceGroup> {
        if ordinals.is_empty() {
            return Err(group_err("no devices"));
        }
        for (i, o) in ordinals.iter().enumerate() {
            if ordinals[..i].contains(o) {
                return Err(group_err(format!("device {o} named twice")));
            }
        }
        let devices = ordinals
            .iter()
            .map(|&o| Device::new(o))
            .collect::<Result<Vec<_>>>()?;
        for a in &devices {
            for b in &devices {
                if a.ordinal() != b.ordinal() {
                    enable_peer_access(a, b)?;
                }
            }
        }
        let streams = devices
            .iter()
            .map(Device::new_stream)
            .collect::<Result<Vec<_>>>()?;
        let copy_streams = devices
            .iter()
            .map(Device::new_stream)
            .collect::<Result<Vec<_>>>()?;
        Ok(DeviceGroup {
            devices,
            streams,
            copy_streams,
            comms: None,
        })
    }

    /// Creates one NCCL communicator per device (`ncclCommInitAll`), its collectives on the
    /// ranks' compute streams: [`RuntimeError::NoNccl`] when libnccl cannot be loaded.
    pub fn init_nccl(&mut self) -> Result<()> {
        if !nccl_available() {
            return Err(RuntimeError::NoNccl);
        }
        let comms =
            Comm::from_devices(self.streams.clone()).map_err(nccl_err("ncclCommInitAll"))?;
        self.comms = Some(comms);
        Ok(())
    }

    /// Ranks (devices) in the group.
    pub fn world(&self) -> usize {
        self.devices.len()
    }

    fn check_rank(&self, rank: usize) -> Result<()> {
        match rank < self.world() {
            true => Ok(()),
            false => Err(group_err(format!(
                "rank {rank} of a group of {}",
                self.world()
            ))),
        }
    }

    /// Rank `rank`'s device.
    pub fn device(&self, rank: usize) -> Result<&Device> {
        self.check_rank(rank)?;
        Ok(&self.devices[rank])
    }

    /// Rank `rank`'s compute stream (kernels, and NCCL's collectives).
    pub fn stream(&self, rank: usize) -> Result<&Arc<CudaStream>> {
        self.check_rank(rank)?;
        Ok(&self.streams[rank])
    }

    /// Rank `rank`'s copy stream (copy-engine transfers and flags beside the compute stream).
    pub fn copy_stream(&self, rank: usize) -> Result<&Arc<CudaStream>> {
        self.check_rank(rank)?;
        Ok(&self.copy_streams[rank])
    }

    /// Waits for every rank's streams.
    pub fn synchronize(&self) -> Result<()> {
        for s in self.streams.iter().chain(&self.copy_streams) {
            s.synchronize()?;
        }
        Ok(())
    }

    /// `after` waits for the work enqueued so far on `before` (streams of any ranks: an event
    /// recorded on one and waited on by the other, `cuStreamWaitEvent`).
    pub fn order(&self, before: &CudaStream, after: &CudaStream) -> Result<()> {
        after.wait(&mark(before)?)?;
        Ok(())
    }

    /// An event on each rank's compute stream, in rank order, recorded now: each marks the work
    /// enqueued there so far, for other streams to wait on (`cuStreamWaitEvent`).
    pub fn compute_events(&self) -> Result<Vec<CudaEvent>> {
        self.streams.iter().map(|s| mark(s)).collect()
    }

    fn comms(&self) -> Result<&[Comm]> {
        self.comms
            .as_deref()
            .ok_or_else(|| group_err("NCCL is not initialised (DeviceGroup::init_nccl)"))
    }

    /// Runs `kind` on every rank's communicator, `send[r]` to `recv[r]`, in one NCCL group,
    /// once the buffers are checked: one of each per rank, each whole (`recv` for an all-gather,
    /// `send` for a reduce-scatter) `world` parts.
    fn collective<T, S, R>(
        &self,
        kind: Collective,
        send: &[S],
        recv: &mut [R],
        call: impl Fn(&Comm, &S, &mut R) -> NcclResult,
    ) -> Result<()>
    where
        T: NcclType,
        S: DevicePtr<T>,
        R: DevicePtrMut<T>,
    {
        let comms = self.comms()?;
        let send_lens: Vec<usize> = send.iter().map(|s| s.len()).collect();
        let recv_lens: Vec<usize> = recv.iter().map(|r| r.len()).collect();
        let (what, op, whole, part) = match kind {
            Collective::AllGather => ("all-gather", "ncclAllGather", &recv_lens, &send_lens),
            Collective::ReduceScatter => (
                "reduce-scatter",
                "ncclReduceScatter",
                &send_lens,
                &recv_lens,
            ),
        };
        let world = self.world();
        if whole.len() != world || part.len() != world {
            return Err(group_err(format!(
                "{what}: {} and {} buffers for {world} ranks",
                whole.len(),
                part.len()
            )));
        }
        if let Some((w, p)) = whole.iter().zip(part).find(|(w, p)| **w != **p * world) {
            return Err(group_err(format!(
                "{what}: {w} elements are not {world} parts of {p}"
            )));
        }
        nccl_group(|| {
            for ((c, s), r) in comms.iter().zip(send).zip(recv.iter_mut()) {
                call(c, s, r).map_err(nccl_err(op))?;
            }
            Ok(())
        })
    }

    /// NCCL all-gather on every rank's compute stream: `recv[r]` gets every rank's `send` in rank
    /// order (`recv[r].len() == world · send[r].len()`), in one NCCL group.
    pub fn all_gather<T, S, R>(&self, send: &[S], recv: &mut [R]) -> Result<()>
    where
        T: NcclType,
        S: DevicePtr<T>,
        R: DevicePtrMut<T>,
    {
        self.collective(Collective::AllGather, send, recv, Comm::all_gather)
    }

    /// NCCL reduce-scatter (sum) on every rank's compute stream: `recv[r]` gets the sum over the
    /// ranks of their `send`'s `r`-th part (`send[r].len() == world · recv[r].len()`), in one
    /// NCCL group.
    pub fn reduce_scatter<T, S, R>(&self, send: &[S], recv: &mut [R]) -> Result<()>
    where
        T: NcclType,
        S: DevicePtr<T>,
        R: DevicePtrMut<T>,
    {
        self.collective(Collective::ReduceScatter, send, recv, |c, s, r| {
            c.reduce_scatter(s, r, &ReduceOp::Sum)
        })
    }

    /// `len` zeroed elements on every rank ([`Symmetric`]).
    pub fn alloc_symmetric<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        len: usize,
    ) -> Result<Symmetric<T>> {
        let slices = self
            .streams
            .iter()
            .map(|s| s.alloc_zeros::<T>(len).map_err(RuntimeError::from))
            .collect::<Result<Vec<_>>>()?;
        Ok(Symmetric { slices, len })
    }

    /// Writes `value` to the 32-bit word at `addr` (on any rank with peer access, usually the
    /// stream's own) when `stream`'s earlier work is done, after a memory barrier that makes
    /// that work's writes visible first (CUDA Driver API `cuStreamWriteValue32`,
    /// `CU_STREAM_WRITE_VALUE_DEFAULT`).
    pub fn signal(&self, stream: &CudaStream, addr: u64, value: u32) -> Result<()> {
        let flags = sys::CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT as u32;
        let op = (sys::cuStreamWriteValue32_v2 as StreamValueOp, flags);
        stream_value(stream, addr, value, op, "cuStreamWriteValue32")
    }

    /// Makes `stream` wait until the 32-bit word at `addr` is at least `value`
    /// (`cuStreamWaitValue32`, `CU_STREAM_WAIT_VALUE_GEQ`).
    pub fn wait_value(&self, stream: &CudaStream, addr: u64, value: u32) -> Result<()> {
        let flags = sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32;
        let op = (sys::cuStreamWaitValue32_v2 as StreamValueOp, flags);
        stream_value(stream, addr, value, op, "cuStreamWaitValue32")
    }

    /// Copies `bytes` from `src` on rank `src_rank` to `dst` on rank `dst_rank` on `stream` by
    /// copy engine (`cuMemcpyPeerAsync`).
    pub fn copy(
        &self,
        stream: &CudaStream,
        (dst_rank, dst): (usize, u64),
        (src_rank, src): (usize, u64),
        bytes: usize,
    ) -> Result<()> {
        self.check_rank(dst_rank)?;
        self.check_rank(src_rank)?;
        stream.context().bind_to_thread()?;
        let (dc, sc) = (
            self.devices[dst_rank].context().cu_ctx(),
            self.devices[src_rank].context().cu_ctx(),
        );
        // SAFETY: both ranges are device memory of their ranks (the caller's symmetric buffers,
        // checked by `Symmetric::range`), ordered on `stream` by the caller.
        unsafe { sys::cuMemcpyPeerAsync(dst, dc, src, sc, bytes, stream.cu_stream()) }
            .result()
            .map_err(driver("cuMemcpyPeerAsync"))?;
        Ok(())
    }
}

/// An event (no timing) recorded on `stream` now: the work enqueued there so far.
fn mark(stream: &CudaStream) -> Result<CudaEvent> {
    Ok(stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))?)
}

/// Runs `calls` between `ncclGroupStart` and `ncclGroupEnd`: one thread drives every device, so
/// its collectives must be grouped (NCCL user guide, "Using multiple NCCL communicators
/// concurrently" / "Group Calls").
fn nccl_group(calls: impl FnOnce() -> Result<()>) -> Result<()> {
    cudarc::nccl::group_start().map_err(nccl_err("ncclGroupStart"))?;
    let done = calls();
    let end = cudarc::nccl::group_end().map_err(nccl_err("ncclGroupEnd"));
    done.and(end.map(|_| ()))
}

/// Enables `a`'s access to `b`'s memory: `cuCtxEnablePeerAccess` in `a`'s context (an access
/// already enabled is fine) for `cuMemAlloc` memory, and `cuMemPoolSetAccess` on `b`'s default
/// pool for stream-ordered allocations.
fn enable_peer_access(a: &Device, b: &Device) -> Result<()> {
    let mut can = 0i32;
    let (ca, cb) = (a.context(), b.context());
    // SAFETY: plain queries and a context switch on live contexts.
    unsafe { sys::cuDeviceCanAccessPeer(&mut can, ca.cu_device(), cb.cu_device()) }
        .result()
        .map_err(driver("cuDeviceCanAccessPeer"))?;
    if can == 0 {
        return Err(RuntimeError::PeerAccess {
            from: a.ordinal(),
            to: b.ordinal(),
        });
    }
    ca.bind_to_thread()?;
    // SAFETY: `cb` is a live context of another device; flags must be 0.
    match unsafe { sys::cuCtxEnablePeerAccess(cb.cu_ctx(), 0) } {
        sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {
            Ok(())
        }
        e => Err(driver("cuCtxEnablePeerAccess")(result::DriverError(e))),
    }?;
    // Stream-ordered allocations (cudarc allocates with `cuMemAllocAsync`) come from the
    // device's default memory pool, which peer access does not open: each pool grants its
    // peers access itself (CUDA Driver API `cuMemPoolSetAccess`).
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `pool` outlives the call; `cb`'s device is live.
    unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, cb.cu_device()) }
        .result()
        .map_err(driver("cuDeviceGetDefaultMemPool"))?;
    let access = sys::CUmemAccessDesc {
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: ca.cu_device(),
        },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: one descriptor, alive across the call; `pool` is `b`'s default pool.
    unsafe { sys::cuMemPoolSetAccess(pool, &access, 1) }
        .result()
        .map_err(driver("cuMemPoolSetAccess"))?;
    Ok(())
}

/// One allocation of `len` elements on every rank of a [`DeviceGroup`]: rank `r`'s part is
/// [`Symmetric::slice`]`(r)`, and its address ([`Symmetric::addr`]) is valid on every rank of
/// the group (peer access).
#[derive(Debug)]
pub struct Symmetric<T> {
    slices: Vec<CudaSlice<T>>,
    len: usize,
}

impl<T: DeviceRepr> Symmetric<T> {
    /// Elements per rank.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the parts are empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Rank `rank`'s part.
    pub fn slice(&self, rank: usize) -> Result<&CudaSlice<T>> {
        self.slices.get(rank).ok_or_else(|| {
            group_err(format!(
                "rank {rank} of a symmetric buffer of {} ranks",
                self.slices.len()
            ))
        })
    }

    /// Rank `rank`'s part, mutably.
    pub fn slice_mut(&mut self, rank: usize) -> Result<&mut CudaSlice<T>> {
        let ranks = self.slices.len();
        self.slices.get_mut(rank).ok_or_else(|| {
            group_err(format!(
                "rank {rank} of a symmetric buffer of {ranks} ranks"
            ))
        })
    }

    /// The device address of element `at` of rank `rank`'s part.
    pub fn addr(&self, rank: usize, at: usize) -> Result<u64> {
        let s = self.slice(rank)?;
        if at > self.len {
            return Err(group_err(format!("element {at} of a part of {}", self.len)));
        }
        let (base, _record) = s.device_ptr(s.stream());
        Ok(base + (at * std::mem::size_of::<T>()) as u64)
    }

    /// The device address of elements `at..at + n` of rank `rank`'s part and its length in bytes,
    /// refused when the range passes the part's end.
    pub fn range(&self, rank: usize, at: usize, n: usize) -> Result<(u64, usize)> {
        match at.checked_add(n) {
            Some(end) if end <= self.len => {
                Ok((self.addr(rank, at)?, n * std::mem::size_of::<T>()))
            }
            _ => Err(group_err(format!(
                "elements {at}..{at}+{n} of a part of {}",
                self.len
            ))),
        }
    }
}

impl<T: DeviceRepr + Element> Symmetric<T> {
    /// Elements `at..` of rank `owner`'s part described as a `shape` tensor read or written by
    /// a kernel on rank `on` (its own part, or a peer's through peer access): what
    /// [`super::TensorMut::foreign`] takes for a kernel that writes them (the caller then keeps the
    /// buffer alive and orders the accesses, as its safety contract says).
    pub fn tensor_desc(
        &self,
        owner: usize,
        on: usize,
        at: usize,
        shape: Vec<usize>,
    ) -> Result<TensorDesc> {
        self.check_on(on)?;
        let n: usize = shape.iter().product();
        let (addr, _) = self.range(owner, at, n)?;
        Ok(TensorDesc {
            dtype: T::DTYPE,
            shape,
            addr,
            device: self.slices[on].stream().context().ordinal(),
        })
    }

    /// Elements `at..` of rank `owner`'s part as a `shape` tensor read by a kernel on rank
    /// `on` (its own part, or a peer's through peer access). The launch orders nothing for it
    /// (no cudarc events): the caller orders it, with streams, events or flags.
    pub fn tensor_ref(
        &self,
        owner: usize,
        on: usize,
        at: usize,
        shape: impl Into<Vec<usize>>,
    ) -> Result<TensorRef<'_>> {
        let desc = self.tensor_desc(owner, on, at, shape.into())?;
        // SAFETY: the range lies in `owner`'s live allocation (checked by `range`), readable
        // from `on` by peer access; the borrow keeps the allocation alive for the launch.
        Ok(unsafe { TensorRef::foreign(desc) })
    }

    fn check_on(&self, on: usize) -> Result<()> {
        match on < self.slices.len() {
            true => Ok(()),
            false => Err(group_err(format!(
                "rank {on} of a symmetric buffer of {} ranks",
                self.slices.len()
            ))),
        }
    }
}

/// 32-bit flags on every rank of a [`DeviceGroup`], `len` words per rank, zeroed: the words
/// [`DeviceGroup::signal`] writes and [`DeviceGroup::wait_value`] and kernels
/// ([`crate::kernel::KernelBuilder::wait_flag`]) wait on. Allocated with `cuMemAlloc`, not from
/// the stream-ordered pool cudarc allocates from: `cuStreamWriteValue32` on a word of pool
/// memory returned `CUDA_ERROR_INVALID_VALUE` on H200 (driver 580, 2026-11-28), and the CUDA
/// documentation promises stream memory operations on `cuMemAlloc` memory.
pub struct Flags {
    /// Rank `r`'s words: its device's context and their address.
    words: Vec<(Arc<cudarc::driver::CudaContext>, u64)>,
    len: usize,
}

impl std::fmt::Debug for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flags")
            .field("ranks", &self.words.len())
            .field("len", &self.len)
            .finish()
    }
}

impl DeviceGroup {
    /// `len` zeroed flags on every rank ([`Flags`]).
    pub fn alloc_flags(&self, len: usize) -> Result<Flags> {
        let mut flags = Flags {
            words: Vec::new(),
            len,
        };
        let bytes = len.max(1) * 4;
        for d in &self.devices {
            let ctx = d.context().clone();
            ctx.bind_to_thread()?;
            let mut addr: sys::CUdeviceptr = 0;
            // SAFETY: `addr` outlives the call; the context is current.
            unsafe { sys::cuMemAlloc_v2(&mut addr, bytes) }
                .result()
                .map_err(driver("cuMemAlloc"))?;
            // Pushed before the memset, so `Drop` frees it whatever follows.
            flags.words.push((ctx, addr));
            // SAFETY: `addr` holds `bytes / 4` words of this context's memory.
            unsafe { sys::cuMemsetD32_v2(addr, 0, bytes / 4) }
                .result()
                .map_err(driver("cuMemsetD32"))?;
        }
        Ok(flags)
    }
}

impl Flags {
    /// Words per rank.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no words.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of rank `rank`'s word `i`.
    pub fn addr(&self, rank: usize, i: usize) -> Result<u64> {
        match self.words.get(rank) {
            Some((_, base)) if i < self.len => Ok(base + 4 * i as u64),
            _ => Err(group_err(format!(
                "flag {i} of rank {rank} ({} ranks of {} flags)",
                self.words.len(),
                self.len
            ))),
        }
    }

    /// Rank `rank`'s words as a `[len]` u32 tensor read by a kernel on that rank. The launch
    /// orders nothing for it: flags are ordered by their values.
    pub fn tensor_ref(&self, rank: usize) -> Result<TensorRef<'_>> {
        self.tensor_ref_on(rank, rank)
    }

    /// Rank `rank`'s words as a `[len]` u32 tensor read by a kernel on rank `on` (its own, or a
    /// peer's through peer access: a flag its peer's stream raises where the peer works).
    pub fn tensor_ref_on(&self, rank: usize, on: usize) -> Result<TensorRef<'_>> {
        let addr = self.addr(rank, 0)?;
        let Some((ctx, _)) = self.words.get(on) else {
            return Err(group_err(format!(
                "flags read on rank {on} of {}",
                self.words.len()
            )));
        };
        let desc = TensorDesc {
            dtype: ptx_isa::ScalarType::U32,
            shape: vec![self.len],
            addr,
            device: ctx.ordinal(),
        };
        // SAFETY: `len` words of live device memory of rank `rank`, readable from `on` by peer
        // access (the group enables it between every pair); the borrow keeps them alive for
        // the launch.
        Ok(unsafe { TensorRef::foreign(desc) })
    }
}

impl Drop for Flags {
    fn drop(&mut self) {
        for (ctx, addr) in &self.words {
            // Work that may still read the flags is waited for first; errors cannot be
            // returned from a drop and leave the memory to the context's teardown.
            if ctx.bind_to_thread().is_ok() && ctx.synchronize().is_ok() {
                // SAFETY: `addr` came from `cuMemAlloc` in this context and is freed once.
                let _ = unsafe { sys::cuMemFree_v2(*addr) };
            }
        }
    }
}

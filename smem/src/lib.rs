//! Shared memory for ptxkit kernels, host side: where every buffer goes, how tensor-core operand
//! tiles are laid out and swizzled, the descriptors that point the tensor cores at them, and the
//! mbarrier bookkeeping of a multi-stage pipeline: offsets, constants and straight-line
//! [`alu::AluProgram`]s, and ([`emit`]) their PTX forms on a ptx-isa kernel builder.
//!
//! ```
//! use smem::desc::idesc::{InstrDesc, MmaKindTc};
//! use smem::mbarrier::PipelineState;
//! use smem::pipeline::TileSpec;
//! use smem::pool::SmemPool;
//! use smem::tile::{wgmma_tile, TileShape};
//! use ptx_isa::{ScalarType, Target};
//! use smem::{Major, SwizzleMode};
//!
//! // A Hopper GEMM mainloop: 128x64 A and 256x64 B bf16 tiles, K-major, 4 stages.
//! let a = wgmma_tile(ScalarType::Bf16, TileShape { mn: 128, k: 64 }, Major::K)?;
//! let b = wgmma_tile(ScalarType::Bf16, TileShape { mn: 256, k: 64 }, Major::K)?;
//! assert_eq!(a.swizzle(), SwizzleMode::B128); // 64 bf16 = 128 bytes of K per row
//! assert_eq!(a.tma_swizzle(), 3); // CU_TENSOR_MAP_SWIZZLE_128B
//!
//! let mut pool = SmemPool::new(Target::Sm90a);
//! let pipe = pool.pipeline("main", 4, &[TileSpec::of("A", &a), TileSpec::of("B", &b)], 1, 2)?;
//! assert_eq!(pool.base_align(), 1024);
//! assert!(pool.total_bytes() <= u64::from(smem::max_smem_optin(Target::Sm90a)));
//!
//! // The wgmma descriptor of A's second K slice (k = 16) in stage 0.
//! let base = pipe.tile(0, 0).map_or(0, |r| r.offset);
//! let desc = a.sm90_desc(base, 0, 16)?;
//! assert_eq!(desc.encode()?, 0x4000_0040_0001_0002); // start 32 >> 4, LBO 1, SBO 64, 128B
//!
//! // Or as a constant plus a run-time address, for a register holding the smem address.
//! let program = desc.address_program()?;
//! assert_eq!(program.eval(0x2020), desc.with_start(0x2020).encode()?);
//!
//! // The consumer's view of the ring: stage and parity to wait on.
//! let mut consumer = PipelineState::consumer(pipe.stages())?;
//! for _ in 0..4 { consumer.advance(); }
//! assert_eq!((consumer.index(), consumer.phase()), (0, 1));
//!
//! // A tcgen05.mma instruction descriptor: bf16 x bf16 -> f32, 128 x 256.
//! let idesc = InstrDesc::new(MmaKindTc::F16, ScalarType::Bf16, ScalarType::Bf16, ScalarType::F32, 128, 256);
//! assert_eq!(idesc.encode()?, 0x0840_0490);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod alu;
pub mod arch;
pub mod desc;
pub mod emit;
pub mod major;
pub mod mbarrier;
pub mod pipeline;
pub mod pool;
pub mod swizzle;
pub mod tile;

pub use arch::max_smem_optin;
pub use layouts::Swizzle;
pub use major::Major;
pub use swizzle::SwizzleMode;

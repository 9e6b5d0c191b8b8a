//! The variants, one module each, and the list the registry reads.

mod bulk_cluster;
pub(crate) mod common;
mod copy_fragment;
mod copy_ldmatrix;
mod copy_scalar;
mod copy_stmatrix_frag;
pub(crate) mod copy_vector;
mod copy_view;
mod cp_async;
mod elementwise;
mod fill_cast;
mod tcgen05_cp;
mod tcgen05_ldst;
mod tcgen05_mma;
mod tma;
mod wgmma;

pub use copy_vector::vector_width;
pub use tcgen05_cp::{
    canonical_layout as tcgen05_cp_layout, canonical_offset as tcgen05_cp_offset,
};
pub use tcgen05_ldst::atom_for as tcgen05_atom_for;
pub use tcgen05_mma::instr_desc as tcgen05_instr_desc;

use super::registry::Variant;

/// Every variant.
pub(crate) const ALL: &[Variant] = &[
    copy_vector::VARIANT,
    copy_scalar::VARIANT,
    copy_fragment::VARIANT,
    copy_ldmatrix::LDMATRIX,
    copy_ldmatrix::STMATRIX,
    copy_stmatrix_frag::VARIANT,
    copy_stmatrix_frag::LOAD_VARIANT,
    copy_view::VARIANT,
    cp_async::VARIANT,
    tma::LOAD,
    tma::MULTICAST,
    tma::STORE,
    tma::REDUCE,
    bulk_cluster::VARIANT,
    tcgen05_cp::VARIANT,
    tcgen05_ldst::VARIANT,
    wgmma::VARIANT,
    tcgen05_mma::VARIANT,
    fill_cast::FILL_REGISTERS,
    fill_cast::FILL_MEMORY,
    fill_cast::CAST_REGISTERS,
    elementwise::VARIANT,
];

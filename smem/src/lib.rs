//! smem

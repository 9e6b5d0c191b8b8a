//! ptx-isa

//! ptxkit

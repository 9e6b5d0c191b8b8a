//! GPU targets and how much shared memory one CTA may use on each.

use std::fmt;

/// A GPU target, by streaming-multiprocessor version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    /// A100 (compute capability 8.0).
    Sm80,
    /// GA10x consumer Ampere (8.6).
    Sm86,
    /// Jetson Orin (8.7).
    Sm87,
    /// Ada (8.9).
    Sm89,
    /// Hopper (9.0; `sm_90a` for wgmma).
    Sm90,
    /// Blackwell datacenter (10.0; `sm_100a` for tcgen05).
    Sm100,
    /// Blackwell consumer (12.0).
    Sm120,
}

impl Arch {
    /// The most dynamic shared memory one CTA can opt into
    /// (`cudaDevAttrMaxSharedMemoryPerBlockOptin`, CUDA Programming Guide, "Technical
    /// Specifications per Compute Capability"): 227 KB on sm_90/sm_100, 163 KB on sm_80/sm_87,
    /// 99 KB on sm_86/sm_89/sm_120. The sm_90 value was measured here on an H200
    /// (232448 bytes; the SM has 233472 of which 1024 are reserved per block).
    pub const fn max_smem_optin(self) -> u32 {
        match self {
            Arch::Sm80 | Arch::Sm87 => 163 * 1024,
            Arch::Sm86 | Arch::Sm89 | Arch::Sm120 => 99 * 1024,
            Arch::Sm90 | Arch::Sm100 => 227 * 1024,
        }
    }

    /// The target name without the `a` suffix (`sm_90`).
    pub const fn name(self) -> &'static str {
        match self {
            Arch::Sm80 => "sm_80",
            Arch::Sm86 => "sm_86",
            Arch::Sm87 => "sm_87",
            Arch::Sm89 => "sm_89",
            Arch::Sm90 => "sm_90",
            Arch::Sm100 => "sm_100",
            Arch::Sm120 => "sm_120",
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_in_limits_in_bytes() {
        assert_eq!(Arch::Sm90.max_smem_optin(), 232_448);
        assert_eq!(Arch::Sm100.max_smem_optin(), 232_448);
        assert_eq!(Arch::Sm80.max_smem_optin(), 166_912);
        assert_eq!(Arch::Sm89.max_smem_optin(), 101_376);
        assert_eq!(Arch::Sm120.max_smem_optin(), 101_376);
    }
}

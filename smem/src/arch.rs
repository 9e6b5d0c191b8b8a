//! How much shared memory one CTA may use on each target.

use ptx_isa::Target;

/// The most dynamic shared memory one CTA can opt into on `target`
/// (`cudaDevAttrMaxSharedMemoryPerBlockOptin`, CUDA Programming Guide, "Technical
/// Specifications per Compute Capability"): 227 KB on sm_90/sm_100, 163 KB on sm_80, 99 KB on
/// sm_86/sm_89/sm_120. The sm_90 value was measured here on an H200 (232448 bytes; the SM has
/// 233472 of which 1024 are reserved per block). The match names every target, so a new one
/// must say its limit.
pub const fn max_smem_optin(target: Target) -> u32 {
    match target {
        Target::Sm80 => 163 * 1024,
        Target::Sm86 | Target::Sm89 | Target::Sm120 | Target::Sm120a => 99 * 1024,
        Target::Sm90 | Target::Sm90a | Target::Sm100 | Target::Sm100a => 227 * 1024,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_in_limits_in_bytes() {
        assert_eq!(max_smem_optin(Target::Sm90a), 232_448);
        assert_eq!(max_smem_optin(Target::Sm100a), 232_448);
        assert_eq!(max_smem_optin(Target::Sm80), 166_912);
        assert_eq!(max_smem_optin(Target::Sm89), 101_376);
        assert_eq!(max_smem_optin(Target::Sm120), 101_376);
    }
}

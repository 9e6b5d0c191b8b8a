//! A warp's `mma.sync.m16n8k16` (f16 inputs, f32 accumulators) on register fragments made from
//! 8-bit floats in shared memory: the `ldmatrix` of four 8x8 matrices of byte pairs, plain or
//! transposed (PTX ISA 9.7.14.5.15), their e4m3 values converted to f16 in registers
//! (`cvt.rn.f16x2.e4m3x2`, 9.7.9.21: exact, e4m3's values are all f16 values), and the MMA
//! that accumulates in place (9.7.14.5.14). An FP8 KV cache's tiles feed the tensor cores this
//! way with no 16-bit copy in shared memory (`library::decode`).
//!
//! Which element each register holds is the `mma.m16n8k16` fragments'
//! ([`layouts::fragment::mma`]): thread `t` is `groupID = t / 4`, `threadID_in_group = t % 4`.
//! An `ldmatrix` of byte pairs gives thread `t` of each 8x8 matrix the pair at row `t / 4` and
//! pair columns `2 (t % 4)` and the next: bytes `4 (t % 4) .. 4 (t % 4) + 4` of a 16-byte row.
//! Those four bytes are B's `b0 b1` and `b2 b3` for a k16 step of 16 bytes when the step's K is
//! taken in the order `4 tig + {0, 1}` → k `2 tig + {0, 1}` and `4 tig + {2, 3}` → k
//! `2 tig + 8 + {0, 1}` (a permutation of K the other operand must share:
//! [`e4m3_to_f16`]). Transposed (`.trans`), thread `t` gets rows `2 (t % 4)` and the next of
//! pair column `t / 4`: [`e4m3_transposed_to_f16`] splits them into the even and odd byte
//! columns, each B's `b0 b1` (or `b2 b3`) over those two rows as K.

use ptx_isa::builder::{F8Kind, MatrixCount, MmaKind};
use ptx_isa::spaces::Shared;
use ptx_isa::{Addr, Reg, RegRef, ScalarType, ty};

use crate::kernel::{KernelBuilder, Result};

/// `ldmatrix.sync.aligned.m8n8.x4{.trans}.shared.b16` into four fresh registers: lane `t`
/// gives, in `addr`, the address of row `t % 8` of matrix `t / 8` (16 bytes each).
pub fn ldmatrix_x4(
    k: &mut KernelBuilder,
    addr: Reg<ty::U32>,
    trans: bool,
) -> Result<[Reg<ty::B32>; 4]> {
    let d = [k.reg(), k.reg(), k.reg(), k.reg()];
    k.isa()
        .ldmatrix(MatrixCount::X4, trans, &d, Addr::<Shared>::reg32(addr))?;
    Ok(d)
}

/// Four e4m3 values in `word` (byte 0 the lowest) as two f16 pairs: bytes 0 and 1, then bytes 2
/// and 3 (each pair's first byte in the low half). With the K order of the module's
/// documentation these are B's `b0 b1` and `b2 b3` of a plain `ldmatrix` row, or A's `a0 a1`
/// and `a4 a5`.
pub fn e4m3_to_f16(k: &mut KernelBuilder, word: Reg<ty::B32>) -> Result<[Reg<ty::F16x2>; 2]> {
    let halves = [k.reg::<ty::B16>(), k.reg::<ty::B16>()];
    k.isa().mov_unpack(&halves, word)?;
    let out = [k.reg::<ty::F16x2>(), k.reg::<ty::F16x2>()];
    for (&d, &h) in out.iter().zip(&halves) {
        k.isa().cvt_unpack_f8x2(F8Kind::E4m3, d, h, false)?;
    }
    Ok(out)
}

/// What a transposed `ldmatrix` of byte pairs gives a thread, `(r0 c0, r0 c1, r1 c0, r1 c1)`
/// (rows `r0 = 2 (t % 4)` and `r1 = r0 + 1` of the stored matrix, byte columns `c0 = 2 (t / 4)`
/// and `c1 = c0 + 1`), as two f16 pairs down the rows: column `c0` (`r0 c0`, `r1 c0`) and column
/// `c1` (`prmt` selector `0x3120`, PTX ISA 9.7.9.7, then [`e4m3_to_f16`]). For a tile of rows
/// `K` and byte columns `N` these are B's `b0 b1` (or `b2 b3`) of two n8 blocks: the even
/// columns and the odd ones.
pub fn e4m3_transposed_to_f16(
    k: &mut KernelBuilder,
    word: Reg<ty::B32>,
) -> Result<[Reg<ty::F16x2>; 2]> {
    let by_column = k.reg::<ty::B32>();
    k.isa().prmt(by_column, word, 0u32, 0x3120u32)?;
    e4m3_to_f16(k, by_column)
}

/// `acc += a·b`: one `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` with the
/// accumulator's four registers as C and D; A's four and B's two 32-bit registers hold f16
/// pairs (f16x2 registers, or the words of a 16-bit tile as loaded).
pub fn mma_f16(
    k: &mut KernelBuilder,
    acc: &[Reg<ty::F32>],
    a: [RegRef; 4],
    b: [RegRef; 2],
) -> Result<()> {
    let acc: Vec<RegRef> = acc.iter().map(|r| r.as_ref()).collect();
    let kind = MmaKind::F16F32 {
        ab: ScalarType::F16,
    };
    k.isa().mma_sync(kind, &acc, &a, &b, &acc)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptx_isa::Target;

    /// An FP8 tile's B operand: an `ldmatrix` (plain and transposed), its bytes to f16 pairs
    /// (the transposed ones permuted first) and an MMA on them, as the PTX the module promises.
    #[test]
    fn e4m3_fragments_feed_an_mma() {
        let mut k = KernelBuilder::new("frag", Target::Sm90a);
        let [t] = k.thread_id([32]).unwrap();
        let addr = k.eval(t * 16u32).unwrap();
        let rows = ldmatrix_x4(&mut k, addr, false).unwrap();
        let cols = ldmatrix_x4(&mut k, addr, true).unwrap();
        let [b0, b1] = e4m3_to_f16(&mut k, rows[0]).unwrap();
        let [even, odd] = e4m3_transposed_to_f16(&mut k, cols[0]).unwrap();
        let a = [even, odd, b0, b1].map(|r| r.as_ref());
        let acc: Vec<Reg<ty::F32>> = k.regs(4);
        for &r in &acc {
            k.mov(r, 0.0f32).unwrap();
        }
        mma_f16(&mut k, &acc, a, [b0.as_ref(), b1.as_ref()]).unwrap();
        let ptx = k.finish().unwrap().ptx().to_string();
        assert!(ptx.contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
        assert!(ptx.contains("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
        assert_eq!(ptx.matches("cvt.rn.f16x2.e4m3x2").count(), 4);
        // One byte permute: selector 0x3120 (printed in decimal), its second source 0.
        assert_eq!(ptx.matches("prmt.b32").count(), 1);
        assert!(ptx.contains(", 0, 12576;"), "{ptx}");
        assert!(ptx.contains("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
    }
}

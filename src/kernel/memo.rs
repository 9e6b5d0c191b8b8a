//! Memoised analyses of layouts: what a lowering computes from a fragment or tile layout alone
//! (its thread modes, its reduction groups, whether it is a wgmma operand's slabs) is the same
//! every time the layout comes back, and a kernel asks for the same few layouts thousands of
//! times (every mask, reduction and wgmma of an attention kernel). Each analysis keeps a small
//! per-thread table of the layouts it has seen.

use std::cell::RefCell;
use std::thread::LocalKey;

/// Entries one table keeps; past it the table starts again (a kernel uses a handful).
const ENTRIES: usize = 64;

/// The value of `compute` for `key`, from `table` when it has seen `key` before.
pub(crate) fn memoized<K: PartialEq + Clone, V: Clone>(
    table: &'static LocalKey<RefCell<Vec<(K, V)>>>,
    key: &K,
    compute: impl FnOnce() -> V,
) -> V {
    if let Some(v) = table.with(|t| {
        t.borrow()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }) {
        return v;
    }
    let v = compute();
    table.with(|t| {
        let mut t = t.borrow_mut();
        if t.len() >= ENTRIES {
            t.clear();
        }
        t.push((key.clone(), v.clone()));
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static SQUARES: RefCell<Vec<(u32, u64)>> = const { RefCell::new(Vec::new()) };
    }

    #[test]
    fn a_value_is_computed_once_per_key() {
        let mut calls = 0;
        for _ in 0..3 {
            assert_eq!(
                memoized(&SQUARES, &7, || {
                    calls += 1;
                    49
                }),
                49
            );
        }
        assert_eq!(calls, 1);
        // More keys than the table keeps: still right.
        for k in 0..(ENTRIES as u32 * 2) {
            assert_eq!(
                memoized(&SQUARES, &k, || u64::from(k * k)),
                u64::from(k * k)
            );
        }
    }
}

//! Bit sets kept as slices of 64-bit words, one bit an index (a flow's
//! outstanding, acknowledged and received packets; a partition's own
//! ports).

/// Whether bit `i` is set.
#[inline]
pub fn bit(v: &[u64], i: u32) -> bool {
    v[(i / 64) as usize] >> (i % 64) & 1 == 1
}

/// Sets bit `i`.
#[inline]
pub fn set_bit(v: &mut [u64], i: u32) {
    v[(i / 64) as usize] |= 1 << (i % 64);
}

/// Clears bit `i`.
#[inline]
pub fn clear_bit(v: &mut [u64], i: u32) {
    v[(i / 64) as usize] &= !(1 << (i % 64));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each index owns one bit, across word boundaries; setting or
    /// clearing one leaves the others.
    #[test]
    fn bits_set_and_clear_one_index_each() {
        let mut v = vec![0u64; 3];
        for i in [0, 63, 64, 130] {
            set_bit(&mut v, i);
        }
        assert_eq!(v, [1 | 1 << 63, 1, 1 << 2]);
        assert!((0..192).all(|i| bit(&v, i) == [0, 63, 64, 130].contains(&i)));
        clear_bit(&mut v, 63);
        assert_eq!(v, [1, 1, 1 << 2]);
        assert!(!bit(&v, 63) && bit(&v, 0) && bit(&v, 64));
    }
}

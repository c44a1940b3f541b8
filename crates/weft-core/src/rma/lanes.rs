//! Lane arithmetic on 8-byte words (SWAR): a word holds 8 / `size` elements of `size` bytes
//! (its lanes), and one operation on the word computes every lane as the element-wise
//! operation would. `atomic` uses it to update the aligned middle of an accumulate of small
//! elements with one 64-bit atomic per word instead of one per element.
#![forbid(unsafe_code)]

/// The top bit of every lane of `size` bytes (1, 2, 4 or 8).
#[inline(always)]
pub const fn high_bits(size: usize) -> u64 {
    match size {
        1 => 0x8080_8080_8080_8080,
        2 => 0x8000_8000_8000_8000,
        4 => 0x8000_0000_8000_0000,
        _ => 0x8000_0000_0000_0000,
    }
}

/// Lane-wise wrapping addition of the lanes of `size` bytes of `a` and `b`: no carry crosses
/// from one lane into the next. The low bits of each lane are added with their top bits
/// cleared (the sum fits in the lane, so no carry leaves it), then each top bit is the sum
/// bit of the two top bits and the carry into it: `a ^ b` there, flipped by that carry.
#[inline(always)]
pub const fn add(a: u64, b: u64, size: usize) -> u64 {
    let h = high_bits(size);
    ((a & !h).wrapping_add(b & !h)) ^ ((a ^ b) & h)
}

/// A small deterministic generator (xorshift64*) for the tests here and in `atomic`: the
/// same cases on every run.
#[cfg(test)]
pub(super) struct Rng(pub(super) u64);

#[cfg(test)]
impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words biased towards lane edges (0, 1, the top bit, all ones) where carries and
    /// overflow live.
    fn word(rng: &mut Rng, size: usize) -> u64 {
        let bits = 8 * size;
        let lane_mask = if size == 8 { u64::MAX } else { (1 << bits) - 1 };
        let mut w = 0u64;
        for lane in 0..8 / size {
            let v = match rng.next() % 6 {
                0 => 0,
                1 => 1,
                2 => lane_mask,
                3 => 1 << (bits - 1),
                4 => (1 << (bits - 1)) - 1,
                _ => rng.next(),
            } & lane_mask;
            w |= v << (lane * bits);
        }
        w
    }

    /// The reference: each lane added on its own, as an integer of its width.
    fn scalar_add(a: u64, b: u64, size: usize) -> u64 {
        if size == 8 {
            return a.wrapping_add(b);
        }
        let bits = 8 * size;
        let m = (1u64 << bits) - 1;
        (0..8 / size).fold(0, |w, lane| {
            let s = lane * bits;
            w | ((((a >> s) & m) + ((b >> s) & m)) & m) << s
        })
    }

    #[test]
    fn lane_sums_match_the_scalar_reference() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for size in [1, 2, 4, 8] {
            for _ in 0..100_000 {
                let (a, b) = (word(&mut rng, size), word(&mut rng, size));
                assert_eq!(
                    add(a, b, size),
                    scalar_add(a, b, size),
                    "size {size}: {a:#018x} + {b:#018x}"
                );
            }
        }
    }

    #[test]
    fn every_lane_wraps_on_its_own() {
        // All ones + 1 in every lane: each lane wraps to 0 and carries nothing to the next.
        assert_eq!(add(u64::MAX, 0x0101_0101_0101_0101, 1), 0);
        assert_eq!(add(u64::MAX, 0x0001_0001_0001_0001, 2), 0);
        assert_eq!(add(u64::MAX, 0x0000_0001_0000_0001, 4), 0);
        // Signed overflow: 0x7f + 1 = 0x80 in every byte, the neighbours untouched.
        assert_eq!(
            add(0x7f00_7f00_0000_007f, 0x0100_0100_0000_0001, 1),
            0x8000_8000_0000_0080
        );
        // One lane overflowing beside lanes that do not.
        assert_eq!(
            add(0x0000_0001_ffff_ffff, 0x0000_0001_0000_0002, 4),
            0x0000_0002_0000_0001
        );
    }
}

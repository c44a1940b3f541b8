//! `Small`: a short list of values kept on the stack.

/// Values a `Small` holds without allocating: one per peer in communicators and
/// neighbourhoods up to this size.
const INLINE: usize = 8;

/// `n` values, on the stack up to `INLINE` of them, else on the heap: per-peer arguments of a
/// collective (the parts of a `v` buffer, the byte sizes of a reduce-scatter) without an
/// allocation per call in the common case.
#[derive(Clone)]
pub(crate) struct Small<T> {
    len: usize,
    inline: [T; INLINE],
    heap: Vec<T>,
}

impl<T: Copy> Small<T> {
    /// `f(0)`, ..., `f(n - 1)`, stopping at the first error; `fill` pads the unused slots.
    pub(crate) fn try_from_fn<E>(
        n: usize,
        fill: T,
        mut f: impl FnMut(usize) -> Result<T, E>,
    ) -> Result<Small<T>, E> {
        let mut out = Small {
            len: n,
            inline: [fill; INLINE],
            heap: Vec::new(),
        };
        if n <= INLINE {
            for (i, slot) in out.inline[..n].iter_mut().enumerate() {
                *slot = f(i)?;
            }
        } else {
            out.heap = (0..n).map(f).collect::<Result<_, E>>()?;
        }
        Ok(out)
    }

    /// `n` times `v`.
    pub(crate) fn filled(n: usize, v: T) -> Small<T> {
        Small {
            len: n,
            inline: [v; INLINE],
            heap: if n > INLINE { vec![v; n] } else { Vec::new() },
        }
    }
}

impl<T> std::ops::Deref for Small<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        if self.len <= INLINE {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_heap_lengths() {
        for n in [0, 1, INLINE, INLINE + 1, 3 * INLINE] {
            let s = Small::try_from_fn(n, 0usize, |i| Ok::<_, ()>(10 * i)).unwrap();
            assert_eq!(
                *s,
                (0..n).map(|i| 10 * i).collect::<Vec<_>>()[..],
                "n = {n}"
            );
            assert_eq!(s.heap.capacity() > 0, n > INLINE, "n = {n}");
            assert_eq!(*Small::filled(n, 7u8), vec![7u8; n][..], "n = {n}");
        }
    }

    #[test]
    fn stops_at_the_first_error() {
        for n in [4, 2 * INLINE] {
            let mut calls = 0;
            let r = Small::try_from_fn(n, 0, |i| {
                calls += 1;
                if i == 2 {
                    Err(i)
                } else {
                    Ok(i)
                }
            });
            assert_eq!(r.err(), Some(2));
            assert_eq!(calls, 3);
        }
    }
}

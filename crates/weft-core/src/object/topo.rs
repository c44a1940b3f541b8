//! Process topologies: Cartesian grids, graphs and distributed graphs attached to a
//! communicator, and the pure computations on them.
#![forbid(unsafe_code)]

use crate::error::{fail, ErrorClass, MpiResult};

/// A communicator's virtual topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    Cart {
        dims: Vec<i32>,
        periods: Vec<bool>,
    },
    Graph {
        /// `index[i]`: the number of edges of nodes 0..=i (cumulative).
        index: Vec<i32>,
        edges: Vec<i32>,
    },
    DistGraph {
        sources: Vec<i32>,
        source_weights: Vec<i32>,
        destinations: Vec<i32>,
        dest_weights: Vec<i32>,
        weighted: bool,
    },
}

/// Number of processes a Cartesian grid of `dims` holds (checked).
pub fn cart_size(dims: &[i32], func: &str) -> MpiResult<u32> {
    let mut n: u64 = 1;
    for (i, &d) in dims.iter().enumerate() {
        if d <= 0 {
            return fail(
                ErrorClass::Dims,
                format!("{func}(dims[{i}]={d}): dimensions must be positive"),
            );
        }
        n = n.saturating_mul(d as u64);
    }
    u32::try_from(n).map_err(|_| {
        crate::error::MpiError::new(
            ErrorClass::Dims,
            format!("{func}(dims): the grid is too large"),
        )
    })
}

impl Topology {
    /// Coordinates of `rank` in a Cartesian grid (row-major: the last dimension varies fastest).
    pub fn cart_coords(dims: &[i32], rank: u32) -> Vec<i32> {
        let mut coords = vec![0; dims.len()];
        let mut r = rank as i64;
        for i in (0..dims.len()).rev() {
            coords[i] = (r % dims[i] as i64) as i32;
            r /= dims[i] as i64;
        }
        coords
    }

    /// The rank at `coords` (periodic dimensions wrap; others must be in range).
    pub fn cart_rank(dims: &[i32], periods: &[bool], coords: &[i32], func: &str) -> MpiResult<u32> {
        let mut rank: i64 = 0;
        for i in 0..dims.len() {
            let mut c = coords[i] as i64;
            let d = dims[i] as i64;
            if periods[i] {
                c = c.rem_euclid(d);
            } else if c < 0 || c >= d {
                return fail(
                    ErrorClass::Arg,
                    format!(
                        "{func}(coords[{i}]={}): out of range 0..{} in a non-periodic dimension",
                        coords[i], d
                    ),
                );
            }
            rank = rank * d + c;
        }
        Ok(rank as u32)
    }

    /// `MPI_Cart_shift`: (source, dest) for a shift by `disp` along `direction`; `None` is
    /// off the edge of a non-periodic dimension. Only the coordinate along `direction`
    /// changes, so the rank moves by its stride (row-major: the product of the later
    /// dimensions); no coordinate vector is built (the neighbourhood collectives ask on every
    /// call).
    pub fn cart_shift(
        dims: &[i32],
        periods: &[bool],
        rank: u32,
        direction: usize,
        disp: i32,
    ) -> (Option<u32>, Option<u32>) {
        let stride: i64 = dims[direction + 1..].iter().map(|&d| d as i64).product();
        let d = dims[direction] as i64;
        let c = (rank as i64 / stride) % d;
        let at = |delta: i64| -> Option<u32> {
            let v = c + delta;
            let v = if periods[direction] {
                v.rem_euclid(d)
            } else if v < 0 || v >= d {
                return None;
            } else {
                v
            };
            Some((rank as i64 + (v - c) * stride) as u32)
        };
        (at(-(disp as i64)), at(disp as i64))
    }
}

/// The edges of node `rank` in a graph given by cumulative `index` and `edges`.
pub fn graph_neighbors<'a>(index: &[i32], edges: &'a [i32], rank: u32) -> &'a [i32] {
    let r = rank as usize;
    let start = if r == 0 { 0 } else { index[r - 1] as usize };
    let end = index[r] as usize;
    &edges[start..end]
}

/// Check a graph description for `MPI_Graph_create`.
pub fn check_graph(nnodes: i32, index: &[i32], edges: &[i32], func: &str) -> MpiResult<()> {
    let mut prev = 0;
    for (i, &x) in index.iter().enumerate() {
        if x < prev {
            return fail(
                ErrorClass::Arg,
                format!("{func}(index[{i}]={x}): index must not decrease"),
            );
        }
        prev = x;
    }
    if edges.len() != prev as usize {
        return fail(ErrorClass::Arg, format!("{func}(edges): length mismatch"));
    }
    for (i, &e) in edges.iter().enumerate() {
        if e < 0 || e >= nnodes {
            return fail(
                ErrorClass::Arg,
                format!("{func}(edges[{i}]={e}): not a node of the graph (nnodes {nnodes})"),
            );
        }
    }
    Ok(())
}

/// `MPI_Dims_create`: fill the zero entries of `dims` so that the product is `nnodes` and
/// the filled dimensions are as close to each other as possible (MPICH's choice, see
/// `balanced_factors`), in non-increasing order.
pub fn dims_create(nnodes: i32, dims: &mut [i32], func: &str) -> MpiResult<()> {
    if nnodes < 0 {
        return fail(
            ErrorClass::Arg,
            format!("{func}(nnodes={nnodes}): negative"),
        );
    }
    let mut fixed: i64 = 1;
    let mut free = 0;
    for (i, &d) in dims.iter().enumerate() {
        if d < 0 {
            return fail(
                ErrorClass::Dims,
                format!("{func}(dims[{i}]={d}): negative dimension"),
            );
        }
        if d > 0 {
            fixed *= d as i64;
        } else {
            free += 1;
        }
    }
    if nnodes == 0 {
        return fail(
            ErrorClass::Dims,
            format!("{func}(nnodes=0): no processes to arrange"),
        );
    }
    if nnodes as i64 % fixed != 0 {
        return fail(
            ErrorClass::Dims,
            format!(
                "{func}(dims): nnodes {nnodes} is not a multiple of the product {fixed} of the given dimensions"
            ),
        );
    }
    if free == 0 {
        if fixed != nnodes as i64 {
            return fail(
                ErrorClass::Dims,
                format!("{func}(dims): the product {fixed} of the given dimensions is not nnodes {nnodes}"),
            );
        }
        return Ok(());
    }
    let rest = (nnodes as i64 / fixed) as u64;
    let filled = balanced_factors(rest, free);
    let mut it = filled.into_iter();
    for d in dims.iter_mut() {
        if *d == 0 {
            *d = it.next().expect("one factor per free dimension") as i32;
        }
    }
    Ok(())
}

/// Split `n` into `k` factors, largest first, by MPICH's rule. While more than one factor
/// is left to fill, a prime factor above the square root of what remains gets a factor of
/// its own (whatever the split, the factor holding it is the largest); the remainder is split
/// by `balanced_split`. (MPICH squares the prime in a C `int`, so it skips this step for
/// primes above 46340; we do not.)
fn balanced_factors(n: u64, k: usize) -> Vec<u64> {
    let mut primes = prime_factors(n);
    let mut factors = Vec::with_capacity(k);
    let mut rest = n;
    while factors.len() + 1 < k {
        match primes.last() {
            Some(&p) if p * p > rest => {
                factors.push(p);
                rest /= p;
                primes.pop();
            }
            _ => break,
        }
    }
    let free = k - factors.len();
    factors.extend(balanced_split(rest, primes, free));
    factors
}

/// Split `n`, whose prime factors (increasing, with multiplicity) are `primes`, into `k`
/// factors, largest first (after Träff and Lübbe, EuroMPI'15): the smallest difference
/// between the largest and the smallest factor; among those, the largest smallest factor,
/// then the largest second smallest, and so on.
fn balanced_split(n: u64, primes: Vec<u64>, k: usize) -> Vec<u64> {
    if k >= primes.len() {
        return one_prime_each(primes, k);
    }
    let mut distinct_primes = primes.clone();
    distinct_primes.dedup();
    let mut search = BalanceSearch {
        divisors: divisors(&primes),
        distinct_primes,
        smallest_first: Vec::with_capacity(k),
        best: None,
    };
    search.extend(n, k);
    let best = search
        .best
        .expect("the search always finds one factorisation: all ones but the largest");
    best.factors.into_iter().rev().collect()
}

/// The prime factors of `n` with multiplicity, in increasing order (trial division).
fn prime_factors(mut n: u64) -> Vec<u64> {
    let mut primes = Vec::new();
    let mut p = 2;
    while p * p <= n {
        while n.is_multiple_of(p) {
            primes.push(p);
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        primes.push(n);
    }
    primes
}

/// One prime per factor, largest first, padded with 1s: the best split when there are at
/// least as many factors as primes. Its largest factor is the largest prime, the least any
/// split can have; every other split has more 1s, so a smaller smallest factor (when there are
/// as many factors as primes) or a loss in the tie-break.
fn one_prime_each(mut primes: Vec<u64>, k: usize) -> Vec<u64> {
    primes.reverse();
    primes.resize(k, 1);
    primes
}

/// All divisors of the number whose prime factors (increasing, with multiplicity) are
/// `primes`, in increasing order.
fn divisors(primes: &[u64]) -> Vec<u64> {
    let mut divisors = vec![1];
    let mut i = 0;
    while i < primes.len() {
        let p = primes[i];
        let exponent = primes[i..].iter().take_while(|&&q| q == p).count();
        let lower = divisors.len();
        let mut power = 1;
        for _ in 0..exponent {
            power *= p;
            for j in 0..lower {
                divisors.push(divisors[j] * power);
            }
        }
        i += exponent;
    }
    divisors.sort_unstable();
    divisors
}

/// The best factorisation found so far, smallest factor first.
struct Balanced {
    spread: u64,
    factors: Vec<u64>,
}

/// Depth-first search over non-decreasing factorisations, choosing the smallest factor
/// first. Each factor is tried from its largest possible value down, so the search meets
/// factorisations in the rule's tie-break order: only a strictly smaller spread replaces the
/// best, and a branch is cut as soon as it cannot reach one.
struct BalanceSearch {
    /// Divisors of the whole number, increasing: the candidates for every factor.
    divisors: Vec<u64>,
    /// The whole number's prime factors, each once, increasing.
    distinct_primes: Vec<u64>,
    /// The factors chosen so far, smallest first.
    smallest_first: Vec<u64>,
    best: Option<Balanced>,
}

impl BalanceSearch {
    /// Choose the remaining `slots` factors, whose product is `rest`.
    fn extend(&mut self, rest: u64, slots: usize) {
        if slots == 1 {
            self.offer(rest);
            return;
        }
        // Factors are chosen in non-decreasing order.
        let floor = self.smallest_first.last().copied().unwrap_or(1);
        // Every later factor is at least this one, so its `slots`-th power must fit in rest.
        let fitting = self
            .divisors
            .partition_point(|&d| power(d, slots).is_some_and(|p| p <= rest));
        for i in (0..fitting).rev() {
            let d = self.divisors[i];
            if d < floor {
                break;
            }
            if !rest.is_multiple_of(d) {
                continue;
            }
            let smallest = self.smallest_first.first().copied().unwrap_or(d);
            // Every factor left, this one included, must stay within the limit: so must the
            // largest prime factor of `rest`, and the product of the later ones. Smaller
            // candidates only make this harder (a larger product left; for the smallest
            // factor, a lower limit), so the first that fails ends the loop.
            if let Some(limit) = self.limit_to_improve(smallest) {
                if self.largest_prime_factor(rest) > limit
                    || power(limit, slots - 1).is_some_and(|p| p < rest / d)
                {
                    break;
                }
            }
            self.smallest_first.push(d);
            self.extend(rest / d, slots - 1);
            self.smallest_first.pop();
        }
    }

    /// The largest value every factor must stay within for a smaller spread than the best
    /// so far, given the smallest factor; `None` before any factorisation is found.
    fn limit_to_improve(&self, smallest: u64) -> Option<u64> {
        let best = self.best.as_ref()?;
        Some(smallest + best.spread - 1)
    }

    /// The largest prime factor of `rest` (a divisor of the whole number); 1 for 1.
    fn largest_prime_factor(&self, rest: u64) -> u64 {
        let mut primes = self.distinct_primes.iter().rev();
        primes
            .find(|&&p| rest.is_multiple_of(p))
            .copied()
            .unwrap_or(1)
    }

    /// A complete factorisation whose largest factor is `largest`: `extend` only gets here
    /// when it is below the limit, so it beats the best so far.
    fn offer(&mut self, largest: u64) {
        let smallest = self.smallest_first.first().copied().unwrap_or(largest);
        let spread = largest - smallest;
        if let Some(best) = &self.best {
            debug_assert!(spread < best.spread);
        }
        let mut factors = self.smallest_first.clone();
        factors.push(largest);
        self.best = Some(Balanced { spread, factors });
    }
}

/// `base^exponent`, or `None` when it overflows.
fn power(base: u64, exponent: usize) -> Option<u64> {
    base.checked_pow(u32::try_from(exponent).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(n: i32, mut d: Vec<i32>) -> Vec<i32> {
        dims_create(n, &mut d, "t").unwrap();
        d
    }

    fn filled(n: i32, k: usize) -> Vec<i32> {
        dims(n, vec![0; k])
    }

    /// Splits worked out by hand where the rule matters: the smallest largest factor, a pure
    /// round robin or the smallest overall spread would each answer differently.
    #[test]
    fn dims_create_follows_mpich_rule() {
        // 2^4 3^2 5 7: 21x16x15 and 20x18x14 both spread 6; the larger smallest factor wins.
        assert_eq!(filled(5040, 3), [21, 16, 15]);
        // 13 2^4 3^3: 13x12x6x6 and 13x9x8x6 spread 7 with the same smallest factor; the
        // larger second smallest wins.
        assert_eq!(filled(5616, 4), [13, 9, 8, 6]);
        // A round robin of the primes would give 10x5x2.
        assert_eq!(filled(100, 3), [5, 5, 4]);
        // 541 is below the square root of 541 2^3 3^2 23: no factor of its own, the others
        // are as large as possible next to it.
        assert_eq!(filled(895_896, 4), [541, 23, 9, 8]);
        // 1009 is above the square root of 1009 x 1008: its own factor, then 1008 is split
        // alone (12x12x7, spread 5), not 14x9x8 (the smallest spread overall).
        assert_eq!(filled(1_017_072, 4), [1009, 12, 12, 7]);
        // 2^4 3^2 7^2 13: no factor within 13 can hold a 7 with anything else, so the
        // largest factor is exactly the prime 13 and the smallest two are 7.
        assert_eq!(filled(91_728, 5), [13, 12, 12, 7, 7]);
        // Only 2s: exponents 4, 3, 3.
        assert_eq!(filled(1024, 3), [16, 8, 8]);
        assert_eq!(filled(30, 5), [5, 3, 2, 1, 1]);
        assert_eq!(filled(1_000_000_000, 3), [1000, 1000, 1000]);
        assert_eq!(filled(1 << 30, 30), vec![2; 30]);
        assert_eq!(filled(i32::MAX, 3), [i32::MAX, 1, 1]);
        // Given entries stay; 1260 = 2^2 3^2 5 7 fills the others (spread 5).
        assert_eq!(dims(5040, vec![0, 4, 0, 0]), [14, 4, 10, 9]);
    }

    #[test]
    fn dims_create_errors() {
        let err = |n: i32, mut d: Vec<i32>| dims_create(n, &mut d, "t").unwrap_err();
        let e = err(-1, vec![0]);
        assert_eq!(
            (e.class(), e.message.contains("t(nnodes=-1)")),
            (ErrorClass::Arg as i32, true)
        );
        let e = err(6, vec![0, -2]);
        assert_eq!(
            (e.class(), e.message.contains("t(dims[1]=-2)")),
            (ErrorClass::Dims as i32, true)
        );
        assert_eq!(err(0, vec![0]).class(), ErrorClass::Dims as i32);
        assert_eq!(err(7, vec![0, 3, 0]).class(), ErrorClass::Dims as i32);
        assert_eq!(err(12, vec![2, 3]).class(), ErrorClass::Dims as i32);
    }

    /// xorshift64*: small, deterministic, no dependency.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
        }
    }

    /// A process count: small, a product of small primes, or anything up to `i32::MAX`.
    fn random_count(rng: &mut Rng) -> u64 {
        match rng.below(3) {
            0 => 1 + rng.below(3000),
            1 => {
                let mut n = 1;
                while n < 50_000_000 {
                    n *= [2, 2, 3, 5, 7, 11, 13][rng.below(7) as usize];
                }
                n
            }
            _ => 1 + rng.below(i32::MAX as u64),
        }
    }

    /// The rule, naively: the same own factors for large primes, then every non-increasing
    /// split of the remainder compared by spread, then by the smallest factor, the second
    /// smallest, ... (larger is better).
    fn reference_split(n: u64, k: usize) -> Vec<u64> {
        let mut own = Vec::new();
        let mut rest = n;
        while own.len() + 1 < k {
            match (2..=rest)
                .rev()
                .find(|&p| rest % p == 0 && (2..p).all(|q| p % q != 0))
            {
                Some(p) if p * p > rest => {
                    own.push(p);
                    rest /= p;
                }
                _ => break,
            }
        }
        let best = all_splits(rest, k - own.len(), rest)
            .into_iter()
            .min_by_key(|s| {
                let smallest_first: Vec<u64> = s.iter().rev().copied().collect();
                (s[0] - s[s.len() - 1], std::cmp::Reverse(smallest_first))
            })
            .expect("n x 1 x ... x 1 is always a split");
        own.extend(best);
        own
    }

    /// Every split of `n` into `k` factors, non-increasing, none above `max`.
    fn all_splits(n: u64, k: usize, max: u64) -> Vec<Vec<u64>> {
        if k == 1 {
            return if n <= max { vec![vec![n]] } else { vec![] };
        }
        let mut splits = Vec::new();
        for d in (1..=max.min(n)).filter(|d| n % d == 0) {
            for mut rest in all_splits(n / d, k - 1, d) {
                rest.insert(0, d);
                splits.push(rest);
            }
        }
        splits
    }

    #[test]
    fn dims_create_matches_reference_for_small_counts() {
        for n in 1..=1500 {
            for k in 1..=6 {
                let out: Vec<u64> = filled(n as i32, k).iter().map(|&d| d as u64).collect();
                assert_eq!(out, reference_split(n, k), "{n} in {k} dimensions");
            }
        }
    }

    /// Random counts and grids with some entries given: the product is the count, given
    /// entries stay, filled ones are non-increasing; for small remainders the filled entries
    /// are the naive reference's split.
    #[test]
    fn dims_create_random() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let ndims = 1 + rng.below(10) as usize;
            let given: Vec<i32> = (0..ndims)
                .map(|_| {
                    if rng.below(4) == 0 {
                        1 + rng.below(6) as i32
                    } else {
                        0
                    }
                })
                .collect();
            let given_product: u64 = given
                .iter()
                .filter(|&&d| d > 0)
                .map(|&d| d as u64)
                .product();
            // With every entry given, the count must be their product.
            let rest = if given.contains(&0) {
                random_count(&mut rng).min(i32::MAX as u64 / given_product)
            } else {
                1
            };
            let nnodes = (rest * given_product) as i32;
            let out = dims(nnodes, given.clone());
            assert_eq!(
                out.iter().map(|&d| d as u64).product::<u64>(),
                nnodes as u64
            );
            let free: Vec<u64> = given
                .iter()
                .zip(&out)
                .filter(|(&g, _)| g == 0)
                .map(|(_, &d)| d as u64)
                .collect();
            for (&g, &d) in given.iter().zip(&out) {
                assert!(
                    g == 0 || g == d,
                    "{nnodes} {given:?}: given entry changed: {out:?}"
                );
            }
            assert!(
                free.windows(2).all(|w| w[0] >= w[1]),
                "{nnodes} {given:?}: {out:?}"
            );
            if rest <= 3000 && !free.is_empty() {
                assert_eq!(
                    free,
                    reference_split(rest, free.len()),
                    "{nnodes} {given:?}"
                );
            }
        }
    }

    #[test]
    fn dims_create_balances() {
        assert_eq!(dims(6, vec![0, 0]), vec![3, 2]);
        assert!(dims_create(7, &mut [0, 3, 0], "t").is_err());
        assert_eq!(dims(6, vec![0, 3, 0]), vec![2, 3, 1]);
        assert_eq!(dims(24, vec![0, 0, 0]), vec![4, 3, 2]);
        assert_eq!(dims(16, vec![0, 0, 0, 0]), vec![2, 2, 2, 2]);
        assert_eq!(dims(1, vec![0, 0]), vec![1, 1]);
        assert_eq!(dims(12, vec![0, 0]), vec![4, 3]);
        assert_eq!(dims(64, vec![0, 0, 0]), vec![4, 4, 4]);
        assert_eq!(dims(13, vec![0, 0]), vec![13, 1]);
        assert_eq!(dims(4, vec![2, 0]), vec![2, 2]);
    }

    #[test]
    fn cart_coords_rank_shift() {
        let d = [2, 3];
        let p = [false, true];
        assert_eq!(Topology::cart_coords(&d, 4), vec![1, 1]);
        assert_eq!(Topology::cart_rank(&d, &p, &[1, 4], "t").unwrap(), 4);
        assert!(Topology::cart_rank(&d, &p, &[2, 0], "t").is_err());
        assert_eq!(Topology::cart_shift(&d, &p, 0, 0, 1), (None, Some(3)));
        assert_eq!(Topology::cart_shift(&d, &p, 0, 1, 1), (Some(2), Some(1)));
        // Against coordinates, every rank, direction and shift of a 2x3x4 grid.
        let (d, p) = ([2, 3, 4], [true, false, true]);
        for rank in 0..24 {
            for dir in 0..3 {
                for disp in -5..=5 {
                    let at = |delta: i32| {
                        let mut c = Topology::cart_coords(&d, rank);
                        c[dir] += delta;
                        Topology::cart_rank(&d, &p, &c, "t").ok()
                    };
                    let want = (at(-disp), at(disp));
                    assert_eq!(Topology::cart_shift(&d, &p, rank, dir, disp), want);
                }
            }
        }
    }

    #[test]
    fn graph_edges() {
        let index = [2, 3, 4];
        let edges = [1, 2, 0, 0];
        assert_eq!(graph_neighbors(&index, &edges, 0), &[1, 2]);
        assert_eq!(graph_neighbors(&index, &edges, 2), &[0]);
        assert!(check_graph(3, &index, &edges, "t").is_ok());
        assert!(check_graph(2, &index, &edges, "t").is_err());
    }
}

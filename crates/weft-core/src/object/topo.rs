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
    /// off the edge of a non-periodic dimension.
    pub fn cart_shift(
        dims: &[i32],
        periods: &[bool],
        rank: u32,
        direction: usize,
        disp: i32,
    ) -> (Option<u32>, Option<u32>) {
        let coords = Topology::cart_coords(dims, rank);
        let at = |delta: i64| -> Option<u32> {
            let mut c = coords.clone();
            let d = dims[direction] as i64;
            let v = c[direction] as i64 + delta;
            if periods[direction] {
                c[direction] = v.rem_euclid(d) as i32;
            } else if v < 0 || v >= d {
                return None;
            } else {
                c[direction] = v as i32;
            }
            Topology::cart_rank(dims, periods, &c, "").ok()
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
/// the filled dimensions are as close to each other as possible, in non-increasing order.
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

/// Split `n` into `k` factors as equal as possible, largest first: exhaustively over the
/// divisors (small inputs: process counts), minimising the largest factor then the spread.
fn balanced_factors(n: u64, k: usize) -> Vec<u64> {
    fn best(n: u64, k: usize, max: u64) -> Option<Vec<u64>> {
        if k == 1 {
            return (n <= max).then(|| vec![n]);
        }
        let mut result: Option<Vec<u64>> = None;
        for d in (1..=max.min(n)).rev() {
            if n % d != 0 {
                continue;
            }
            // d is the largest factor: d^k must reach n.
            if d.checked_pow(k as u32).is_some_and(|p| p < n) {
                break;
            }
            if let Some(rest) = best(n / d, k - 1, d) {
                let mut cand = vec![d];
                cand.extend(rest);
                let key = |v: &Vec<u64>| (v[0], v[0] - v[v.len() - 1]);
                if result.as_ref().map_or(true, |r| key(&cand) < key(r)) {
                    result = Some(cand);
                }
            }
        }
        result
    }
    best(n, k, n).unwrap_or_else(|| {
        let mut v = vec![1; k];
        v[0] = n;
        v
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(n: i32, mut d: Vec<i32>) -> Vec<i32> {
        dims_create(n, &mut d, "t").unwrap();
        d
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

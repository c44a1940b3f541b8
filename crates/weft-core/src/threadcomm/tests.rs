//! Thread communicators driven by std threads: every collective of the rounds against the
//! values it must produce, many times back to back, and point-to-point matching.

use std::sync::Arc;

use super::ThreadComm;
use crate::datatype::Buf;
use crate::message::{SourceSel, TagSel};
use crate::op::{Elem, OpKind, Reduction, Scalar};

const N: u32 = 4;

/// The bytes of `v` as a `Buf`.
fn buf(v: &mut [i32]) -> Buf {
    // SAFETY: `v` outlives every use of the Buf in these tests (each operation is blocking).
    unsafe { Buf::new(v.as_mut_ptr() as usize, std::mem::size_of_val(v)) }
}

fn sum() -> Reduction {
    Reduction::of_elem(OpKind::Sum, Elem::Int(Scalar::I32), 4).unwrap()
}

/// Run `f(tc, rank)` on `N` threads inside one region.
fn region(tc: &Arc<ThreadComm>, f: impl Fn(&ThreadComm, u32) + Send + Sync + Copy + 'static) {
    let threads: Vec<_> = (0..N)
        .map(|_| {
            let tc = tc.clone();
            std::thread::spawn(move || {
                let rank = tc.start().unwrap();
                f(&tc, rank);
                tc.finish(rank).unwrap();
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
}

#[test]
fn collectives_give_the_right_values_back_to_back() {
    let tc = Arc::new(ThreadComm::new(N));
    region(&tc, |tc, r| {
        let ri = r as i32;
        for i in 0..300 {
            let root = (i % N as i32) as u32;
            let mut v = [ri + i];
            let mut out = [-1];
            tc.allreduce(r, Some(&buf(&mut v)), &buf(&mut out), &sum())
                .unwrap();
            assert_eq!(out[0], 6 + 4 * i);
            out[0] = -1;
            tc.reduce(r, Some(&buf(&mut v)), &buf(&mut out), &sum(), root)
                .unwrap();
            if r == root {
                assert_eq!(out[0], 6 + 4 * i);
            }
            tc.scan(r, Some(&buf(&mut v)), &buf(&mut out), &sum(), false)
                .unwrap();
            assert_eq!(out[0], (0..=ri).map(|k| k + i).sum::<i32>());
            out[0] = -7;
            tc.scan(r, Some(&buf(&mut v)), &buf(&mut out), &sum(), true)
                .unwrap();
            let ex = if r == 0 {
                -7
            } else {
                (0..ri).map(|k| k + i).sum()
            };
            assert_eq!(out[0], ex);
            let mut b = [if r == root { 100 + i } else { 0 }];
            tc.bcast(r, &buf(&mut b), root).unwrap();
            assert_eq!(b[0], 100 + i);
            let mut all = [0i32; N as usize];
            tc.allgather(r, Some(&buf(&mut v)), &buf(&mut all)).unwrap();
            assert_eq!(all, [i, 1 + i, 2 + i, 3 + i]);
            let mut g = [0i32; N as usize];
            tc.gather(r, Some(&buf(&mut v)), &buf(&mut g), root)
                .unwrap();
            if r == root {
                assert_eq!(g, [i, 1 + i, 2 + i, 3 + i]);
            }
            let mut src = [10 * i, 10 * i + 1, 10 * i + 2, 10 * i + 3];
            let mut one = [-1];
            tc.scatter(r, &buf(&mut src), Some(&buf(&mut one)), root)
                .unwrap();
            assert_eq!(one[0], 10 * i + ri);
            let mut s2 = [100 * ri, 100 * ri + 1, 100 * ri + 2, 100 * ri + 3];
            let mut r2 = [0i32; N as usize];
            tc.alltoall(r, Some(&buf(&mut s2)), &buf(&mut r2)).unwrap();
            assert_eq!(r2, [ri, 100 + ri, 200 + ri, 300 + ri]);
            tc.barrier(r).unwrap();
        }
    });
    // A second region starts from a clean state.
    region(&tc, |tc, r| {
        let mut v = [r as i32];
        let mut out = [0];
        tc.allreduce(r, Some(&buf(&mut v)), &buf(&mut out), &sum())
            .unwrap();
        assert_eq!(out[0], 6);
    });
}

#[test]
fn point_to_point_matches_in_order_with_any_source() {
    let tc = Arc::new(ThreadComm::new(N));
    region(&tc, |tc, r| {
        if r == 0 {
            let mut got = 0u32;
            for _ in 0..3 * 50 {
                let mut v = [0i32];
                let s = tc
                    .recv(0, SourceSel::Any, TagSel::Any, buf(&mut v))
                    .unwrap();
                assert_eq!(v[0] / 1000, s.source);
                got += 1;
            }
            assert_eq!(got, 150);
        } else {
            for k in 0..50 {
                let mut v = [r as i32 * 1000 + k];
                tc.send(r, 0, k, &buf(&mut v), k % 7 == 0).unwrap();
            }
        }
        // One sender's messages arrive in order, eager and single-copy alike.
        if r == 1 {
            for k in 0..20 {
                let mut big = vec![k; 8192];
                tc.send(1, 2, 5, &buf(&mut big), false).unwrap();
            }
        } else if r == 2 {
            for k in 0..20 {
                let mut big = vec![-1; 8192];
                tc.recv(2, SourceSel::Rank(1), TagSel::Tag(5), buf(&mut big))
                    .unwrap();
                assert!(big.iter().all(|&x| x == k));
            }
        }
    });
}

/// `MPI_Barrier`'s dissemination: at 1, 2, 8 (one round) and 9, 20 (two rounds) ranks, no
/// rank leaves a barrier before every rank wrote its step of the previous phase; a second
/// region starts from clean words.
#[test]
fn barrier_holds_every_rank_back_at_any_size() {
    use std::sync::atomic::{AtomicU32, Ordering};
    for n in [1u32, 2, 8, 9, 20] {
        let tc = Arc::new(ThreadComm::new(n));
        let steps: Arc<Vec<AtomicU32>> = Arc::new((0..n).map(|_| AtomicU32::new(0)).collect());
        for _region in 0..2 {
            let threads: Vec<_> = (0..n)
                .map(|_| {
                    let (tc, steps) = (tc.clone(), steps.clone());
                    std::thread::spawn(move || {
                        let r = tc.start().unwrap();
                        for _ in 0..50 {
                            let mine = steps[r as usize].fetch_add(1, Ordering::Relaxed) + 1;
                            tc.barrier(r).unwrap();
                            assert!(steps.iter().all(|s| s.load(Ordering::Relaxed) >= mine));
                            tc.barrier(r).unwrap();
                        }
                        tc.finish(r).unwrap();
                    })
                })
                .collect();
            threads.into_iter().for_each(|t| t.join().unwrap());
        }
    }
}

/// One sender's messages keep their order across its pair slot and the receiver's queue:
/// tag 1 (slot), tag 2 of 40 bytes (queued: over the slot's size), tag 1 (queued: the slot
/// is busy). A receive of tag 2 takes it past the slot message, then both tag-1 messages
/// come in order; a probe with wildcards finds a slot message before a queued one.
#[test]
fn pair_slot_and_queue_keep_the_order() {
    let tc = ThreadComm::new(2);
    let (a, b) = (tc.start().unwrap(), tc.start().unwrap());
    let mut m = [[0i32; 10]; 5];
    for (i, v) in m.iter_mut().enumerate() {
        v[0] = 100 + i as i32;
    }
    let [m0, m1, m2, m3, m4] = &mut m;
    tc.send(b, a, 1, &buf(&mut m0[..1]), false).unwrap();
    tc.send(b, a, 2, &buf(m1), false).unwrap();
    tc.send(b, a, 1, &buf(&mut m2[..1]), false).unwrap();
    let mut out = [0i32; 10];
    let s = tc
        .recv(a, SourceSel::Rank(b), TagSel::Tag(2), buf(&mut out))
        .unwrap();
    assert_eq!((out[0], s.tag, s.bytes), (101, 2, 40));
    for want in [100, 102] {
        let s = tc
            .recv(a, SourceSel::Rank(b), TagSel::Tag(1), buf(&mut out))
            .unwrap();
        assert_eq!((out[0], s.tag, s.bytes), (want, 1, 4));
    }
    // Slot free and nothing queued again: tag 5 takes the slot, tag 6 (4 bytes) is queued
    // behind it.
    tc.send(b, a, 5, &buf(&mut m3[..1]), false).unwrap();
    tc.send(b, a, 6, &buf(&mut m4[..1]), false).unwrap();
    let p = tc.probe(a, SourceSel::Any, TagSel::Any, true).unwrap();
    assert_eq!(p.map(|s| (s.source, s.tag)), Some((b as i32, 5)));
    for want in [103, 104] {
        let s = tc
            .recv(a, SourceSel::Any, TagSel::Any, buf(&mut out))
            .unwrap();
        assert_eq!((out[0], s.source), (want, b as i32));
    }
    assert!(!tc.has_posted(a));
}

/// A blocking receive that polls its slot and queue without its mailbox's lock still sees a
/// message that another thread's `try_progress` moved into its lists meanwhile (`moved`):
/// without that, some receive here waits forever (without `moved`: 1 hang in 3 runs of
/// 2000 messages, tried).
#[test]
fn a_waiting_receive_sees_what_another_thread_moved() {
    const M: i32 = 20_000;
    let tc = Arc::new(ThreadComm::new(2));
    let (a, b) = (tc.start().unwrap(), tc.start().unwrap());
    let receiver = {
        let tc = tc.clone();
        std::thread::spawn(move || {
            for i in 0..M {
                let mut v = [-1i32];
                tc.recv(a, SourceSel::Rank(b), TagSel::Tag(1), buf(&mut v))
                    .unwrap();
                assert_eq!(v[0], i);
            }
        })
    };
    for i in 0..M {
        let mut v = [i];
        tc.send(b, a, 1, &buf(&mut v), false).unwrap();
        // A thread other than `a`'s progresses `a`'s mailbox (as a request's poll does).
        tc.mailboxes[tc.own(a)].try_progress();
    }
    receiver.join().unwrap();
}

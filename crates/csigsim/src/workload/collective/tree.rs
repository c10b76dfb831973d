//! NCCL's tree algorithm (`algorithm = "tree"`).
//!
//! The tree is NCCL's binary tree over ranks `0 .. n`: a rank's lowest set
//! bit `b` gives its parent, `(r ^ b) | 2b`, or `r ^ b` when that is not a
//! rank, and its children `r - b/2` and `r + b/2` (the second halved until it
//! is a rank, none once it reaches zero); rank 0 is the root, with one child,
//! the highest power of two below `n`. Leaves and interior nodes alternate.
//!
//! All-reduce runs on NCCL's double binary tree: that tree, and a second one,
//! its mirror (`r -> n - 1 - r`) when `n` is even or its shift by one rank
//! (`r -> r + 1`) when `n` is odd, so that a rank that is interior in one tree
//! is a leaf in the other. Each tree carries half the buffer (NCCL duplicates
//! every channel, one copy per tree). In each tree the data is reduced up to
//! the root, each rank sending a slice once it has the slices of its
//! children, and broadcast back down, the root sending a slice once it has
//! reduced it; the two phases overlap, slice by slice.
//!
//! Broadcast and reduce run on one tree of the same shape with `root` in
//! rank 0's place (tree rank `t` is rank `(t + root) mod n`): NCCL itself
//! runs them on rings only, and the double tree's two roots are two ranks.
//!
//! Steps: a reduction takes one step per level, from the deepest up; a
//! broadcast one per level from the root down.

use super::{share, slices, slices_of_shares, CollectiveOp, Instance, Plan};
use crate::de::InputError;
use crate::workload::KeyErr;

/// A tree over the ranks `0 .. n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    pub root: u32,
    pub parent: Vec<Option<u32>>,
    /// Children in NCCL's order (the lower one first).
    pub children: Vec<Vec<u32>>,
    pub depth: Vec<u32>,
}

/// NCCL's binary tree: (parent, children) of rank `r` of `n`.
fn btree(n: u32, r: u32) -> (Option<u32>, Vec<u32>) {
    let mut bit = 1;
    while bit < n && bit & r == 0 {
        bit <<= 1;
    }
    if r == 0 {
        return (None, if n > 1 { vec![bit >> 1] } else { vec![] });
    }
    let up = (r ^ bit) | (bit << 1);
    let parent = if up >= n { r ^ bit } else { up };
    let mut low = bit >> 1;
    let mut children = Vec::new();
    if low > 0 {
        children.push(r - low);
        while low > 0 && r + low >= n {
            low >>= 1;
        }
        if low > 0 {
            children.push(r + low);
        }
    }
    (Some(parent), children)
}

impl Tree {
    /// The tree whose rank `map(t)` is rank `t` of NCCL's binary tree.
    fn mapped(n: u32, map: impl Fn(u32) -> u32) -> Tree {
        let mut parent = vec![None; n as usize];
        let mut children = vec![Vec::new(); n as usize];
        let mut root = 0;
        for t in 0..n {
            let (p, c) = btree(n, t);
            let r = map(t) as usize;
            parent[r] = p.map(&map);
            children[r] = c.into_iter().map(&map).collect();
            if p.is_none() {
                root = r as u32;
            }
        }
        let mut depth = vec![0; n as usize];
        for (r, d) in depth.iter_mut().enumerate() {
            let mut v = r;
            while let Some(p) = parent[v] {
                *d += 1;
                v = p as usize;
            }
        }
        Tree { root, parent, children, depth }
    }

    /// NCCL's binary tree with `root` in rank 0's place.
    pub fn rooted(n: u32, root: u32) -> Tree {
        Tree::mapped(n, |t| (t + root) % n)
    }

    /// NCCL's double binary tree.
    pub fn double(n: u32) -> [Tree; 2] {
        let second = if n.is_multiple_of(2) { Tree::mapped(n, |t| n - 1 - t) } else { Tree::mapped(n, |t| (t + 1) % n) };
        [Tree::rooted(n, 0), second]
    }

    fn height(&self) -> u32 {
        self.depth.iter().copied().max().unwrap_or(0)
    }
}

/// The trees of an operation and each one's part of the buffer.
fn trees(p: &Plan) -> Vec<(Tree, u64)> {
    let size = p.c.size.0;
    if p.c.op == CollectiveOp::AllReduce {
        Tree::double(p.n).into_iter().enumerate().map(|(i, t)| (t, share(size, 2, i as u64))).collect()
    } else {
        vec![(Tree::rooted(p.n, p.root), size)]
    }
}

/// Flows of one instance.
pub(super) fn flows(p: &Plan) -> u64 {
    let ch = p.c.channels as u64;
    let phases = if p.c.op == CollectiveOp::AllReduce { 2 } else { 1 };
    let slices: u64 = trees(p).iter().map(|(_, part)| slices_of_shares(*part, ch, p.c.chunk.0)).fold(0, u64::saturating_add);
    slices.saturating_mul(p.n as u64 - 1).saturating_mul(phases)
}

pub(super) fn expand(p: &Plan, inst: &mut Instance, err: &KeyErr) -> Result<(), InputError> {
    let c = p.c;
    let n = p.n as usize;
    let ch = c.channels as usize;
    let trees = trees(p);
    let height = trees.iter().map(|(t, _)| t.height()).max().unwrap_or(0);
    // Per tree and channel: the slices each rank sent to its parent (up) and received from it (down).
    let mut up = vec![vec![vec![Vec::new(); n]; ch]; trees.len()];
    let mut down = vec![vec![vec![Vec::new(); n]; ch]; trees.len()];
    let reduce = c.op != CollectiveOp::Broadcast;
    let broadcast = c.op != CollectiveOp::Reduce;
    if reduce {
        for level in (1..=height).rev() {
            inst.begin_step();
            for (ti, (tree, part)) in trees.iter().enumerate() {
                for (k, sent_up) in up[ti].iter_mut().enumerate() {
                    for v in (0..n).filter(|&v| tree.depth[v] == level) {
                        let parent = tree.parent[v].expect("below the root");
                        let mut queue = Vec::new();
                        for (j, bytes) in slices(share(*part, ch as u64, k as u64), c.chunk.0).enumerate() {
                            let data: Vec<u32> = tree.children[v].iter().map(|&x| sent_up[x as usize][j]).collect();
                            inst.slice(v as u32, parent, (ti * ch + k) as u32, bytes, &data, &mut queue, err)?;
                        }
                        sent_up[v] = queue;
                    }
                }
            }
        }
    }
    if broadcast {
        for level in 0..height {
            inst.begin_step();
            for (ti, (tree, part)) in trees.iter().enumerate() {
                for k in 0..ch {
                    for v in (0..n).filter(|&v| tree.depth[v] == level) {
                        for &x in &tree.children[v] {
                            let mut queue = Vec::new();
                            for (j, bytes) in slices(share(*part, ch as u64, k as u64), c.chunk.0).enumerate() {
                                // The root sends what it reduced (all-reduce) or its own data
                                // (broadcast); any other rank what it received.
                                let data: Vec<u32> = if v as u32 != tree.root {
                                    vec![down[ti][k][v][j]]
                                } else if reduce {
                                    tree.children[v].iter().map(|&y| up[ti][k][y as usize][j]).collect()
                                } else {
                                    Vec::new()
                                };
                                inst.slice(v as u32, x, (ti * ch + k) as u32, bytes, &data, &mut queue, err)?;
                            }
                            down[ti][k][x as usize] = queue;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two trees NCCL's trees.cc draws for 12 ranks (mirrored) and for
    /// 13 ranks (shifted).
    #[test]
    fn double_trees_are_nccls() {
        let [a, b] = Tree::double(12);
        let kids = |t: &Tree, r: usize| t.children[r].clone();
        assert_eq!((a.root, kids(&a, 0)), (0, vec![8]));
        assert_eq!(kids(&a, 8), [4, 10]);
        assert_eq!(kids(&a, 4), [2, 6]);
        assert_eq!(kids(&a, 10), [9, 11]);
        assert_eq!(kids(&a, 2), [1, 3]);
        assert!(kids(&a, 1).is_empty());
        assert_eq!((b.root, kids(&b, 11)), (11, vec![3]));
        assert_eq!(kids(&b, 3), [7, 1]);
        assert_eq!(kids(&b, 7), [9, 5]);
        assert_eq!(kids(&b, 1), [2, 0]);
        let [a, b] = Tree::double(13);
        assert_eq!(kids(&a, 8), [4, 12]);
        assert_eq!(kids(&a, 12), [10]);
        assert_eq!((b.root, kids(&b, 1)), (1, vec![9]));
        assert_eq!(kids(&b, 9), [5, 0]);
        assert_eq!(kids(&b, 0), [11]);
        assert_eq!(kids(&b, 11), [10, 12]);
    }

    /// Every rank is in each tree once, and with an even count every rank
    /// but the two roots has children in exactly one of the two trees.
    #[test]
    fn every_rank_is_interior_in_at_most_one_tree() {
        for n in 2..40 {
            let trees = Tree::double(n);
            for t in &trees {
                let edges = t.parent.iter().filter(|p| p.is_some()).count();
                assert_eq!(edges as u32, n - 1);
                let kids: usize = t.children.iter().map(|c| c.len()).sum();
                assert_eq!(kids as u32, n - 1);
                for (r, p) in t.parent.iter().enumerate() {
                    if let Some(p) = p {
                        assert!(t.children[*p as usize].contains(&(r as u32)));
                    }
                }
            }
            if n % 2 == 0 {
                for r in 0..n as usize {
                    let interior = trees.iter().filter(|t| !t.children[r].is_empty()).count();
                    assert_eq!(interior, 1, "n={n} rank {r}");
                }
            }
        }
    }
}

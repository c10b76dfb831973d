//! Typed ids: ports, flows, packets, nodes, hosts and switches are distinct
//! types, so one cannot be passed where another is meant. Each wraps the
//! index of its entity in the dense vector that holds it; vectors of
//! components are indexed by their id directly.

macro_rules! ids {
    ($( $(#[$doc:meta])* $Name:ident ),* $(,)?) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
            #[repr(transparent)]
            pub struct $Name(pub u32);

            impl $Name {
                /// The index into the vector that holds the entity.
                #[inline(always)]
                pub const fn ix(self) -> usize {
                    self.0 as usize
                }
            }

            impl std::fmt::Display for $Name {
                fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    self.0.fmt(f)
                }
            }
        )*
    };
}

ids! {
    /// One end of a link (a port of a host or a switch); both ends of a
    /// full-duplex link have their own.
    PortId,
    /// A flow (a queue pair), in scenario order.
    FlowId,
    /// A packet's slot in the packet arena (reused after delivery or drop).
    PktId,
    /// A node: hosts first (`0..hosts`), then switches.
    NodeId,
    /// A host, `0..hosts` (also its node id).
    HostId,
    /// A switch, `0..switches` (its node id is `hosts + switch`).
    SwitchId,
}

/// Vectors (and slices) of `$T` indexed by `$Id`.
macro_rules! index_by {
    ($Id:ty => $T:ty) => {
        impl std::ops::Index<$Id> for [$T] {
            type Output = $T;
            #[inline(always)]
            fn index(&self, i: $Id) -> &$T {
                &self[i.ix()]
            }
        }
        impl std::ops::IndexMut<$Id> for [$T] {
            #[inline(always)]
            fn index_mut(&mut self, i: $Id) -> &mut $T {
                &mut self[i.ix()]
            }
        }
        impl std::ops::Index<$Id> for Vec<$T> {
            type Output = $T;
            #[inline(always)]
            fn index(&self, i: $Id) -> &$T {
                &self[i.ix()]
            }
        }
        impl std::ops::IndexMut<$Id> for Vec<$T> {
            #[inline(always)]
            fn index_mut(&mut self, i: $Id) -> &mut $T {
                &mut self[i.ix()]
            }
        }
    };
}
pub(crate) use index_by;

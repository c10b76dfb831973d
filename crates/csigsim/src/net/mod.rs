//! The network: ports (one per end of each full-duplex link), switches with a
//! shared buffer, routing and the forwarding path.

pub mod packet;
pub mod routing;
pub mod switch;
pub mod topology;

use crate::monitor::PortMon;
use crate::sim::rng::Stream;
use std::collections::VecDeque;

/// One end of a full-duplex link. As an egress port it owns the data queue towards
/// its peer; as an ingress port it owns the PFC accounting of the bytes that
/// arrived through it and still sit in its switch's buffer.
#[derive(Debug)]
pub struct Port {
    /// Node index: hosts first (0..hosts), then switches.
    pub node: u32,
    /// The port at the other end of the link.
    pub peer: u32,
    pub rate_bps: u64,
    pub delay_ps: u64,
    /// The transmitter is busy until this time.
    pub busy_until: u64,
    /// A `TxDone` event for `busy_until` is in the queue.
    pub txdone_pending: bool,
    /// The data class is paused by the peer's PFC.
    pub paused: bool,
    /// The data queue. Control packets never wait here: they are committed
    /// to the wire as soon as they arrive (see `push_ctrl`).
    pub data: VecDeque<u32>,
    pub data_bytes: u64,
    /// Ingress accounting (switch ports, pfc mode): bytes admitted through this
    /// port outside headroom, and in headroom.
    pub in_bytes: u64,
    pub in_headroom: u64,
    /// This port has sent XOFF upstream and not yet XON.
    pub xoff_sent: bool,
    /// Wire bytes this port has sent in the whole run (INT's txBytes).
    pub tx_total: u64,
    /// When the peer last resumed this port's data class (ECP root detection).
    pub last_pause_end: Option<u64>,
    /// ECP: which flows occupy the data queue, and with how many bytes.
    pub occupancy: crate::signal::ecp::Occupancy,
    pub mon: PortMon,
}

impl Port {
    #[inline]
    pub fn queue_bytes(&self) -> u64 {
        self.data_bytes
    }
}

/// A switch's shared buffer and its per-switch randomness.
#[derive(Debug)]
pub struct Switch {
    pub name: String,
    pub tier: u8,
    pub dmodk_divisor: u32,
    pub first_port: u32,
    pub num_ports: u32,
    /// Shared pool after per-port reservations (and PFC headroom).
    pub shared_size: u64,
    pub shared_used: u64,
    /// Bytes of data in the buffer now, and the most ever.
    pub used: u64,
    pub max_used: u64,
    /// PFC headroom per ingress port.
    pub headroom: u64,
    pub hash_salt: u64,
    pub ecn_rng: Stream,
    pub spray_rng: Stream,
}

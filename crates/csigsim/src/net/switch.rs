//! The switch: output-queued, store-and-forward, one shared buffer.
//!
//! - Control packets (ACK, NACK, PAUSE, trimmed headers) use a strict-priority
//!   queue per egress port and are never dropped or paused.
//! - Data admission depends on the mode. `lossy` and `trim`: per-egress-port
//!   reservation plus the dynamic threshold alpha * (free shared buffer).
//!   `pfc`: per-ingress-port reservation, shared pool up to the XOFF threshold
//!   alpha * (free shared buffer), then headroom; crossing XOFF sends a PAUSE
//!   upstream, draining below XOFF - xon_delta (headroom empty) sends a RESUME.
//! - ECN (RED on the egress data queue, sampled on enqueue) marks ECT packets.
//! - Buffer is released when a packet starts transmission.

use crate::net::packet::{Advice, Packet, PacketKind, F_CE, F_ECT, F_TRIMMED, F_XOFF};
use crate::scenario::config::{EcnMode, SwitchMode};
use crate::signal::ecp;
use crate::sim::World;

impl World {
    pub(crate) fn switch_receive(&mut self, sw: u32, pkt: u32, in_port: u32) {
        let p = *self.pkts.get(pkt);
        if p.kind == PacketKind::Pause {
            self.pkts.free(pkt);
            self.stats.packets_delivered += 1;
            self.stats.bytes_delivered += p.wire as u64;
            self.set_paused(in_port, p.flags & F_XOFF != 0);
            return;
        }
        let out = self.choose_egress(sw, &p);
        self.enqueue(sw, out, pkt, in_port);
    }

    /// PFC: the peer asked this port to stop (or resume) sending data.
    pub(crate) fn set_paused(&mut self, port: u32, paused: bool) {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        if p.paused == paused {
            return;
        }
        p.paused = paused;
        if !paused {
            p.last_pause_end = Some(now);
        }
        p.mon.on_pause(now, paused, self.window_ps);
        if !paused {
            self.kick(port);
        }
    }

    fn choose_egress(&mut self, sw: u32, p: &Packet) -> u32 {
        let (cands, group) = self.routes.next_hops(sw, p.dst);
        let Some(group) = group else { return cands[0] };
        let s = &mut self.switches[sw as usize];
        let ports = &self.ports;
        let load = |q: u32| {
            let port = &ports[q as usize];
            crate::lb::Load { queue_bytes: port.queue_bytes(), busy_until: port.busy_until }
        };
        let (entropy, dst, salt, divisor, now) = (p.entropy, p.dst, s.hash_salt, s.dmodk_divisor, self.now);
        let ctx = crate::lb::Ctx { cands, entropy, dst, salt, divisor, now, rng: &mut s.spray_rng, load };
        crate::lb::choose(self.sc.switch.routing, ctx, group)
    }

    fn enqueue(&mut self, sw: u32, out: u32, pkt: u32, in_port: u32) {
        let now = self.now;
        let p = self.pkts.get(pkt);
        // A trimmed header stays in the control class at every later hop too.
        if p.kind.is_control() || p.flags & F_TRIMMED != 0 {
            self.push_ctrl(out, pkt);
            return;
        }
        let wire = self.pkts.get(pkt).wire as u64;
        let admitted = match self.sc.switch.mode {
            SwitchMode::Pfc => self.admit_ingress(sw, in_port, wire),
            SwitchMode::Lossy | SwitchMode::Trim => self.admit_egress(sw, out, wire),
        };
        if !admitted {
            let port = &mut self.ports[out as usize];
            port.mon.advance(now, self.window_ps);
            if self.sc.switch.mode == SwitchMode::Trim {
                port.mon.cur.trims += 1;
                self.trim(out, pkt);
            } else {
                port.mon.cur.drops += 1;
                self.drop_packet(pkt);
            }
            return;
        }
        let q = self.ports[out as usize].data_bytes;
        if self.sig.on {
            self.signal_enqueue(pkt, q);
        }
        // ECN: RED on the data queue this packet joins; with ECP only at congestion roots.
        if let Some(ecn) = self.sc.switch.ecn {
            let flow = self.pkts.get(pkt).flow;
            let port = &mut self.ports[out as usize];
            let eligible = match ecn.mode {
                EcnMode::Red => true,
                EcnMode::Ecp => {
                    let root = ecp::is_root(
                        q,
                        ecn.root_threshold.unwrap_or(ecn.kmin).0,
                        port.paused,
                        port.last_pause_end,
                        now,
                        ecn.pause_memory.0,
                    );
                    let mark = root && port.occupancy.contributes(flow, q, ecn.fair_share);
                    port.occupancy.add(flow, wire, ecn.max_flows as usize);
                    mark
                }
            };
            if eligible && self.pkts.get(pkt).flags & F_ECT != 0 {
                let mark = if q <= ecn.kmin.0 {
                    false
                } else if q >= ecn.kmax.0 {
                    true
                } else {
                    let prob = ecn.pmax * (q - ecn.kmin.0) as f64 / (ecn.kmax.0 - ecn.kmin.0) as f64;
                    self.switches[sw as usize].ecn_rng.unit() < prob
                };
                if mark {
                    if ecn.mode == EcnMode::Ecp {
                        let port = &self.ports[out as usize];
                        if let Some(share) = port.occupancy.contributor_share(q + wire, ecn.fair_share, port.rate_bps) {
                            let threshold = ecn.root_threshold.unwrap_or(ecn.kmin).0;
                            let drain = ecp::drain_factor(q + wire, threshold, port.rate_bps, ecn.drain_time.0);
                            let p = self.pkts.get_mut(pkt);
                            p.advice = p.advice.lower(Advice::new(share, drain));
                        }
                    }
                    self.pkts.get_mut(pkt).flags |= F_CE;
                    self.stats.ecn_marks += 1;
                    let port = &mut self.ports[out as usize];
                    port.mon.advance(now, self.window_ps);
                    port.mon.cur.ecn_marks += 1;
                }
            }
        }
        let s = &mut self.switches[sw as usize];
        s.used += wire;
        s.max_used = s.max_used.max(s.used);
        let p = self.pkts.get_mut(pkt);
        p.in_port = in_port;
        p.enq_ps = now;
        let port = &mut self.ports[out as usize];
        port.data.push_back(pkt);
        port.data_bytes += wire;
        if self.record_links {
            let qb = port.queue_bytes();
            port.mon.on_queue(now, qb, self.window_ps);
        }
        if !port.paused {
            self.kick(out);
        }
    }

    /// Sends a control packet on `port`. Control has strict priority and is
    /// never paused, so its start time is known now: right after whatever is
    /// on the wire or already committed. It is committed at once, which saves
    /// the `TxDone` event a queued packet would need.
    pub(crate) fn push_ctrl(&mut self, port: u32, pkt: u32) {
        let now = self.now;
        let p = &self.ports[port as usize];
        let start = p.busy_until.max(now);
        // A switch's control class has a finite queue too: headers trimmed
        // faster than the port drains them (and ACKs behind them) are dropped.
        // PAUSE frames always go.
        if p.node >= self.num_hosts && self.pkts.get(pkt).kind != PacketKind::Pause {
            let backlog = crate::units::bytes_in(start - now, p.rate_bps);
            if backlog + self.pkts.get(pkt).wire as u64 > self.sc.switch.ctrl_buffer.0 {
                let port = &mut self.ports[port as usize];
                port.mon.advance(now, self.window_ps);
                port.mon.cur.drops += 1;
                self.drop_packet(pkt);
                return;
            }
        }
        self.pkts.get_mut(pkt).enq_ps = now;
        self.start_tx(port, pkt, start);
    }

    /// Cuts a data packet to its headers and forwards it as control.
    fn trim(&mut self, out: u32, pkt: u32) {
        let keep = self.sc.switch.trim_size;
        let old = self.pkts.get(pkt).wire;
        if old > keep {
            self.stats.bytes_trimmed += (old - keep) as u64;
            self.pkts.set_wire(pkt, keep);
        }
        self.stats.packets_trimmed += 1;
        self.pkts.get_mut(pkt).flags |= F_TRIMMED;
        if self.sig.on {
            // The tag of a trimmed packet no longer describes a full packet's path.
            self.pkts.sig_mut(pkt).csig_d = true;
        }
        self.push_ctrl(out, pkt);
    }

    /// Shared bytes a queue of `q` bytes holds beyond its reservation.
    #[inline]
    fn over(q: u64, reserved: u64) -> u64 {
        q.saturating_sub(reserved)
    }

    /// Egress dynamic threshold (lossy and trim).
    fn admit_egress(&mut self, sw: u32, out: u32, wire: u64) -> bool {
        let reserved = self.sc.switch.reserved.0;
        let s = &mut self.switches[sw as usize];
        let q = self.ports[out as usize].data_bytes;
        let extra = Self::over(q + wire, reserved) - Self::over(q, reserved);
        if extra == 0 {
            return true;
        }
        let free = s.shared_size - s.shared_used;
        let limit = (self.sc.switch.dt_alpha * free as f64) as u64;
        if extra <= free && Self::over(q + wire, reserved) <= limit {
            s.shared_used += extra;
            true
        } else {
            false
        }
    }

    /// Ingress accounting with PFC (pfc mode). Returns false only when the
    /// headroom itself overflows, which a correctly sized headroom prevents.
    fn admit_ingress(&mut self, sw: u32, in_port: u32, wire: u64) -> bool {
        let reserved = self.sc.switch.reserved.0;
        let alpha = self.sc.switch.pfc.alpha;
        let s = &mut self.switches[sw as usize];
        let ip = &mut self.ports[in_port as usize];
        let q = ip.in_bytes;
        let extra = Self::over(q + wire, reserved) - Self::over(q, reserved);
        let free = s.shared_size - s.shared_used;
        let xoff = (alpha * free as f64) as u64;
        let fits_shared = extra == 0 || (extra <= free && Self::over(q + wire, reserved) <= xoff && ip.in_headroom == 0);
        if fits_shared {
            ip.in_bytes += wire;
            s.shared_used += extra;
        } else if ip.in_headroom + wire <= s.headroom {
            ip.in_headroom += wire;
        } else {
            return false;
        }
        // XOFF: the port's shared use reached the threshold, or headroom is in use.
        let free = s.shared_size - s.shared_used;
        let xoff = (alpha * free as f64) as u64;
        let send_xoff = !ip.xoff_sent && (ip.in_headroom > 0 || Self::over(ip.in_bytes, reserved) >= xoff);
        if send_xoff {
            ip.xoff_sent = true;
            self.send_pause(in_port, true);
        }
        true
    }

    fn send_pause(&mut self, port: u32, xoff: bool) {
        let p = Packet { kind: PacketKind::Pause, flags: if xoff { F_XOFF } else { 0 }, wire: 64, ..Default::default() };
        if xoff {
            self.stats.pauses_sent += 1;
        } else {
            self.stats.resumes_sent += 1;
        }
        let id = self.inject(p);
        self.push_ctrl(port, id);
    }

    /// Releases a data packet's buffer as it starts transmission.
    fn release(&mut self, sw: u32, out: u32, pkt: u32) {
        let wire = self.pkts.get(pkt).wire as u64;
        if self.sc.switch.ecn.is_some_and(|e| e.mode == EcnMode::Ecp) {
            let flow = self.pkts.get(pkt).flow;
            self.ports[out as usize].occupancy.remove(flow, wire);
        }
        let reserved = self.sc.switch.reserved.0;
        let s = &mut self.switches[sw as usize];
        s.used -= wire;
        let port = &mut self.ports[out as usize];
        match self.sc.switch.mode {
            SwitchMode::Lossy | SwitchMode::Trim => {
                let q = port.data_bytes;
                s.shared_used -= Self::over(q, reserved) - Self::over(q - wire, reserved);
                port.data_bytes -= wire;
            }
            SwitchMode::Pfc => {
                port.data_bytes -= wire;
                let in_port = self.pkts.get(pkt).in_port;
                let ip = &mut self.ports[in_port as usize];
                let from_headroom = ip.in_headroom.min(wire);
                ip.in_headroom -= from_headroom;
                let rest = wire - from_headroom;
                let q = ip.in_bytes;
                s.shared_used -= Self::over(q, reserved) - Self::over(q - rest, reserved);
                ip.in_bytes -= rest;
                if ip.xoff_sent && ip.in_headroom == 0 {
                    let free = s.shared_size - s.shared_used;
                    let xoff = (self.sc.switch.pfc.alpha * free as f64) as u64;
                    let shared = Self::over(ip.in_bytes, reserved);
                    if shared == 0 || shared + self.sc.switch.pfc.xon_delta.0 <= xoff {
                        ip.xoff_sent = false;
                        self.send_pause(in_port, false);
                    }
                }
            }
        }
    }

    /// The next data packet a switch port sends, unless paused.
    pub(crate) fn switch_next(&mut self, port: u32) -> Option<u32> {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        if p.paused {
            return None;
        }
        let pkt = p.data.pop_front()?;
        let sw = p.node - self.num_hosts;
        self.release(sw, port, pkt);
        if self.record_links {
            let p = &mut self.ports[port as usize];
            let qb = p.queue_bytes();
            p.mon.on_queue(now, qb, self.window_ps);
        }
        Some(pkt)
    }
}

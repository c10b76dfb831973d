//! Packet capture: `csigsim run --pcap FILE` writes every packet that starts
//! transmission on a link, filtered by flow, link and time, as a classic
//! nanosecond pcap of RoCEv2-like frames (see the `wire` module), and beside
//! it `FILE.csv`, one row per captured frame with what the simulator knew of
//! it, so captures can be checked against the dissector.

use crate::packet::{PacketKind, F_CE, F_ECT, F_TRIMMED};
use crate::signal::{csig::TagSize, NO_TAG};
use crate::id::{FlowId, NodeId, PktId, PortId};
use crate::packet::{Packet, PacketArena};
use crate::wire::{ip_of_host, mac_of_node, nak_syndrome, CsigCodec, CsigRepr, FrameRepr, PcapWriter};
use crate::wire::{OPCODE_RC_ACK, OPCODE_RC_SEND_ONLY, SYNDROME_ACK};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Which packets to capture.
#[derive(Clone, Debug, Default)]
pub struct CaptureFilter {
    /// Only these flows (empty: all).
    pub flows: Vec<FlowId>,
    /// Only these directed links, as (from, to) node names (empty: all).
    pub links: Vec<(String, String)>,
    pub start_ps: u64,
    pub end_ps: Option<u64>,
    pub snaplen: u32,
}

/// The two ends of a directed link (one per port, in port order): node ids
/// (for the frame addresses) and names (for the index).
#[derive(Clone, Debug)]
pub struct LinkEnds {
    pub from_node: NodeId,
    pub to_node: NodeId,
    pub from: String,
    pub to: String,
}

pub struct Capture {
    out: Out,
    codec: CsigCodec,
    flows: Vec<FlowId>,
    /// Per port: capture on it, and the link's two ends.
    ports: Vec<bool>,
    ends: Vec<LinkEnds>,
    tag_size: crate::wire::TagSize,
    start_ps: u64,
    end_ps: u64,
    pub frames: u64,
    pub error: Option<String>,
    /// The event being handled, as (time, owner): a held frame's place in
    /// the whole run's order.
    key: (u64, u64),
}

/// Where the frames go.
enum Out {
    /// The capture files, frame by frame.
    Files { pcap: PcapWriter<BufWriter<File>>, index: BufWriter<File> },
    /// Held in memory by a partition of a parallel run, each with the event
    /// that sent it, until they are merged into the files in the run's
    /// order ([`Capture::merge`]).
    Held(Held),
}

struct Held {
    /// The frames' pcap records, one after another.
    pcap: PcapWriter<Vec<u8>>,
    /// Their index rows without the frame number, one after another.
    rows: Vec<u8>,
    recs: Vec<HeldFrame>,
}

/// A held frame: its event (time, owner) and where its record and row end.
#[derive(Clone, Copy)]
struct HeldFrame {
    t: u64,
    owner: u64,
    pcap_end: usize,
    row_end: usize,
}

impl Capture {
    /// Opens the capture files. `links` gives each port's two ends, in port
    /// order; link names in the filter are checked against them.
    pub fn open(path: &Path, f: &CaptureFilter, links: Vec<LinkEnds>, flows: usize, csig: Option<&crate::signal::csig::CsigSetup>) -> Result<Capture, String> {
        let mut ports = vec![f.links.is_empty(); links.len()];
        for (from, to) in &f.links {
            let mut found = false;
            for (i, l) in links.iter().enumerate() {
                if &l.from == from && &l.to == to {
                    ports[i] = true;
                    found = true;
                }
            }
            if !found {
                return Err(format!("no link from \"{from}\" to \"{to}\""));
            }
        }
        for &fl in &f.flows {
            if fl.ix() >= flows {
                return Err(format!("no flow {fl}: the scenario has {flows} flows"));
            }
        }
        let open = |p: &Path| File::create(p).map(BufWriter::new).map_err(|e| format!("cannot create {}: {e}", p.display()));
        let pcap = PcapWriter::new(open(path)?, f.snaplen).map_err(|e| e.to_string())?;
        let mut index = open(&path.with_extension("pcap.csv"))?;
        writeln!(index, "frame,time_ns,from,to,kind,flow_id,psn,wire_bytes,ecn,csig_type,csig_value,csig_locator,csig_d").map_err(|e| e.to_string())?;
        let codec = csig.map(|c| c.codec).unwrap_or_default();
        let tag_size = match csig.map(|s| s.size) {
            Some(TagSize::Wide) => crate::wire::TagSize::Wide,
            _ => crate::wire::TagSize::Compact,
        };
        Ok(Capture {
            out: Out::Files { pcap, index },
            codec,
            flows: f.flows.clone(),
            ports,
            ends: links,
            tag_size,
            start_ps: f.start_ps,
            end_ps: f.end_ps.unwrap_or(u64::MAX),
            frames: 0,
            error: None,
            key: (0, 0),
        })
    }

    pub fn finish(mut self) -> Result<u64, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let Out::Files { pcap, index } = &mut self.out else { return Err("a held capture has no files".into()) };
        pcap.flush().map_err(|e| e.to_string())?;
        index.flush().map_err(|e| e.to_string())?;
        Ok(self.frames)
    }

    /// The same capture for a partition of a parallel run: its frames are
    /// held, each with the event that sent it, for [`Capture::merge`].
    pub(crate) fn held(&self) -> Capture {
        let snaplen = match &self.out {
            Out::Files { pcap, .. } => pcap.snaplen(),
            Out::Held(h) => h.pcap.snaplen(),
        };
        let mut pcap = PcapWriter::new(Vec::new(), snaplen).expect("a capture's snaplen is valid");
        // The files have the global header.
        pcap.get_mut().clear();
        Capture {
            out: Out::Held(Held { pcap, rows: Vec::new(), recs: Vec::new() }),
            codec: self.codec,
            flows: self.flows.clone(),
            ports: self.ports.clone(),
            ends: self.ends.clone(),
            tag_size: self.tag_size,
            start_ps: self.start_ps,
            end_ps: self.end_ps,
            frames: 0,
            error: None,
            key: (0, 0),
        }
    }

    /// The event being handled now is `owner`'s at `t` (a held capture's
    /// frames are merged in the order of their events).
    #[inline]
    pub(crate) fn set_key(&mut self, t: u64, owner: u64) {
        self.key = (t, owner);
    }

    /// Writes the frames the partitions' held captures hold into these
    /// files, in the order the single queue sends them: by their events'
    /// (time, owner) as the queue orders them, a partition's frames of one
    /// event in the order it sent them (two partitions never handle events
    /// of one owner). Every partition must have handled every event before
    /// the next it will handle; the held captures are emptied.
    pub(crate) fn merge(&mut self, parts: &mut [&mut Capture]) {
        let Out::Files { pcap, index } = &mut self.out else { panic!("a capture merges into its files") };
        let key = |f: &HeldFrame| (f.t, f.owner ^ crate::sim::queue::block_mask(f.t / crate::sim::queue::BLOCK_PS));
        let mut next = vec![0usize; parts.len()];
        loop {
            let pick = (0..parts.len())
                .filter_map(|i| match &parts[i].out {
                    Out::Held(h) => h.recs.get(next[i]).map(|f| (key(f), i)),
                    Out::Files { .. } => None,
                })
                .min();
            let Some((_, i)) = pick else { break };
            let Out::Held(h) = &parts[i].out else { unreachable!() };
            let k = next[i];
            let (p0, r0) = if k == 0 { (0, 0) } else { (h.recs[k - 1].pcap_end, h.recs[k - 1].row_end) };
            let f = h.recs[k];
            next[i] += 1;
            if self.error.is_some() {
                continue;
            }
            let res = pcap
                .get_mut()
                .write_all(&h.pcap.get_ref()[p0..f.pcap_end])
                .and_then(|_| write!(index, "{},", self.frames))
                .and_then(|_| index.write_all(&h.rows[r0..f.row_end]));
            match res {
                Ok(()) => self.frames += 1,
                Err(e) => self.error = Some(e.to_string()),
            }
        }
        for p in parts.iter_mut() {
            if let Some(e) = p.error.take() {
                self.error.get_or_insert(e);
            }
            if let Out::Held(h) = &mut p.out {
                h.pcap.get_mut().clear();
                h.rows.clear();
                h.recs.clear();
            }
        }
    }
}

impl Capture {
    /// Captures `pkt` as it starts on `port` at `start`, if the filter wants it.
    #[inline(never)]
    pub fn on_tx(&mut self, port: PortId, pkts: &PacketArena, pkt: PktId, start: u64) {
        let c = self;
        let p: Packet = *pkts.get(pkt);
        let wanted = c.ports[port.ix()]
            && start >= c.start_ps
            && start <= c.end_ps
            && p.kind != PacketKind::Pause
            && (c.flows.is_empty() || c.flows.contains(&p.flow));
        if wanted && c.error.is_none() {
            let sig = if pkts.has_signals() { *pkts.sig(pkt) } else { Default::default() };
            let tagged = p.kind == PacketKind::Data && sig.csig_type != NO_TAG;
            let size = c.tag_size;
            let csig = tagged.then_some(CsigRepr { size, sig_type: sig.csig_type, value: sig.csig_value, locator: sig.csig_lm, d: sig.csig_d });
            let ecn = if p.flags & F_CE != 0 {
                3
            } else if p.flags & F_ECT != 0 {
                2
            } else {
                0
            };
            let (opcode, aeth, payload) = match p.kind {
                PacketKind::Data => (OPCODE_RC_SEND_ONLY, None, if p.flags & F_TRIMMED != 0 { 0 } else { p.payload }),
                PacketKind::Ack => (OPCODE_RC_ACK, Some((SYNDROME_ACK, p.psn & 0xff_ffff)), 0),
                // RoCEv2 CNP: opcode 0x81 (congestion notification), no AETH.
                PacketKind::Cnp => (crate::wire::OPCODE_CNP, None, 0),
                // NAK code 0: PSN sequence error.
                _ => (OPCODE_RC_ACK, Some((nak_syndrome(0), p.psn & 0xff_ffff)), 0),
            };
            let ends = &c.ends[port.ix()];
            let (node, peer) = (ends.from_node, ends.to_node);
            let frame = FrameRepr {
                dst_mac: mac_of_node(peer.0),
                src_mac: mac_of_node(node.0),
                csig,
                ecn,
                src_ip: ip_of_host(p.src.0),
                dst_ip: ip_of_host(p.dst.0),
                src_port: (p.entropy & 0xffff) as u16 | 0xc000,
                opcode,
                dest_qp: p.flow.0 & 0xff_ffff,
                psn: p.psn & 0xff_ffff,
                ack_req: p.kind == PacketKind::Data,
                aeth,
                payload_len: payload,
            };
            let kind = match p.kind {
                PacketKind::Data if p.flags & F_TRIMMED != 0 => "trimmed",
                PacketKind::Data => "data",
                PacketKind::Ack => "ack",
                PacketKind::Nack => "nack",
                PacketKind::Cnp => "cnp",
                PacketKind::Pause => "pause",
                PacketKind::Credit => "credit",
            };
            let row = if let Some(t) = csig {
                format!("{},{},{},{},{}", ecn, t.sig_type, t.value, t.locator, t.d as u8)
            } else {
                format!("{ecn},,,,")
            };
            let res = match &mut c.out {
                Out::Files { pcap, index } => pcap.write_frame(start, &c.codec, &frame).map_err(|e| e.to_string()).and_then(|_| {
                    writeln!(index, "{},{},{},{},{kind},{},{},{},{row}", c.frames, crate::units::fmt_ns(start), ends.from, ends.to, p.flow, p.psn, p.wire)
                        .map_err(|e| e.to_string())
                }),
                Out::Held(h) => h.pcap.write_frame(start, &c.codec, &frame).map_err(|e| e.to_string()).map(|_| {
                    // Writing to memory does not fail.
                    let _ = writeln!(h.rows, "{},{},{},{kind},{},{},{},{row}", crate::units::fmt_ns(start), ends.from, ends.to, p.flow, p.psn, p.wire);
                    h.recs.push(HeldFrame { t: c.key.0, owner: c.key.1, pcap_end: h.pcap.get_ref().len(), row_end: h.rows.len() });
                }),
            };
            match res {
                Ok(()) => c.frames += 1,
                Err(e) => c.error = Some(e),
            }
        }
    }
}

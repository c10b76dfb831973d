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
    pcap: PcapWriter<BufWriter<File>>,
    index: BufWriter<File>,
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
            pcap,
            index,
            codec,
            flows: f.flows.clone(),
            ports,
            ends: links,
            tag_size,
            start_ps: f.start_ps,
            end_ps: f.end_ps.unwrap_or(u64::MAX),
            frames: 0,
            error: None,
        })
    }

    pub fn finish(mut self) -> Result<u64, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.pcap.flush().map_err(|e| e.to_string())?;
        self.index.flush().map_err(|e| e.to_string())?;
        Ok(self.frames)
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
            let res = c.pcap.write_frame(start, &c.codec, &frame).map_err(|e| e.to_string()).and_then(|_| {
                writeln!(
                    c.index,
                    "{},{},{},{},{kind},{},{},{},{row}",
                    c.frames,
                    crate::units::fmt_ns(start),
                    ends.from,
                    ends.to,
                    p.flow,
                    p.psn,
                    p.wire
                )
                .map_err(|e| e.to_string())
            });
            match res {
                Ok(()) => c.frames += 1,
                Err(e) => c.error = Some(e),
            }
        }
    }
}

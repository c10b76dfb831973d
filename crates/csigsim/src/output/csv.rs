//! The CSV files, formatted from the tables (docs/outputs.md). Nothing here
//! reads the simulation.

use super::fmt_ns;
use crate::units::write_ns;
use super::tables::{CcTable, CollectiveTable, RpcTable, FlowTable, LinkRow, LinkTable, SignalTable};
use std::io::{self, Write};

pub const FLOWS_HEADER: &str = "flow_id,name,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,bytes_sent,retransmits,timeouts,nacks,trims,ecn_marked,delivered_bytes,cnps,sender_finish_ns,sender_fct_ns\n";
pub const LINKS_HEADER: &str = "time_ns,from,to,link_id,tx_bytes,utilization,max_queue_bytes,drops,ecn_marks,trims,pause_ns\n";
pub const SIGNALS_HEADER: &str = "time_ns,flow_id,signal,unit,samples,mean,min,max,locator,bottleneck\n";
pub const CC_HEADER: &str = "time_ns,flow_id,cc,acks,cwnd_bytes,cwnd_min_bytes,cwnd_max_bytes,rate_bps,alpha,rtt_mean_ns,ce_fraction\n";

/// A text cell, quoted CSV-style if it contains a comma, a quote or a line break.
pub fn csv_field(v: &str) -> String {
    let mut s = Vec::with_capacity(v.len());
    let _ = write_field(&mut s, v);
    String::from_utf8(s).expect("UTF-8 in, UTF-8 out")
}

/// [`csv_field`] written to `out`.
fn write_field(out: &mut impl Write, v: &str) -> io::Result<()> {
    if v.contains([',', '"', '\n']) {
        write!(out, "\"{}\"", v.replace('"', "\"\""))
    } else {
        out.write_all(v.as_bytes())
    }
}

/// [`write_ns`] of a time that may be absent (an empty cell).
fn write_opt_ns(out: &mut impl Write, ps: Option<u64>) -> io::Result<()> {
    ps.map_or(Ok(()), |ps| write_ns(out, ps))
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

fn opt_ns(v: Option<u64>) -> String {
    v.map_or_else(String::new, fmt_ns)
}

/// `slowdown` as written: four decimals, empty if the flow did not complete.
pub fn fmt_slowdown(v: Option<f64>) -> String {
    let mut s = Vec::with_capacity(16);
    let _ = write_slowdown(&mut s, v);
    String::from_utf8(s).expect("ASCII digits")
}

/// [`fmt_slowdown`] written to `out`. The float formatter takes its slow
/// exact path for most slowdowns near 1 (1.0043, say, as flows of a
/// collective have): a value in the usual range is rounded here instead,
/// exactly and half to even, as the formatter rounds.
fn write_slowdown(out: &mut impl Write, v: Option<f64>) -> io::Result<()> {
    let Some(x) = v else { return Ok(()) };
    match four_decimals(x) {
        Some(q) => {
            let mut int = itoa::Buffer::new();
            out.write_all(int.format(q / 10_000).as_bytes())?;
            let f = q % 10_000;
            out.write_all(&[b'.', b'0' + (f / 1000) as u8, b'0' + (f / 100 % 10) as u8, b'0' + (f / 10 % 10) as u8, b'0' + (f % 10) as u8])
        }
        None => write!(out, "{x:.4}"),
    }
}

/// `x` x 10^4 rounded to a whole number, half to even, for a finite,
/// positive, normal `x` below 2^52 that is not below 2^-60; None otherwise.
/// Exact: `x` is m x 2^e, so x x 10^4 is (m x 10^4) / 2^-e, with m x 10^4
/// below 2^67.
fn four_decimals(x: f64) -> Option<u64> {
    let bits = x.to_bits();
    let biased = (bits >> 52) & 0x7ff;
    if bits >> 63 != 0 || biased == 0 || biased == 0x7ff {
        return None;
    }
    let e = biased as i64 - 1075;
    let shift = u32::try_from(-e).ok().filter(|s| (1..=112).contains(s))?;
    let n = ((bits & ((1 << 52) - 1)) | (1 << 52)) as u128 * 10_000;
    let (mut q, r, half) = (n >> shift, n & ((1u128 << shift) - 1), 1u128 << (shift - 1));
    if r > half || (r == half && q & 1 == 1) {
        q += 1;
    }
    u64::try_from(q).ok()
}

/// `utilization` as written: six decimals, or `0` when idle.
pub fn fmt_utilization(v: f64) -> String {
    let mut s = Vec::with_capacity(16);
    let _ = write_utilization(&mut s, v);
    String::from_utf8(s).expect("ASCII digits")
}

/// [`fmt_utilization`] written to `out`. A busy link's share is exactly 1,
/// which the float formatter writes by its slow exact path: written directly.
fn write_utilization(out: &mut impl Write, v: f64) -> io::Result<()> {
    match v {
        0.0 => out.write_all(b"0"),
        1.0 => out.write_all(b"1.000000"),
        u => write!(out, "{u:.6}"),
    }
}

pub fn write_flows(t: &FlowTable, out: &mut impl Write) -> io::Result<()> {
    out.write_all(FLOWS_HEADER.as_bytes())?;
    let mut int = itoa::Buffer::new();
    // Each row is put together in memory, then written at once: forty
    // small writes a row through the file's buffer each paid a call, where
    // appending to a vector is inlined.
    let mut row = Vec::with_capacity(256);
    for i in 0..t.len() {
        row.clear();
        write_flow_row(t, i, &mut int, &mut row)?;
        out.write_all(&row)?;
    }
    Ok(())
}

/// Row `i` of flows.csv. Written field by field: a collective of millions
/// of flows writes millions of these lines, and `writeln!` with twenty
/// arguments, nine of them formatted into strings first, took most of the
/// time spent writing the outputs. The bytes are those that `writeln!`
/// wrote (a test compares them).
fn write_flow_row(t: &FlowTable, i: usize, int: &mut itoa::Buffer, out: &mut Vec<u8>) -> io::Result<()> {
    out.write_all(int.format(t.flow_id[i]).as_bytes())?;
    for text in [t.flow_name(i), t.src_name(i), t.dst_name(i)] {
        out.write_all(b",")?;
        write_field(out, text)?;
    }
    out.write_all(b",")?;
    out.write_all(int.format(t.size_bytes[i]).as_bytes())?;
    out.write_all(b",")?;
    write_ns(out, t.start_ps[i])?;
    for ps in [t.finish_ps[i], t.fct_ps[i]] {
        out.write_all(b",")?;
        write_opt_ns(out, ps)?;
    }
    out.write_all(b",")?;
    write_ns(out, t.ideal_fct_ps[i])?;
    out.write_all(b",")?;
    write_slowdown(out, t.slowdown[i])?;
    for v in [t.bytes_sent[i], t.retransmits[i], t.timeouts[i], t.nacks[i], t.trims[i], t.ecn_marked[i], t.delivered_bytes[i], t.cnps[i]] {
        out.write_all(b",")?;
        out.write_all(int.format(v).as_bytes())?;
    }
    for ps in [t.sender_finish_ps[i], t.sender_fct_ps[i]] {
        out.write_all(b",")?;
        write_opt_ns(out, ps)?;
    }
    out.write_all(b"\n")
}

pub fn write_links(t: &LinkTable, out: &mut impl Write) -> io::Result<()> {
    out.write_all(LINKS_HEADER.as_bytes())?;
    let mut time = (u64::MAX, String::new());
    for r in t.rows() {
        write_link_row(&r, &mut time, out)?;
    }
    Ok(())
}

/// One line of links.csv; `time` caches the formatted time of the last row.
/// Written field by field: a fine monitor window makes this the most
/// frequent line of any file (on a 1024-host fabric with 1 us windows,
/// 1.7 M lines), and `writeln!` with eleven arguments, two of them
/// formatted into strings first, cost about 0.3 us a line more. The bytes
/// are those that `writeln!` wrote (a test compares them).
pub fn write_link_row(r: &LinkRow, time: &mut (u64, String), out: &mut impl Write) -> io::Result<()> {
    if time.0 != r.time_ps {
        *time = (r.time_ps, fmt_ns(r.time_ps));
    }
    let mut int = itoa::Buffer::new();
    out.write_all(time.1.as_bytes())?;
    for cell in [r.from, r.to] {
        out.write_all(b",")?;
        out.write_all(cell.as_bytes())?;
    }
    for v in [r.link_id as u64, r.tx_bytes] {
        out.write_all(b",")?;
        out.write_all(int.format(v).as_bytes())?;
    }
    out.write_all(b",")?;
    write_utilization(out, r.utilization)?;
    for v in [r.max_queue_bytes, r.drops as u64, r.ecn_marks as u64, r.trims as u64] {
        out.write_all(b",")?;
        out.write_all(int.format(v).as_bytes())?;
    }
    out.write_all(b",")?;
    match r.pause_ps {
        0 => out.write_all(b"0")?,
        p => write_ns(out, p)?,
    }
    out.write_all(b"\n")
}

pub fn write_signals(t: &SignalTable, out: &mut impl Write) -> io::Result<()> {
    out.write_all(SIGNALS_HEADER.as_bytes())?;
    for i in 0..t.len() {
        write_signal_row(t, i, t.bottleneck_name(i), out)?;
    }
    Ok(())
}

/// Row `i` of the signals table as a line, its bottleneck named `bottleneck`.
pub fn write_signal_row(t: &SignalTable, i: usize, bottleneck: &str, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "{},{},{},{},{},{},{},{},{},{}",
        fmt_ns(t.time_ps[i]),
        t.flow_id[i],
        t.signal[i],
        t.unit[i],
        t.samples[i],
        t.mean[i],
        t.min[i],
        t.max[i],
        opt(t.locator[i]),
        bottleneck
    )
}

pub fn write_cc(t: &CcTable, out: &mut impl Write) -> io::Result<()> {
    out.write_all(CC_HEADER.as_bytes())?;
    for i in 0..t.len() {
        write_cc_row(t, i, out)?;
    }
    Ok(())
}

/// Row `i` of the cc table as a line.
pub fn write_cc_row(t: &CcTable, i: usize, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "{},{},{},{},{},{},{},{},{},{},{}",
        fmt_ns(t.time_ps[i]),
        t.flow_id[i],
        t.cc,
        t.acks[i],
        opt(t.cwnd_bytes[i]),
        opt(t.cwnd_min_bytes[i]),
        opt(t.cwnd_max_bytes[i]),
        t.rate_bps[i],
        t.alpha[i],
        t.rtt_mean_ns[i],
        t.ce_fraction[i]
    )
}

const COLLECTIVES_HEADER: &str =
    "collective_id,name,op,ranks,iteration,step,first_flow,flows,start_ns,finish_ns,time_ns,size_bytes,algbw_gbps,busbw_gbps\n";

pub fn write_collectives(t: &CollectiveTable, out: &mut impl Write) -> io::Result<()> {
    out.write_all(COLLECTIVES_HEADER.as_bytes())?;
    for i in 0..t.len() {
        let time = match (t.start_ps[i], t.finish_ps[i]) {
            (Some(a), Some(b)) => fmt_ns(b - a),
            _ => String::new(),
        };
        let gbps = |v: Option<f64>| v.map_or_else(String::new, |x| format!("{x:.3}"));
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            t.collective_id[i],
            csv_field(&t.name[i]),
            t.op[i],
            t.ranks[i],
            t.iteration[i],
            opt(t.step[i]),
            t.first_flow[i],
            t.flows[i],
            opt_ns(t.start_ps[i]),
            opt_ns(t.finish_ps[i]),
            time,
            t.size_bytes[i],
            gbps(t.algbw_gbps[i]),
            gbps(t.busbw_gbps[i]),
        )?;
    }
    Ok(())
}

const RPCS_HEADER: &str = "flow_id,name,class,src,dst,size_bytes,start_ns,finish_ns,latency_ns\n";

pub fn write_rpcs(t: &RpcTable, out: &mut impl Write) -> io::Result<()> {
    out.write_all(RPCS_HEADER.as_bytes())?;
    for i in 0..t.len() {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            t.flow_id[i],
            csv_field(&t.name[i]),
            t.class[i],
            csv_field(t.src_name(i)),
            csv_field(t.dst_name(i)),
            t.size_bytes[i],
            fmt_ns(t.start_ps[i]),
            opt_ns(t.finish_ps[i]),
            opt_ns(t.latency_ps[i]),
        )?;
    }
    Ok(())
}

/// Formats a table into a string with one of the writers above.
pub fn to_string<T>(t: &T, write: fn(&T, &mut Vec<u8>) -> io::Result<()>) -> String {
    let mut buf = Vec::new();
    // Writing into memory cannot fail, and every cell is UTF-8.
    let _ = write(t, &mut buf);
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Utilization as the formatter writes it: six decimals, `0` when idle.
    fn utilization_formatted(u: f64) -> String {
        if u == 0.0 { "0".to_string() } else { format!("{u:.6}") }
    }

    /// A links.csv line as `writeln!` with `{}` for every field wrote it.
    fn reference(r: &LinkRow) -> String {
        let utilization = utilization_formatted(r.utilization);
        format!(
            "{},{},{},{},{},{},{},{},{},{},{}\n",
            fmt_ns(r.time_ps),
            r.from,
            r.to,
            r.link_id,
            r.tx_bytes,
            utilization,
            r.max_queue_bytes,
            r.drops,
            r.ecn_marks,
            r.trims,
            fmt_ns(r.pause_ps)
        )
    }

    fn utilization() -> impl Strategy<Value = f64> {
        prop_oneof![Just(0.0), Just(1.0), Just(0.5), Just(1.0 - f64::EPSILON), Just(0.0000005), 0.0..1.5f64]
    }

    /// A flows.csv line as `writeln!` with `{}` for every field wrote it.
    fn flow_reference(t: &FlowTable, i: usize) -> String {
        let quoted = |v: &str| if v.contains([',', '"', '\n']) { format!("\"{}\"", v.replace('"', "\"\"")) } else { v.to_string() };
        let ns = |v: Option<u64>| v.map_or_else(String::new, fmt_ns);
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            t.flow_id[i],
            quoted(t.flow_name(i)),
            quoted(t.src_name(i)),
            quoted(t.dst_name(i)),
            t.size_bytes[i],
            fmt_ns(t.start_ps[i]),
            ns(t.finish_ps[i]),
            ns(t.fct_ps[i]),
            fmt_ns(t.ideal_fct_ps[i]),
            t.slowdown[i].map_or_else(String::new, |x| format!("{x:.4}")),
            t.bytes_sent[i],
            t.retransmits[i],
            t.timeouts[i],
            t.nacks[i],
            t.trims[i],
            t.ecn_marked[i],
            t.delivered_bytes[i],
            t.cnps[i],
            ns(t.sender_finish_ps[i]),
            ns(t.sender_fct_ps[i]),
        )
    }

    fn time_ps() -> impl Strategy<Value = u64> {
        prop_oneof![Just(0u64), Just(1_000), Just(1_500), Just(1_050), Just(1_005), 0..10_000_000u64, any::<u64>()]
    }

    fn slowdown() -> impl Strategy<Value = Option<f64>> {
        prop_oneof![
            Just(None),
            Just(Some(1.0)),
            Just(Some(0.0)),
            Just(Some(-0.0)),
            Just(Some(2.0)),
            Just(Some(1.03125)),
            Just(Some(1.09375)),
            Just(Some(0.00005)),
            Just(Some(0.00015)),
            Just(Some(f64::MIN_POSITIVE)),
            Just(Some(4503599627370495.5)),
            Just(Some(4503599627370496.0)),
            // Exact ties at four decimals are the odd multiples of 1/32.
            (0u32..1_000_000).prop_map(|j| Some(f64::from(2 * j + 1) / 32.0)),
            (0.99..1.2f64).prop_map(Some),
            (0.0..1e-12f64).prop_map(Some),
            Just(Some(1e15)),
            Just(Some(1e300)),
            Just(Some(f64::NAN)),
            (0u64..1_000_000).prop_map(|n| Some(n as f64)),
            (0.0..1000.0f64).prop_map(Some),
        ]
    }

    #[test]
    fn slowdowns_are_rounded_as_the_float_formatter_rounds_them() {
        let reference = |x: f64| format!("{x:.4}");
        // Every exact tie below 2^13 (odd multiples of 1/32) and the
        // values around it.
        for j in 0..(1u32 << 17) {
            let tie = f64::from(2 * j + 1) / 32.0;
            for x in [tie, f64::from_bits(tie.to_bits() - 1), f64::from_bits(tie.to_bits() + 1)] {
                assert_eq!(fmt_slowdown(Some(x)), reference(x), "{x:e}");
            }
        }
        // Values spread over the range the fast path takes, by their bits.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let x = f64::from_bits((state >> 2) % 0x4330_0000_0000_0000);
            assert_eq!(fmt_slowdown(Some(x)), reference(x), "{x:e}");
        }
    }

    proptest! {
        #[test]
        fn a_flow_row_has_the_bytes_of_its_fields_formatted(
            flow_id in any::<u32>(),
            texts in prop_oneof![Just(("".to_string(), "h0".to_string(), "h1".to_string())), ("[a-z,\"]{0,6}", "[a-z0-9,]{1,6}", "[a-z\"\n]{1,6}")],
            size_bytes in any::<u64>(),
            times in (time_ps(), proptest::option::of(time_ps()), proptest::option::of(time_ps()), time_ps()),
            slowdown in slowdown(),
            counts in any::<[u64; 8]>(),
            sender in (proptest::option::of(time_ps()), proptest::option::of(time_ps())),
        ) {
            let t = FlowTable {
                flow_id: vec![flow_id],
                names: vec![texts.0],
                name: vec![0],
                hosts: vec![texts.1, texts.2],
                src: vec![0],
                dst: vec![1],
                size_bytes: vec![size_bytes],
                start_ps: vec![times.0],
                finish_ps: vec![times.1],
                fct_ps: vec![times.2],
                ideal_fct_ps: vec![times.3],
                slowdown: vec![slowdown],
                bytes_sent: vec![counts[0]],
                retransmits: vec![counts[1]],
                timeouts: vec![counts[2]],
                nacks: vec![counts[3]],
                trims: vec![counts[4]],
                ecn_marked: vec![counts[5]],
                delivered_bytes: vec![counts[6]],
                cnps: vec![counts[7]],
                sender_finish_ps: vec![sender.0],
                sender_fct_ps: vec![sender.1],
            };
            let mut out = Vec::new();
            write_flows(&t, &mut out).unwrap();
            let expected = format!("{FLOWS_HEADER}{}", flow_reference(&t, 0));
            prop_assert_eq!(String::from_utf8(out).unwrap(), expected);
            prop_assert_eq!(fmt_slowdown(slowdown), slowdown.map_or_else(String::new, |x| format!("{x:.4}")));
        }
    }

    proptest! {
        #[test]
        fn a_link_row_has_the_bytes_of_its_fields_formatted(
            time_ps in prop_oneof![Just(0u64), 0..10_000_000u64, any::<u64>()],
            link_id in any::<u32>(),
            tx_bytes in any::<u64>(),
            utilization in utilization(),
            max_queue_bytes in any::<u64>(),
            counts in any::<(u32, u32, u32)>(),
            pause_ps in prop_oneof![Just(0u64), 0..10_000u64, any::<u64>()],
        ) {
            let r = LinkRow {
                time_ps,
                from: "tor3",
                to: "agg1",
                link_id,
                tx_bytes,
                utilization,
                max_queue_bytes,
                drops: counts.0,
                ecn_marks: counts.1,
                trims: counts.2,
                pause_ps,
            };
            let mut out = Vec::new();
            // A cached time from another row is replaced.
            let mut time = (time_ps.wrapping_add(1), "stale".to_string());
            write_link_row(&r, &mut time, &mut out).unwrap();
            prop_assert_eq!(String::from_utf8(out).unwrap(), reference(&r));
            prop_assert_eq!(fmt_utilization(utilization), utilization_formatted(utilization));
        }
    }
}

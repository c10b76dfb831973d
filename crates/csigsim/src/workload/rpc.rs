//! RPC traffic, as the CSIG fast ramp-up experiment runs it: a foreground of
//! RPCs of one size among a set of hosts (open loop: Poisson arrivals at a
//! target load of each sender's link), optionally beside a bursty background
//! (ops of another size, sent at a rate during `on` and not at all during
//! `off`). Each RPC is a flow; its latency is the flow's completion time,
//! recorded in rpcs.csv.

use super::{hosts_of, label, Ctx, FlowSpec};
use crate::de::InputError;
use crate::id::HostId;
use super::poisson::host_rate;
use crate::net::topology::HostRef;
use crate::rng::{Purpose, Stream};
use crate::units::{Rate, Size, Time, PS_PER_S};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RpcConfig {
    /// Bytes per RPC.
    pub size: Size,
    /// Offered RPC bytes per sender, as a fraction of its link rate (Poisson arrivals).
    pub load: f64,
    /// RPCs start in [start, start + duration).
    pub duration: Time,
    #[serde(default)]
    pub start: Time,
    /// Senders and receivers (default: all hosts); a pair is drawn uniformly, never a host to itself.
    #[serde(default)]
    pub senders: Option<Vec<HostRef>>,
    #[serde(default)]
    pub receivers: Option<Vec<HostRef>>,
    #[serde(default)]
    pub name: Option<String>,
    /// The bursty background, if any.
    #[serde(default)]
    pub background: Option<Background>,
}

/// Background ops in bursts: every sender starts an op of `size` to a random
/// receiver every `size / rate` during each `on` period, then nothing for `off`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Background {
    pub size: Size,
    pub on: Time,
    pub off: Time,
    /// Per sender during `on` (default: the sender's link rate).
    #[serde(default)]
    pub rate: Option<Rate>,
    #[serde(default)]
    pub senders: Option<Vec<HostRef>>,
    #[serde(default)]
    pub receivers: Option<Vec<HostRef>>,
}

/// Which RPCs a flow is, for rpcs.csv.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpcSpec {
    pub flow: u32,
    pub name: String,
    /// "foreground" or "background".
    pub class: &'static str,
}

/// A receiver for `src` among `rx`, uniformly, never `src` itself.
fn pick(rng: &mut Stream, rx: &[u32], src: u32) -> u32 {
    let others = rx.len() as u64 - rx.contains(&src) as u64;
    let mut k = rng.below(others) as usize;
    for &r in rx {
        if r == src {
            continue;
        }
        if k == 0 {
            return r;
        }
        k -= 1;
    }
    unreachable!("others counts the candidates")
}

pub fn expand(c: &RpcConfig, ctx: &Ctx, flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    let err = ctx.err;
    let size = super::flow_size(c.size.0, ctx)?;
    if size == 0 {
        return Err(err("size", "size must be above zero".into()));
    }
    if !(c.load > 0.0 && c.load <= 10.0) {
        return Err(err("load", format!("load must be above 0 and at most 10, got {}", c.load)));
    }
    if c.duration.0 == 0 {
        return Err(err("duration", "duration must be above zero".into()));
    }
    let end = c.start.0.checked_add(c.duration.0).ok_or_else(|| err("duration", "start + duration is beyond the largest time".into()))?;
    let tx = hosts_of(ctx.topo, &c.senders, &|k, m| err(&format!("senders.{k}"), m))?;
    let rx = hosts_of(ctx.topo, &c.receivers, &|k, m| err(&format!("receivers.{k}"), m))?;
    if tx.iter().any(|&s| rx.iter().all(|&r| r == s)) {
        return Err(err("receivers", "every sender needs a receiver other than itself".into()));
    }
    // The expected number of RPCs and background ops, refused before generating when it could not fit in memory.
    let secs = c.duration.0 as f64 / PS_PER_S as f64;
    let mut expected: f64 = tx.iter().map(|&s| c.load * host_rate(ctx.topo, s) as f64 / (8.0 * size as f64) * secs).sum();
    if let Some(b) = &c.background {
        let period = b.on.0.saturating_add(b.off.0).max(1) as f64 / PS_PER_S as f64;
        let bursts = (secs / period).ceil();
        let per_burst = |rate: u64| b.on.0 as f64 / PS_PER_S as f64 * rate as f64 / (8.0 * b.size.0.max(1) as f64) + 1.0;
        let senders = hosts_of(ctx.topo, &b.senders, &|k, m| err(&format!("background.senders.{k}"), m))?;
        expected += senders.iter().map(|&s| bursts * per_burst(b.rate.map_or(host_rate(ctx.topo, s), |r| r.0))).sum::<f64>();
    }
    if expected + (ctx.first + flows.len() as u64) as f64 > ctx.max_flows as f64 {
        return Err(err("load", format!("this workload would generate about {expected:.3e} RPCs: {}; lower its load or duration", super::too_many_flows(ctx.max_flows))));
    }
    let tag = label(&c.name, "rpc", ctx.idx);
    let mut rng = Stream::new(ctx.seed, ctx.idx as u64, Purpose::Workload);
    let first = flows.len();
    let mut classes: Vec<(u64, u32, &'static str)> = Vec::new();
    for &s in &tx {
        // Exponential gaps at `load` of the sender's link, in picoseconds.
        let mean_gap = size as f64 * 8.0 / (c.load * host_rate(ctx.topo, s) as f64) * PS_PER_S as f64;
        let mut t = c.start.0 as f64;
        loop {
            t += super::poisson::exponential(&mut rng) * mean_gap;
            if t >= end as f64 {
                break;
            }
            if ctx.first + flows.len() as u64 >= ctx.max_flows {
                return Err(err("load", super::too_many_flows(ctx.max_flows)));
            }
            let d = pick(&mut rng, &rx, s);
            flows.push(FlowSpec { src: HostId(s), dst: HostId(d), size, start: Time(t as u64), name: tag.clone(), rate_cap: u64::MAX, channel: 0 });
            classes.push((t as u64, s, "foreground"));
        }
    }
    if let Some(b) = &c.background {
        let bsize = super::flow_size(b.size.0, ctx).map_err(|e| InputError { key: e.key.map(|k| k.replace(".size", ".background.size")), ..e })?;
        if bsize == 0 || b.on.0 == 0 {
            return Err(err("background", "background size and on must be above zero".into()));
        }
        let btx = hosts_of(ctx.topo, &b.senders, &|k, m| err(&format!("background.senders.{k}"), m))?;
        let brx = hosts_of(ctx.topo, &b.receivers, &|k, m| err(&format!("background.receivers.{k}"), m))?;
        if btx.iter().any(|&s| brx.iter().all(|&r| r == s)) {
            return Err(err("background.receivers", "every sender needs a receiver other than itself".into()));
        }
        let period = b.on.0.saturating_add(b.off.0);
        for &s in &btx {
            let rate = b.rate.map_or(host_rate(ctx.topo, s), |r| r.0);
            if rate == 0 {
                return Err(err("background.rate", "rate must be above zero".into()));
            }
            let gap = crate::units::tx_time_ps(bsize, rate).max(1);
            // Saturating steps: an op longer than the run (a rate of a few
            // bits per second) ends the burst instead of wrapping around.
            let mut burst = c.start.0;
            while burst < end {
                let mut t = burst;
                while t < burst.saturating_add(b.on.0).min(end) {
                    if ctx.first + flows.len() as u64 >= ctx.max_flows {
                        return Err(err("background.rate", super::too_many_flows(ctx.max_flows)));
                    }
                    let d = pick(&mut rng, &brx, s);
                    flows.push(FlowSpec { src: HostId(s), dst: HostId(d), size: bsize, start: Time(t), name: format!("{tag}-bg"), rate_cap: u64::MAX, channel: 0 });
                    classes.push((t, s, "background"));
                    t = t.saturating_add(gap);
                }
                burst = burst.saturating_add(period);
            }
        }
    }
    // Flow ids in order of start time (ties: by sender, foreground first).
    let mut order: Vec<usize> = (0..classes.len()).collect();
    order.sort_by_key(|&i| (classes[i].0, classes[i].1, classes[i].2 == "background"));
    let generated: Vec<FlowSpec> = flows.drain(first..).collect();
    let mut out = ctx.out.borrow_mut();
    for (k, &i) in order.iter().enumerate() {
        flows.push(generated[i].clone());
        out.rpcs.push(RpcSpec { flow: (first + k) as u32, name: generated[i].name.clone(), class: classes[i].2 });
    }
    Ok(())
}

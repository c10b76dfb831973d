//! Poisson: open-loop traffic at a target load. Every sending host starts
//! flows with exponentially distributed gaps (a Poisson process) to a
//! destination drawn uniformly among the other hosts of the set, with sizes
//! drawn from an empirical distribution (a CDF: the shipped `websearch` or
//! `hadoop`, or a file). The arrival rate of a host is set so that the
//! payload it offers is `load` x its link's rate:
//! `rate = load x link_rate / (8 x mean size)`, as the generators of the
//! ns-3 RDMA experiments do.

use super::{hosts_of, label, relative_to, Ctx, FlowSpec};
use crate::de::InputError;
use crate::id::HostId;
use crate::net::topology::{HostRef, NodeRef, TopologySpec};
use crate::rng::{Purpose, Stream};
use crate::units::{Time, PS_PER_S};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoissonConfig {
    /// Offered payload as a fraction of each sending host's link rate.
    pub load: f64,
    /// `"websearch"`, `"hadoop"`, or a file of `size_bytes cumulative_percent`
    /// lines (relative to the scenario file).
    pub cdf: String,
    /// Flows start in [start, start + duration).
    pub duration: Time,
    #[serde(default)]
    pub start: Time,
    /// The hosts that send and receive (default: all).
    #[serde(default)]
    pub hosts: Option<Vec<HostRef>>,
    #[serde(default)]
    pub name: Option<String>,
}

/// An empirical flow-size distribution: cumulative percentages at sizes,
/// uniform in size between two points.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    /// (size in bytes, cumulative percent), sizes and percents nondecreasing,
    /// ending at 100.
    points: Vec<(f64, f64)>,
}

impl Cdf {
    /// Parses `size percent` lines; `#` starts a comment. Errors give the line.
    pub fn parse(text: &str) -> Result<Cdf, (usize, String)> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let mut it = line.split_whitespace();
            let (Some(s), Some(p), None) = (it.next(), it.next(), it.next()) else {
                return Err((i + 1, format!("expected `size_bytes percent`, got \"{}\"", clip(line))));
            };
            let num = |v: &str, what: &str| {
                v.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0).ok_or(format!("{what} must be a number at least 0, got \"{}\"", clip(v)))
            };
            let (s, p) = (num(s, "size").map_err(|m| (i + 1, m))?, num(p, "percent").map_err(|m| (i + 1, m))?);
            if p > 100.0 {
                return Err((i + 1, format!("percent must be at most 100, got {p}")));
            }
            if let Some(&(ls, lp)) = points.last() {
                if s < ls || p < lp {
                    return Err((i + 1, "sizes and percents must not decrease".into()));
                }
            }
            points.push((s, p));
        }
        match points.last() {
            None => Err((1, "the distribution has no points".into())),
            Some(&(_, p)) if p != 100.0 => Err((text.lines().count(), format!("the last percent must be 100, got {p}"))),
            Some(&(s, _)) if s < 1.0 => Err((text.lines().count(), "the largest size must be at least 1 byte".into())),
            _ => Ok(Cdf { points }),
        }
    }

    /// A shipped distribution by name.
    pub fn named(name: &str) -> Option<Cdf> {
        let text = match name {
            "websearch" => include_str!("cdf/websearch.txt"),
            "hadoop" => include_str!("cdf/hadoop.txt"),
            _ => return None,
        };
        Some(Cdf::parse(text).expect("shipped distributions parse"))
    }

    /// The largest size in bytes.
    pub fn max(&self) -> f64 {
        self.points[self.points.len() - 1].0
    }

    /// Mean size in bytes.
    pub fn mean(&self) -> f64 {
        let mut m = 0.0;
        let mut prev = (self.points[0].0, 0.0);
        for &(s, p) in &self.points {
            m += (p - prev.1) / 100.0 * (s + prev.0) / 2.0;
            prev = (s, p);
        }
        m
    }

    /// The fraction of flows of at most `size` bytes.
    pub fn at(&self, size: f64) -> f64 {
        let mut prev = (self.points[0].0, 0.0);
        for &(s, p) in &self.points {
            if size < s {
                if size < prev.0 {
                    return prev.1 / 100.0;
                }
                return (prev.1 + (p - prev.1) * (size - prev.0) / (s - prev.0)) / 100.0;
            }
            prev = (s, p);
        }
        1.0
    }

    /// The size at cumulative fraction `u` in [0, 1) (linear between points).
    pub fn size_at(&self, u: f64) -> f64 {
        let pct = u * 100.0;
        let mut prev = (self.points[0].0, 0.0);
        for &(s, p) in &self.points {
            if pct < p {
                return prev.0 + (s - prev.0) * (pct - prev.1) / (p - prev.1);
            }
            prev = (s, p);
        }
        prev.0
    }
}

/// A value quoted in a message, cut to 40 characters.
fn clip(v: &str) -> String {
    match v.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &v[..i]),
        None => v.to_string(),
    }
}

/// Natural logarithm from basic arithmetic only, so that flow arrival times
/// are the same on every machine (a platform's `ln` may differ in the last
/// bit). `x` > 0.
fn ln(x: f64) -> f64 {
    const LN2: f64 = std::f64::consts::LN_2;
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64 - 1023;
    // m in [1, 2): ln x = exp ln 2 + ln m, and ln m = 2 atanh((m - 1) / (m + 1)).
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let (mut term, mut sum) = (z, 0.0);
    for k in 0..40 {
        sum += term / (2 * k + 1) as f64;
        term *= z2;
    }
    exp as f64 * LN2 + 2.0 * sum
}

/// A draw of the exponential distribution of mean 1: -ln(1 - U), U in [0, 1).
pub(crate) fn exponential(rng: &mut Stream) -> f64 {
    -ln(1.0 - rng.unit())
}

/// The rate of host `h`'s link (its only link).
pub(crate) fn host_rate(topo: &TopologySpec, h: u32) -> u64 {
    topo.links.iter().find(|l| l.a == NodeRef::Host(h) || l.b == NodeRef::Host(h)).map_or(0, |l| l.rate.0)
}

pub fn expand(c: &PoissonConfig, ctx: &Ctx, flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    let err = ctx.err;
    if !(c.load > 0.0 && c.load <= 10.0) {
        return Err(err("load", format!("load must be above 0 and at most 10 (a fraction of the link rate), got {}", c.load)));
    }
    if c.duration.0 == 0 {
        return Err(err("duration", "duration must be above zero".into()));
    }
    let cdf = match Cdf::named(&c.cdf) {
        Some(d) => d,
        None => {
            let path = relative_to(ctx.base_dir, &c.cdf);
            let fname = path.display().to_string();
            let text = std::fs::read_to_string(&path).map_err(|e| {
                err("cdf", format!("\"{}\" is neither a shipped distribution (websearch, hadoop) nor a readable file: {e}", clip(&c.cdf)))
            })?;
            Cdf::parse(&text).map_err(|(line, m)| InputError::new(fname, None, Some((line, 1)), m))?
        }
    };
    if let Some(m) = super::size_error(cdf.max().ceil() as u64, ctx.mtu) {
        return Err(err("cdf", format!("the distribution's largest size: {m}")));
    }
    let hs = hosts_of(ctx.topo, &c.hosts, err)?;
    if hs.len() < 2 {
        return Err(err("hosts", "Poisson traffic needs at least two hosts".into()));
    }
    let end = c.start.0.checked_add(c.duration.0).ok_or_else(|| err("duration", "start + duration is beyond the largest time".into()))?;
    let mean = cdf.mean();
    let tag = label(&c.name, "poisson", ctx.idx);
    let mut rng = Stream::new(ctx.seed, ctx.idx as u64, Purpose::Workload);
    // The expected number of flows, refused before generating when it could not fit in memory.
    let expected: f64 = hs.iter().map(|&h| c.load * host_rate(ctx.topo, h) as f64 / (8.0 * mean) * ((end - c.start.0) as f64 / PS_PER_S as f64)).sum();
    if expected + (ctx.first + flows.len() as u64) as f64 > ctx.max_flows as f64 {
        return Err(err("load", format!("this workload would generate about {expected:.3e} flows: {}; lower its load or duration", super::too_many_flows(ctx.max_flows))));
    }
    let first = flows.len();
    for (pos, &h) in hs.iter().enumerate() {
        // Flows per picosecond at this host.
        let per_ps = c.load * host_rate(ctx.topo, h) as f64 / (8.0 * mean) / PS_PER_S as f64;
        let mut t = c.start.0 as f64;
        loop {
            t += exponential(&mut rng) / per_ps;
            if t >= end as f64 {
                break;
            }
            // Arrivals are random: the expectation above is not a bound.
            if ctx.first + flows.len() as u64 >= ctx.max_flows {
                return Err(err("load", super::too_many_flows(ctx.max_flows)));
            }
            // Uniform among the other hosts: skip the sender's own position.
            let d = rng.below(hs.len() as u64 - 1) as usize;
            let dst = hs[if d >= pos { d + 1 } else { d }];
            let size = cdf.size_at(rng.unit()).round().max(1.0) as u64;
            flows.push(FlowSpec { src: HostId(h), dst: HostId(dst), size, start: Time(t as u64), name: tag.clone(), rate_cap: u64::MAX, channel: 0 });
        }
    }
    // Flow ids in order of start time (ties by host).
    flows[first..].sort_by_key(|f| (f.start.0, f.src.0));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_from_arithmetic_matches_the_platform_to_the_last_bits() {
        for &x in &[1e-300, 1e-12, 0.001, 0.5, 0.999_999, 1.0, 1.5, 2.0, 10.0, 12345.678, 1e300] {
            let (a, b) = (ln(x), x.ln());
            assert!((a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(1.0), "ln({x}) = {a}, platform {b}");
        }
    }

    #[test]
    fn shipped_distributions_have_their_published_means() {
        // Summed by hand, segment by segment: share x midpoint.
        // websearch: 750 + 750 + 2,500 + 4,000 + 8,450 + 9,800 + 60,000
        //   + 150,000 + 350,000 + 525,000 + 600,000.
        let ws = Cdf::named("websearch").unwrap();
        assert!((ws.mean() - 1_711_250.0).abs() < 1e-6, "{}", ws.mean());
        // hadoop: 920.75 below 30 KB, then 4,000 + 3,250 + 3,000 + 10,500
        //   + 16,250 + 22,500 + 60,000.
        let hd = Cdf::named("hadoop").unwrap();
        assert!((hd.mean() - 120_420.75).abs() < 1e-6, "{}", hd.mean());
    }

    #[test]
    fn size_at_inverts_at() {
        let ws = Cdf::named("websearch").unwrap();
        for k in 0..1000 {
            let u = k as f64 / 1000.0;
            let s = ws.size_at(u);
            assert!((ws.at(s) - u).abs() < 1e-9, "u {u} size {s} back {}", ws.at(s));
        }
        assert_eq!(ws.at(0.0), 0.0);
        assert_eq!(ws.at(30_000_000.0), 1.0);
        assert_eq!(ws.at(15_000.0), 0.175);
    }

    #[test]
    fn bad_distributions_name_the_line() {
        assert_eq!(Cdf::parse("0 0\n10 50\n5 100\n").unwrap_err().0, 3);
        assert_eq!(Cdf::parse("0 0\n10 50\n").unwrap_err().0, 2);
        assert!(Cdf::parse("# nothing\n").unwrap_err().1.contains("no points"));
        assert!(Cdf::parse("0 0\nten 100\n").unwrap_err().1.contains("size must be a number"));
        assert!(Cdf::parse("0 0\n10 120\n").unwrap_err().1.contains("at most 100"));
        assert!(Cdf::parse("0 0 0\n").unwrap_err().1.contains("expected"));
    }
}

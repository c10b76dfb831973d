//! A sweep's points: axis groups crossed, seeds innermost, each point's
//! scenario loaded and checked, and its id.

use super::file::MAX;
use super::{describe, point_id, Error, Point, Sweep};
use crate::scenario::{self, InputError, Override};
use std::collections::BTreeMap;
use std::path::Path;

impl Sweep {
    /// How messages name the sweep: its file, or its name.
    pub fn source(&self) -> String {
        self.file.as_ref().map_or_else(|| self.name.clone(), |f| f.display().to_string())
    }

    fn file_text(&self) -> String {
        self.file.as_ref().map(|f| f.display().to_string()).unwrap_or_default()
    }

    /// The points in order: axis groups crossed (the last varies fastest),
    /// seeds innermost. Every point's scenario is loaded and checked; two
    /// points that resolve to the same scenario are refused.
    pub fn points(&self) -> Result<Vec<Point>, Error> {
        let seeds = match &self.seeds {
            Some(s) => s.clone(),
            None => vec![scenario::load_file(&self.scenario, &self.overrides(&[])?, None).map_err(Error::Point)?.seed],
        };
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (n, a) in self.axes.iter().enumerate() {
            match groups.iter_mut().find(|g| g.0 == a.group) {
                Some(g) => g.1.push(n),
                None => groups.push((a.group.clone(), vec![n])),
            }
        }
        let sizes: Vec<usize> = groups.iter().map(|g| self.axes[g.1[0]].values.len()).collect();
        let combos: usize = sizes.iter().product();
        if combos.saturating_mul(seeds.len()) > MAX {
            return Err(Error::Sweep(InputError::new(self.file_text(), Some("axis".into()), None, "the sweep has more than a million points")));
        }
        let base = self.scenario.parent().unwrap_or(Path::new(""));
        let mut points = Vec::with_capacity(combos * seeds.len());
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for c in 0..combos {
            // Mixed-radix digits of c, the last group fastest.
            let mut rest = c;
            let mut pick = vec![0; groups.len()];
            for g in (0..groups.len()).rev() {
                pick[g] = rest % sizes[g];
                rest /= sizes[g];
            }
            let mut axes: Vec<(String, String)> = Vec::new();
            for (g, (_, members)) in groups.iter().enumerate() {
                for &a in members {
                    axes.push((self.axes[a].key.clone(), self.axes[a].values[pick[g]].clone()));
                }
            }
            // Back to axis order, whatever the grouping.
            axes.sort_by_key(|(k, _)| self.axes.iter().position(|a| &a.key == k));
            let overrides = self.overrides(&axes)?;
            for &seed in &seeds {
                let sc = scenario::load_file(&self.scenario, &overrides, Some(seed))
                    .map_err(|e| Error::Point(InputError { msg: format!("{} (in sweep {}, point {})", e.msg, self.source(), describe(&axes, seed)), ..e }))?;
                let id = point_id(&sc.resolved_toml, base);
                if let Some(&other) = seen.get(&id) {
                    return Err(Error::Sweep(InputError::new(
                        self.file_text(),
                        Some("axis".into()),
                        None,
                        format!("point {} ({}) resolves to the same scenario as point {other}: a value is listed twice", points.len(), describe(&axes, seed)),
                    )));
                }
                seen.insert(id.clone(), points.len());
                let overrides = overrides.iter().map(|o| format!("{}={}", o.key, o.value)).collect();
                points.push(Point { id, seed, axes: axes.clone(), overrides });
            }
        }
        Ok(points)
    }

    /// A point's scenario as it runs (`scenario.toml` of its run directory).
    pub fn point_scenario(&self, p: &Point) -> Result<String, Error> {
        let ov: Result<Vec<Override>, InputError> = p.overrides.iter().map(|o| Override::parse(o)).collect();
        Ok(scenario::load_file(&self.scenario, &ov?, Some(p.seed)).map_err(Error::Point)?.resolved_toml)
    }

    /// The `[set]` overrides not replaced by an axis, then the axes.
    fn overrides(&self, axes: &[(String, String)]) -> Result<Vec<Override>, InputError> {
        let fixed = self.set.iter().filter(|(k, _)| !axes.iter().any(|a| &a.0 == k));
        fixed
            .chain(axes.iter())
            .map(|(k, v)| Override::parse(&format!("{k}={v}")).map_err(|e| InputError::new(self.file_text(), Some(k.clone()), None, e.msg)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse, Source};
    use super::*;

    fn sweep(text: &str) -> Result<Sweep, InputError> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/sweeps");
        parse(&Source { text, file: Some(&dir.join("t.toml")), base_dir: &dir, stem: "t", replace: &[] })
    }

    #[test]
    fn ranges_include_their_stop() {
        let s = sweep("scenario = \"../two_hosts.toml\"\n[[axis]]\nkey = \"a\"\nrange = { start = 0.1, stop = 0.5, step = 0.1 }\n[[axis]]\nkey = \"b\"\nrange = { start = 2, stop = 10, step = 4 }\n[[axis]]\nkey = \"c\"\nrange = { start = 0, stop = 1, count = 3 }\n").unwrap();
        assert_eq!(s.axes[0].values.len(), 5);
        assert_eq!(s.axes[1].values, ["2", "6", "10"]);
        assert_eq!(s.axes[2].values, ["0.0", "0.5", "1.0"]);
    }

    #[test]
    fn zipped_axes_need_equal_lengths() {
        let e = sweep("scenario = \"../two_hosts.toml\"\nmode = \"zip\"\n[[axis]]\nkey = \"a\"\nvalues = [1, 2]\n[[axis]]\nkey = \"b\"\nvalues = [1]\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("axis[1].values"));
        assert!(e.line_col.is_some());
    }

    #[test]
    fn points_cross_groups_and_zip_within_one() {
        let s = sweep("scenario = \"../two_hosts.toml\"\nseeds = [1, 2]\n[[axis]]\nkey = \"transport.mtu\"\nvalues = [1024, 2048]\ngroup = \"g\"\n[[axis]]\nkey = \"transport.ack_every\"\nvalues = [1, 2]\ngroup = \"g\"\n[[axis]]\nkey = \"monitor.window\"\nvalues = [\"10us\", \"20us\"]\n").unwrap();
        let p = s.points().unwrap();
        let d: Vec<String> = p.iter().map(Point::describe).collect();
        assert_eq!(
            d,
            [
                "transport.mtu=1024 transport.ack_every=1 monitor.window=\"10us\" seed=1",
                "transport.mtu=1024 transport.ack_every=1 monitor.window=\"10us\" seed=2",
                "transport.mtu=1024 transport.ack_every=1 monitor.window=\"20us\" seed=1",
                "transport.mtu=1024 transport.ack_every=1 monitor.window=\"20us\" seed=2",
                "transport.mtu=2048 transport.ack_every=2 monitor.window=\"10us\" seed=1",
                "transport.mtu=2048 transport.ack_every=2 monitor.window=\"10us\" seed=2",
                "transport.mtu=2048 transport.ack_every=2 monitor.window=\"20us\" seed=1",
                "transport.mtu=2048 transport.ack_every=2 monitor.window=\"20us\" seed=2",
            ]
        );
        assert!(s.point_scenario(&p[4]).unwrap().contains("mtu = 2048"));
    }

    /// Keys given beside the file replace its own, as inline values, and
    /// their errors carry no line of the file.
    #[test]
    fn replaced_keys_win_and_are_not_located() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/sweeps");
        let text = "scenario = \"../two_hosts.toml\"\nseeds = [1]\n";
        let replace = [
            ("seeds".to_string(), "[4, 5]".to_string()),
            ("axis".to_string(), "[{ key = \"transport.mtu\", values = [1024, 2048] }]".to_string()),
            ("timeout".to_string(), "2.5".to_string()),
        ];
        let s = parse(&Source { text, file: Some(&dir.join("t.toml")), base_dir: &dir, stem: "t", replace: &replace }).unwrap();
        assert_eq!(s.seeds, Some(vec![4, 5]));
        assert_eq!(s.axes[0].values, ["1024", "2048"]);
        assert_eq!(s.timeout, Some(std::time::Duration::from_millis(2500)));
        // A sweep given only as keys (Python's dict) names no file.
        let keys = [("scenario".to_string(), format!("{:?}", dir.join("../two_hosts.toml").display().to_string())), ("mode".to_string(), "\"diagonal\"".to_string())];
        let e = parse(&Source { text: "", file: None, base_dir: &dir, stem: "sweep", replace: &keys }).unwrap_err();
        assert_eq!((e.file.as_str(), e.key.as_deref(), e.line_col), ("", Some("mode"), None));
        let replace = [("retries".to_string(), "\"x\"".to_string())];
        let e = parse(&Source { text, file: Some(&dir.join("t.toml")), base_dir: &dir, stem: "t", replace: &replace }).unwrap_err();
        assert_eq!((e.key.as_deref(), e.line_col), (Some("retries"), None));
    }
}

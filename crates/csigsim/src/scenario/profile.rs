//! Compatibility profiles: `profile = "htsim-uec"` or `profile = "ns3-rdma"`
//! at the top of a scenario fills every key the scenario leaves unset with
//! the reference simulator's behaviour and defaults, so that an experiment
//! ported from it gets the same model. Keys the scenario sets (in the file
//! or with `--set`) always win. docs/profiles.md lists every key each profile
//! sets and why.

use crate::de::InputError;
use toml_edit::{DocumentMut, Item};

/// A profile: its name and the keys it sets, as a TOML document.
pub struct Profile {
    pub name: &'static str,
    pub about: &'static str,
    pub toml: &'static str,
}

/// The profiles, in the order `csigsim list` shows them.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "htsim-uec",
        about: "htsim's UEC model (ultraethernet/uet-htsim): NSCC, trimming, spraying, dequeue ECN marking",
        toml: include_str!("profiles/htsim-uec.toml"),
    },
    Profile {
        name: "ns3-rdma",
        about: "the ns-3 RDMA simulator of the HPCC paper: PFC, its run script's congestion-control settings",
        toml: include_str!("profiles/ns3-rdma.toml"),
    },
];

/// The scenario text with its profile's keys filled in where the scenario
/// leaves them unset, or `None` when it names no profile. `text` is the
/// scenario after `--set` overrides; `locate` finds a key in it for errors.
pub fn apply(text: &str, file: &str, locate: impl Fn(&str) -> Option<(usize, usize)>) -> Result<Option<String>, InputError> {
    // A syntax error is reported by the main parser, with its position.
    let Ok(mut doc) = text.parse::<DocumentMut>() else { return Ok(None) };
    let Some(item) = doc.get("profile") else { return Ok(None) };
    let err = |m: String| InputError::new(file, Some("profile".into()), locate("profile"), m);
    let Some(name) = item.as_str() else {
        return Err(err("profile must be a string".into()));
    };
    let Some(p) = PROFILES.iter().find(|p| p.name == name) else {
        let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
        return Err(err(format!("unknown profile \"{name}\"; profiles: {}", names.join(", "))));
    };
    let preset: DocumentMut = p.toml.parse().expect("a built-in profile is valid TOML");
    fill(doc.as_item_mut(), preset.as_item());
    Ok(Some(doc.to_string()))
}

/// Inserts into `user` every key of `preset` it lacks, descending into
/// tables both have.
fn fill(user: &mut Item, preset: &Item) {
    let (Some(u), Some(p)) = (user.as_table_like_mut(), preset.as_table_like()) else { return };
    for (k, pv) in p.iter() {
        match u.get_mut(k) {
            None => {
                u.insert(k, pv.clone());
            }
            Some(uv) => {
                if uv.is_table_like() && pv.is_table_like() {
                    fill(uv, pv);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(text: &str) -> toml::Table {
        let out = apply(text, "t.toml", |_| None).unwrap().expect("a profile");
        toml::from_str(&out).unwrap()
    }

    #[test]
    fn the_profile_fills_only_what_the_scenario_leaves_unset() {
        let t = filled("profile = \"htsim-uec\"\n[switch]\nrouting = \"ecmp\"\n[transport]\nack_every = 2\n");
        let sw = t["switch"].as_table().unwrap();
        assert_eq!(sw["routing"].as_str(), Some("ecmp"), "the scenario's key wins");
        assert_eq!(sw["mode"].as_str(), Some("trim"), "the profile fills an unset key");
        assert_eq!(t["transport"]["ack_every"].as_integer(), Some(2));
        assert_eq!(t["transport"]["cc"].as_str(), Some("nscc"));
    }

    #[test]
    fn no_profile_leaves_the_text_alone_and_bad_names_are_refused() {
        assert!(apply("[switch]\nmode = \"pfc\"\n", "t.toml", |_| None).unwrap().is_none());
        let e = apply("profile = \"ns3\"\n", "t.toml", |_| Some((1, 11))).unwrap_err().to_string();
        assert!(e.contains("t.toml:1:11") && e.contains("htsim-uec") && e.contains("ns3-rdma"), "{e}");
        let e = apply("profile = 3\n", "t.toml", |_| None).unwrap_err().to_string();
        assert!(e.contains("must be a string"), "{e}");
    }

    #[test]
    fn every_profile_is_a_valid_partial_scenario() {
        for p in PROFILES {
            let text = format!("profile = \"{}\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n", p.name);
            crate::scenario::load_str(&text, p.name, std::path::Path::new("."), &[], None).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
    }
}

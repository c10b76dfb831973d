//! Workload generators expand into the flows they promise.

use crate::common::load;
use std::path::Path;

const FT: &str = "name = \"w\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n";

#[test]
fn permutation_is_a_derangement_of_all_hosts() {
    let sc = load(&format!("{FT}[[workload]]\nkind = \"permutation\"\nsize = \"1MB\"\nstart = \"5us\"\n"));
    assert_eq!(sc.flow_specs().len(), 16);
    let mut dsts: Vec<u32> = sc.flow_specs().iter().map(|f| f.dst.0).collect();
    dsts.sort();
    assert_eq!(dsts, (0..16).collect::<Vec<_>>());
    assert!(sc.flow_specs().iter().all(|f| f.src != f.dst && f.size == 1_000_000 && f.start.0 == 5_000_000));
    // A different seed draws a different permutation.
    let other = crate::common::load_with(&format!("{FT}[[workload]]\nkind = \"permutation\"\nsize = \"1MB\"\n"), &["seed=2"]);
    assert_ne!(other.flow_specs().iter().map(|f| f.dst).collect::<Vec<_>>(), sc.flow_specs().iter().map(|f| f.dst).collect::<Vec<_>>());
}

#[test]
fn incast_and_all_to_all_counts() {
    let sc = load(&format!("{FT}[[workload]]\nkind = \"incast\"\nreceiver = \"h3\"\ncount = 5\nsize = 1000\n"));
    assert_eq!(sc.flow_specs().iter().map(|f| f.src.0).collect::<Vec<_>>(), vec![4, 5, 6, 7, 8]);
    assert!(sc.flow_specs().iter().all(|f| f.dst.0 == 3));
    let sc = load(&format!("{FT}[[workload]]\nkind = \"incast\"\nreceiver = 0\nsize = 1000\n"));
    assert_eq!(sc.flow_specs().len(), 15);
    let sc = load(&format!("{FT}[[workload]]\nkind = \"all_to_all\"\nhosts = [0, 1, \"h2\", 5]\nsize = \"4KiB\"\n"));
    assert_eq!(sc.flow_specs().len(), 12);
    assert!(sc.flow_specs().iter().all(|f| f.size == 4096));
}

#[test]
fn generator_errors_name_their_key() {
    let e = csigsim::scenario::load_str(
        &format!("{FT}[[workload]]\nkind = \"incast\"\nreceiver = \"h3\"\ncount = 99\nsize = 1000\n"),
        "w.toml",
        Path::new("."),
        &[],
        None,
    )
    .unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload[0].count"), "{e}");
    assert_eq!(e.line_col.map(|p| p.0), Some(8), "{e}");
}

#[test]
fn trace_files_load_with_names_indices_and_units() {
    let dir = std::env::temp_dir().join(format!("csigsim-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.csv"), "# a comment\nsrc,dst,size,start,name\nh0,h5,2MB,10us,a\n3,1,4096,,b\n").unwrap();
    let text = format!("{FT}[[workload]]\nkind = \"trace\"\nfile = \"t.csv\"\n");
    let sc = csigsim::scenario::load_str(&text, "s.toml", &dir, &[], None).unwrap();
    assert_eq!(sc.flow_specs().len(), 2);
    assert_eq!((sc.flow_specs()[0].src.0, sc.flow_specs()[0].dst.0, sc.flow_specs()[0].size, sc.flow_specs()[0].start.0), (0, 5, 2_000_000, 10_000_000));
    assert_eq!((sc.flow_specs()[1].src.0, sc.flow_specs()[1].dst.0, sc.flow_specs()[1].size, sc.flow_specs()[1].start.0), (3, 1, 4096, 0));
    assert_eq!(sc.flow_specs()[1].name, "b");
    std::fs::write(dir.join("t.csv"), "src,dst,size,start\nh0,h5,2MB,10us\nh0,h99,1MB,0us\n").unwrap();
    let e = csigsim::scenario::load_str(&text, "s.toml", &dir, &[], None).unwrap_err();
    assert!(e.file.ends_with("t.csv"), "{e}");
    assert_eq!(e.key.as_deref(), Some("dst"));
    assert_eq!(e.line_col.map(|p| p.0), Some(3), "{e}");
    let e = csigsim::scenario::load_str(&text.replace("t.csv", "missing.csv"), "s.toml", &dir, &[], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload[0].file"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

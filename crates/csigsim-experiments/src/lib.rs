//! What csigsim runs on itself, apart from the engine: the source
//! documents' experiments ([`repro`], `csigsim repro`) and the fixed
//! benchmark set ([`bench`], `csigsim bench`).
//!
//! The scenarios the experiments use are built in, from copies of the
//! repository's `scenarios/` kept in this crate (the test `scenarios`
//! checks they are byte-identical), so that the commands run anywhere.

pub mod bench;
pub mod repro;

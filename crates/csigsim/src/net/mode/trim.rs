//! `trim`: the buffer is managed as in `lossy`, but a data packet that does
//! not fit is cut to `switch.trim_size` bytes and forwarded in the control
//! class; its receiver NACKs it (UEC packet trimming).

use super::Refusal;

pub use super::lossy::{admit, admits_after, release};

pub const ON_REFUSE: Refusal = Refusal::Trim;
pub const HEADROOM: bool = false;

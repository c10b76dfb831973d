//! Switch modes: what a switch does with a data packet when it arrives (admit
//! it to the buffer or not), when it leaves (release its buffer), and when it
//! does not fit (drop or trim). One file per mode; the registry line below
//! gives its scenario name (`switch.mode`), its description for
//! `csigsim list`, and the dispatch.

pub mod lossy;
pub mod pfc;
pub mod trim;

use super::{Port, Switch};
use crate::id::PortId;
use serde::Deserialize;

/// A buffer decision on a data packet's arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Admitted; send XOFF upstream through the ingress port if true.
    Admitted { send_xoff: bool },
    Refused,
}

/// What happens to a data packet that was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    Drop,
    /// Cut to its header and forwarded in the control class.
    Trim,
}

macro_rules! modes {
    ($( ($Variant:ident, $module:ident, $name:literal, $desc:literal) ),* $(,)?) => {
        /// `switch.mode`.
        #[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
        pub enum SwitchMode {
            #[default]
            $( #[serde(rename = $name)] $Variant, )*
        }

        /// Every switch mode this build knows, for `csigsim list`.
        pub const KINDS: &[(&str, &str)] = &[ $( ($name, $desc), )* ];

        impl SwitchMode {
            /// The name scenarios and outputs use.
            pub fn name(self) -> &'static str {
                match self { $( SwitchMode::$Variant => $name, )* }
            }

            /// May `wire` bytes arriving through `in_port` join the data queue of `out`?
            #[inline]
            pub fn admit(self, s: &mut Switch, ports: &mut [Port], in_port: PortId, out: PortId, wire: u64) -> Admission {
                match self { $( SwitchMode::$Variant => $module::admit(s, ports, in_port, out, wire), )* }
            }

            /// A data packet of `wire` bytes that arrived through `in_port`
            /// leaves the queue of `out`. Returns true when `in_port` should
            /// send XON upstream. Inlined: once per packet sent, and left a
            /// call it took 30 instructions, 7 of them the mode's accounting.
            #[inline(always)]
            pub fn release(self, s: &mut Switch, ports: &mut [Port], in_port: PortId, out: PortId, wire: u64) -> bool {
                match self { $( SwitchMode::$Variant => $module::release(s, ports, in_port, out, wire), )* }
            }

            /// What happens to a packet that was refused.
            #[inline]
            pub fn on_refuse(self) -> Refusal {
                match self { $( SwitchMode::$Variant => $module::ON_REFUSE, )* }
            }

            /// Does the mode reserve PFC headroom per ingress port?
            pub fn headroom(self) -> bool {
                match self { $( SwitchMode::$Variant => $module::HEADROOM, )* }
            }
        }
    };
}

modes! {
    (Lossy, lossy, "lossy", "drop-tail: a data packet that does not fit the shared buffer (dynamic threshold per egress queue) is dropped"),
    (Pfc, pfc, "pfc", "lossless: per-ingress PAUSE/RESUME frames keep the buffer from overflowing"),
    (Trim, trim, "trim", "a data packet that does not fit is cut to its header and forwarded at high priority (UEC trimming)"),
}

/// Shared bytes a queue of `q` bytes holds beyond its reservation.
#[inline]
pub(crate) fn over(q: u64, reserved: u64) -> u64 {
    q.saturating_sub(reserved)
}

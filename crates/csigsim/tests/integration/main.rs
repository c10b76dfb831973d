//! Integration tests, compiled into one binary.

mod cc_dumbbell;
mod collectives;
mod common;
mod dcqcn_rev;
mod dctcp_modes;
mod determinism;
mod docs_tables;
mod ecn_rules;
mod fairness;
mod fct;
mod golden;
mod host_lb;
mod incast;
mod input_errors;
mod mcc;
mod poisson;
mod routing;
mod repro;
mod rpc;
mod scenarios;
mod signals;
mod switch_models;
mod streaming;
mod tables;
mod watchdog;
mod workloads;

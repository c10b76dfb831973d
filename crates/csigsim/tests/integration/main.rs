//! Integration tests, compiled into one binary.

mod common;
mod determinism;
mod fairness;
mod fct;
mod incast;
mod input_errors;
mod routing;
mod scenarios;
mod signals;
mod workloads;

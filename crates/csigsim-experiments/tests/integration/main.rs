//! Integration tests, compiled into one binary.

mod golden;
mod repro;
mod scenarios;

//! MCC on sprayed traffic: partial versus global congestion.

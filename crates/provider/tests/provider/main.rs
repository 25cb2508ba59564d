//! Integration tests of the provider against the loopback mock server.
//! Nothing here reaches beyond 127.0.0.1.

// Tests may unwrap: a failure is the point.
#![allow(clippy::unwrap_used)]

mod anthropic;
mod failures;
mod mock_server;
mod reply_limit;
mod responses;
mod settings;
mod streaming;
mod support;

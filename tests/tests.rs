//! End-to-end tests: the real `dsh` binary and the real loop over fixtures.

mod support;

mod cli_replay;
mod native_fixtures;
mod replay_fixtures;

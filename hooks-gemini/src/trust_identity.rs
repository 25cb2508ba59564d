//! The typed identity dsh trust records for a Gemini project hook.

/// What dsh's trust store hashes for one Gemini project hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustIdentity {}

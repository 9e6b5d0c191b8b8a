//! The errors of checking a signature.

pub(crate) use crate::runtime::{Result, RuntimeError};

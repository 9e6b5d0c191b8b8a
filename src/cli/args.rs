//! A small argument reader shared by the subcommands: positionals, `--flag` and `--key VALUE`.

use super::CliError;

/// Why an option's value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// Not a decimal or `0x`-hexadecimal number.
    #[error("expected a decimal or 0x-hexadecimal number")]
    NotANumber,
    /// A number too wide for where it goes.
    #[error("{value} does not fit {field}")]
    TooWide {
        /// The number.
        value: u64,
        /// Where it goes (`in 32 bits`, `the 3-bit field`).
        field: &'static str,
    },
    /// Not `ROWSxBYTES`.
    #[error("expected ROWSxBYTES")]
    NotATileSize,
    /// A name the option does not know (a target, a type, a mode), with the parser's words.
    #[error("{0}")]
    Unknown(String),
}

/// Arguments split into positionals and options, consumed by the subcommand as it reads them.
/// [`Args::finish`] rejects anything left over, so a misspelt option is an error, not ignored.
#[derive(Debug, Clone)]
pub struct Args {
    items: Vec<Option<String>>,
}

impl Args {
    /// Wraps the arguments after the subcommand's name.
    pub fn new(args: &[String]) -> Args {
        Args {
            items: args.iter().cloned().map(Some).collect(),
        }
    }

    /// Takes `--name` if present.
    pub fn flag(&mut self, name: &str) -> bool {
        for item in &mut self.items {
            if item.as_deref() == Some(name) {
                *item = None;
                return true;
            }
        }
        false
    }

    /// Takes `--name VALUE` (or `--name=VALUE`) if present; an option without its value is an error.
    pub fn value(&mut self, name: &str) -> Result<Option<String>, CliError> {
        let prefix = format!("{name}=");
        for i in 0..self.items.len() {
            let Some(item) = self.items[i].as_deref() else {
                continue;
            };
            if item == name {
                self.items[i] = None;
                return match self.items.get_mut(i + 1).and_then(Option::take) {
                    Some(v) => Ok(Some(v)),
                    None => Err(CliError::usage(format!("{name} needs a value"))),
                };
            }
            if let Some(v) = item.strip_prefix(&prefix) {
                let v = v.to_string();
                self.items[i] = None;
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    /// Takes `--name VALUE` and parses it with `parse`, naming the option in the error.
    pub fn parsed<T>(
        &mut self,
        name: &str,
        parse: impl FnOnce(&str) -> Result<T, ValueError>,
    ) -> Result<Option<T>, CliError> {
        match self.value(name)? {
            Some(v) => parse(&v)
                .map(Some)
                .map_err(|e| CliError::usage(format!("{name} {v}: {e}"))),
            None => Ok(None),
        }
    }

    /// [`Args::parsed`] for an option that must be given: its absence is a usage error that names
    /// the subcommand (`desc: --addr is required`).
    pub fn required<T>(
        &mut self,
        command: &str,
        name: &str,
        parse: impl FnOnce(&str) -> Result<T, ValueError>,
    ) -> Result<T, CliError> {
        self.parsed(name, parse)?
            .ok_or_else(|| CliError::usage(format!("{command}: {name} is required")))
    }

    /// Takes every remaining positional argument (those not starting with `--`).
    pub fn positionals(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for item in &mut self.items {
            if item
                .as_deref()
                .is_some_and(|s| !s.starts_with("--") || s == "--")
            {
                if let Some(s) = item.take() {
                    out.push(s);
                }
            }
        }
        out
    }

    /// Errors on the first argument nobody took.
    pub fn finish(self) -> Result<(), CliError> {
        match self.items.into_iter().flatten().next() {
            Some(extra) => Err(CliError::usage(format!("unexpected argument `{extra}`"))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Args {
        Args::new(&s.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn reads_flags_values_and_positionals() {
        let mut a = args(&["x", "--values", "--target", "sm_90a", "y", "--out=f.ptx"]);
        assert!(a.flag("--values"));
        assert_eq!(a.value("--target").unwrap().as_deref(), Some("sm_90a"));
        assert_eq!(a.value("--out").unwrap().as_deref(), Some("f.ptx"));
        assert_eq!(a.positionals(), vec!["x", "y"]);
        a.finish().unwrap();
    }

    #[test]
    fn leftovers_and_missing_values_are_errors() {
        let mut a = args(&["--target"]);
        assert_eq!(a.value("--target").unwrap_err().code, 2);
        let a = args(&["--bogus"]);
        assert!(a.finish().unwrap_err().message.contains("--bogus"));
    }
}

//! The syntax patterns of the form table: `add{.rn|.rz}{.ftz}.{f32|f64} d, a, b{, c}`.
//!
//! A pattern is the opcode, a space, and the operands. In the opcode, `.x` is a required modifier,
//! `.{x|y}` a required choice, `{.x|.y.z}` an optional choice (each choice one or more modifiers).
//! A `*` inside a modifier stands for a decimal number (`m64n*k16`, `x*`); the builder checks the
//! number's range.
//! In the operands, each comma-separated name is one operand and a trailing `{, x}` group is optional.
//! The same patterns document the forms, let tests check that the builder writes what the table says,
//! and let the validator recognise parsed instructions.

/// One element of an opcode pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Element {
    /// A required choice among sequences of modifiers (a plain modifier is a choice of one).
    Required(Vec<Vec<String>>),
    /// An optional choice.
    Optional(Vec<Vec<String>>),
}

/// A parsed syntax pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    mnemonic: String,
    elements: Vec<Element>,
    min_operands: usize,
    max_operands: usize,
}

/// Why a pattern string is malformed (a bug in the table; tests parse every row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(pub String);

fn choices(body: &str) -> Result<Vec<Vec<String>>, PatternError> {
    body.split('|')
        .map(|alt| {
            let alt = alt.trim();
            let parts: Vec<String> = alt
                .strip_prefix('.')
                .unwrap_or(alt)
                .split('.')
                .map(str::to_string)
                .collect();
            if parts.iter().any(String::is_empty) {
                Err(PatternError(format!("empty modifier in `{body}`")))
            } else {
                Ok(parts)
            }
        })
        .collect()
}

impl Pattern {
    /// Parses a pattern.
    pub fn parse(syntax: &str) -> Result<Pattern, PatternError> {
        let (opcode, operands) = match syntax.split_once(' ') {
            Some((o, rest)) => (o, rest.trim()),
            None => (syntax, ""),
        };
        let mnemonic_end = opcode.find(['.', '{']).unwrap_or(opcode.len());
        let mnemonic = opcode[..mnemonic_end].to_string();
        if mnemonic.is_empty() {
            return Err(PatternError(format!("no mnemonic in `{syntax}`")));
        }
        let mut elements = Vec::new();
        let mut rest = &opcode[mnemonic_end..];
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('{') {
                let end = r
                    .find('}')
                    .ok_or_else(|| PatternError(format!("unclosed `{{` in `{syntax}`")))?;
                elements.push(Element::Optional(choices(&r[..end])?));
                rest = &r[end + 1..];
            } else if let Some(r) = rest.strip_prefix(".{") {
                let end = r
                    .find('}')
                    .ok_or_else(|| PatternError(format!("unclosed `{{` in `{syntax}`")))?;
                elements.push(Element::Required(choices(&r[..end])?));
                rest = &r[end + 1..];
            } else if let Some(r) = rest.strip_prefix('.') {
                let end = r.find(['.', '{']).unwrap_or(r.len());
                if end == 0 {
                    return Err(PatternError(format!("empty modifier in `{syntax}`")));
                }
                elements.push(Element::Required(vec![vec![r[..end].to_string()]]));
                rest = &r[end..];
            } else {
                return Err(PatternError(format!("unexpected `{rest}` in `{syntax}`")));
            }
        }
        let (min_operands, max_operands) = count_operands(operands);
        Ok(Pattern {
            mnemonic,
            elements,
            min_operands,
            max_operands,
        })
    }

    /// The mnemonic (the opcode's first part).
    pub fn mnemonic(&self) -> &str {
        &self.mnemonic
    }

    /// The fewest and most operands.
    pub fn operand_range(&self) -> (usize, usize) {
        (self.min_operands, self.max_operands)
    }

    /// True when `mnemonic.modifiers...` is an opcode of this pattern.
    pub fn matches_opcode<S: AsRef<str>>(&self, mnemonic: &str, modifiers: &[S]) -> bool {
        // A mnemonic like `cp.async` may be split between mnemonic and modifiers by the caller.
        let mut tokens: Vec<&str> = mnemonic.split('.').collect();
        tokens.extend(modifiers.iter().map(AsRef::as_ref));
        let mut want: Vec<&str> = self.mnemonic.split('.').collect();
        if tokens.len() < want.len() || tokens[..want.len()] != want[..] {
            return false;
        }
        let rest = tokens.split_off(want.len());
        want.clear();
        match_elements(&self.elements, &rest)
    }

    /// True when the operand count fits.
    pub fn matches_operand_count(&self, n: usize) -> bool {
        (self.min_operands..=self.max_operands).contains(&n)
    }
}

fn match_elements(elements: &[Element], tokens: &[&str]) -> bool {
    let Some((first, rest)) = elements.split_first() else {
        return tokens.is_empty();
    };
    let (alts, optional) = match first {
        Element::Required(a) => (a, false),
        Element::Optional(a) => (a, true),
    };
    for alt in alts {
        if tokens.len() >= alt.len()
            && alt.iter().zip(tokens).all(|(a, t)| token_matches(a, t))
            && match_elements(rest, &tokens[alt.len()..])
        {
            return true;
        }
    }
    optional && match_elements(rest, tokens)
}

/// A pattern modifier against a written one; `*` matches one or more decimal digits.
fn token_matches(pattern: &str, token: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == token,
        Some((pre, post)) => {
            token.len() > pre.len() + post.len()
                && token.starts_with(pre)
                && token.ends_with(post)
                && token[pre.len()..token.len() - post.len()]
                    .bytes()
                    .all(|b| b.is_ascii_digit())
        }
    }
}

/// Counts operands: top-level commas separate operands; a `{, x}` group adds optional ones.
fn count_operands(operands: &str) -> (usize, usize) {
    if operands.is_empty() {
        return (0, 0);
    }
    let (mut required, mut optional) = (0usize, 0usize);
    let mut depth = 0usize;
    let mut token = false;
    let mut in_optional_group = false;
    let chars: Vec<char> = operands.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth = depth.saturating_sub(1),
            '{' => {
                // `{,` opens an optional operand group; other braces are vector operands or `{!}`.
                if chars.get(i + 1) == Some(&',') && depth == 0 {
                    in_optional_group = true;
                }
                depth += 1;
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    in_optional_group = false;
                }
            }
            ',' if depth == 0 => {
                if token {
                    required += 1;
                }
                token = false;
            }
            ',' if in_optional_group && depth == 1 => {
                optional += 1;
            }
            c if !c.is_whitespace() && depth == 0 => token = true,
            c if !c.is_whitespace() && depth > 0 && !in_optional_group => token = true,
            _ => {}
        }
    }
    if token {
        required += 1;
    }
    (required, required + optional)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_patterns_match() {
        let p = Pattern::parse("add{.rn|.rz|.rm|.rp}{.ftz}{.sat}.f32 d, a, b").unwrap();
        assert!(p.matches_opcode("add", &["f32"]));
        assert!(p.matches_opcode("add", &["rn", "ftz", "f32"]));
        assert!(!p.matches_opcode("add", &["ftz", "rn", "f32"]));
        assert!(!p.matches_opcode("add", &["f64"]));
        assert_eq!(p.operand_range(), (3, 3));
        let p = Pattern::parse("setp.{eq|ne}{.and|.or}.{s32|u32} p{|q}, a, b{, {!}c}").unwrap();
        assert!(p.matches_opcode("setp", &["eq", "s32"]));
        assert!(p.matches_opcode("setp", &["ne", "and", "u32"]));
        assert_eq!(p.operand_range(), (3, 4));
        let p = Pattern::parse("ld{.relaxed.cta|.relaxed.gpu}.global.{u32} d, [a]").unwrap();
        assert!(p.matches_opcode("ld", &["relaxed", "gpu", "global", "u32"]));
        assert!(!p.matches_opcode("ld", &["relaxed", "global", "u32"]));
        let p = Pattern::parse("cp.async.bulk.commit_group").unwrap();
        assert!(p.matches_opcode("cp", &["async", "bulk", "commit_group"]));
        assert_eq!(p.operand_range(), (0, 0));
        let p = Pattern::parse("wgmma.mma_async.sync.aligned.m64n*k16.f32.bf16.bf16 d, a").unwrap();
        assert!(p.matches_opcode(
            "wgmma",
            &[
                "mma_async",
                "sync",
                "aligned",
                "m64n256k16",
                "f32",
                "bf16",
                "bf16"
            ]
        ));
        assert!(!p.matches_opcode(
            "wgmma",
            &[
                "mma_async",
                "sync",
                "aligned",
                "m64nk16",
                "f32",
                "bf16",
                "bf16"
            ]
        ));
        let p = Pattern::parse("cp.async.bulk.tensor.2d [dst], [tmap, coords], [mbar]{, mask}")
            .unwrap();
        assert_eq!(p.operand_range(), (3, 4));
        let p = Pattern::parse("mov.b32 d, {a, b}").unwrap();
        assert_eq!(p.operand_range(), (2, 2));
    }
}

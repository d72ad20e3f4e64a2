//! Tokens and logical lines of a `mask_mod` text.

use super::{MaskModError, at};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Name(String),
    Int(i64),
    Str,
    Op(&'static str),
}

#[derive(Clone, Debug)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) line: usize,
    pub(super) col: usize,
}

/// One logical line: its indentation and tokens.
#[derive(Clone, Debug)]
pub(super) struct Line {
    pub(super) indent: usize,
    pub(super) toks: Vec<Token>,
}

pub(super) const OPS: [&str; 47] = [
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=", "*=",
    "/=", "%=", "&=", "|=", "^=", "@=", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">", "(", ")", "[", "]",
    "{", "}", ",", ":", ".", ";", "=",
];

pub(super) fn lex(text: &str) -> Result<Vec<Line>, MaskModError> {
    let chars: Vec<char> = text.chars().collect();
    let mut lines = Vec::new();
    let mut cur: Vec<Token> = Vec::new();
    let mut indent = 0;
    let mut depth = 0usize;
    let (mut i, mut line, mut col) = (0usize, 1usize, 1usize);
    let mut at_line_start = true;
    while i < chars.len() {
        if at_line_start && depth == 0 {
            // Measure indentation; blank and comment-only lines do not count.
            let mut width = 0;
            while i < chars.len() && (chars[i] == ' ' || chars[i] == '\t') {
                width += if chars[i] == '\t' { 8 - width % 8 } else { 1 };
                i += 1;
                col += 1;
            }
            if i >= chars.len() {
                break;
            }
            if !matches!(chars[i], '\n' | '\r' | '#') {
                indent = width;
                at_line_start = false;
            }
        }
        let c = chars[i];
        match c {
            '\n' => {
                if depth == 0 && !cur.is_empty() {
                    lines.push(Line { indent, toks: std::mem::take(&mut cur) });
                }
                if depth == 0 {
                    at_line_start = true;
                }
                i += 1;
                line += 1;
                col = 1;
            }
            '\r' | ' ' | '\t' | '\x0c' => {
                i += 1;
                col += 1;
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                i += 2;
                line += 1;
                col = 1;
            }
            '"' | '\'' => {
                let (l0, c0) = (line, col);
                let triple = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
                let q = if triple { 3 } else { 1 };
                i += q;
                col += q;
                loop {
                    if i >= chars.len() {
                        return Err(at(l0, c0, "unterminated string"));
                    }
                    if chars[i] == '\\' {
                        i += 2;
                        col += 2;
                        continue;
                    }
                    if chars[i] == '\n' {
                        if !triple {
                            return Err(at(l0, c0, "unterminated string"));
                        }
                        line += 1;
                        col = 1;
                        i += 1;
                        continue;
                    }
                    if chars[i] == c && (!triple || (chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c))) {
                        i += q;
                        col += q;
                        break;
                    }
                    i += 1;
                    col += 1;
                }
                // String prefixes (f, r, b) were lexed as a name just before: fold them in.
                if let Some(Token { tok: Tok::Name(p), .. }) = cur.last()
                    && p.len() <= 2
                    && p.chars().all(|ch| "rRbBfFuU".contains(ch))
                {
                    cur.pop();
                }
                cur.push(Token { tok: Tok::Str, line: l0, col: c0 });
            }
            c if c.is_ascii_digit() => {
                let (l0, c0) = (line, col);
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.') {
                    i += 1;
                }
                col += i - start;
                let raw: String = chars[start..i].iter().filter(|&&ch| ch != '_').collect();
                let lower = raw.to_ascii_lowercase();
                let parsed = if let Some(h) = lower.strip_prefix("0x") {
                    i64::from_str_radix(h, 16).ok()
                } else if let Some(b) = lower.strip_prefix("0b") {
                    i64::from_str_radix(b, 2).ok()
                } else if let Some(o) = lower.strip_prefix("0o") {
                    i64::from_str_radix(o, 8).ok()
                } else if raw.bytes().all(|b| b.is_ascii_digit()) {
                    raw.parse::<i64>().ok()
                } else {
                    return Err(at(l0, c0, format!("the number {raw} is not an integer")));
                };
                let v = parsed.ok_or_else(|| at(l0, c0, format!("the integer {raw} does not fit in 64 bits")))?;
                cur.push(Token { tok: Tok::Int(v), line: l0, col: c0 });
            }
            c if c.is_alphabetic() || c == '_' => {
                let (l0, c0) = (line, col);
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                col += i - start;
                cur.push(Token { tok: Tok::Name(chars[start..i].iter().collect()), line: l0, col: c0 });
            }
            _ => {
                let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
                let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) else {
                    return Err(at(line, col, format!("unexpected character {c:?}")));
                };
                match *op {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => {
                        depth = depth.checked_sub(1).ok_or_else(|| at(line, col, format!("unmatched {op}")))?;
                    }
                    _ => {}
                }
                cur.push(Token { tok: Tok::Op(op), line, col });
                i += op.len();
                col += op.len();
            }
        }
    }
    if depth != 0 {
        return Err(MaskModError::Text("unbalanced brackets at the end of the text".into()));
    }
    if !cur.is_empty() {
        lines.push(Line { indent, toks: cur });
    }
    Ok(lines)
}

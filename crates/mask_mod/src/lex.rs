//! Python tokens, as CPython's tokenizer makes them: logical lines, `INDENT` / `DEDENT`, implicit
//! joining inside brackets, `\` continuations, any line ending (`\n`, `\r\n`, lone `\r`), a UTF-8
//! BOM, form feeds, and Python's tab rule (a tab moves to the next multiple of 8; indentation
//! that changes meaning with a tab width of 1 is a `TabError`).

use super::{MaskModError, at};

/// Deepest bracket nesting (CPython's tokenizer refuses more with "too many nested parentheses").
pub(super) const MAX_BRACKETS: usize = 200;
/// Deepest indentation (CPython: "too many levels of indentation").
pub(super) const MAX_INDENT_LEVELS: usize = 100;
/// Most tokens a text may have.
pub(super) const MAX_TOKENS: usize = 2_000_000;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Name(String),
    /// An integer literal that fits in 64 bits.
    Int(i64),
    /// An integer literal over 64 bits (its number of digits).
    BigInt(usize),
    Float(f64),
    /// A string literal's value (`f`-strings: `None`, never evaluated).
    Str(Option<String>),
    Op(&'static str),
    Newline,
    Indent,
    Dedent,
    End,
}

#[derive(Clone, Debug)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) line: u32,
    pub(super) col: u32,
}

const OPS: [&str; 48] = [
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=", "*=",
    "/=", "%=", "&=", "|=", "^=", "@=", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">", "(", ")", "[", "]",
    "{", "}", ",", ":", ".", ";", "=", "!",
];

/// Folds an identifier character as NFKC would for the forms that matter (fullwidth ASCII), and
/// accepts letters whose NFKC form is themselves (Latin-1 letters but `ª º µ`, Greek, Cyrillic,
/// CJK). Anything else is refused rather than risk naming two variables alike or apart.
fn ident_char(c: char, first: bool) -> Option<Result<char, ()>> {
    if c == '_' || c.is_ascii_alphabetic() || (!first && c.is_ascii_digit()) {
        return Some(Ok(c));
    }
    if c.is_ascii() {
        return None;
    }
    let u = c as u32;
    let folded = match u {
        0xFF21..=0xFF3A | 0xFF41..=0xFF5A | 0xFF3F => char::from_u32(u - 0xFF00 + 0x20),
        0xFF10..=0xFF19 if !first => char::from_u32(u - 0xFF00 + 0x20),
        _ => None,
    };
    if let Some(f) = folded {
        return Some(Ok(f));
    }
    let stable = matches!(u, 0xC0..=0xD6 | 0xD8..=0xF6 | 0xF8..=0xFF | 0x391..=0x3A1 | 0x3A3..=0x3A9 | 0x3B1..=0x3C9
        | 0x410..=0x44F | 0x4E00..=0x9FFF);
    if stable {
        Some(Ok(c))
    } else if c.is_alphanumeric() {
        Some(Err(()))
    } else {
        None
    }
}

fn clip(text: &str) -> String {
    let mut s: String = text.chars().take(24).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: u32,
    col: u32,
    out: Vec<Token>,
}

impl Lexer {
    fn peek(&self, k: usize) -> char {
        self.chars.get(self.i + k).copied().unwrap_or('\0')
    }
    fn bump(&mut self) -> char {
        let c = self.peek(0);
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        c
    }
    fn push(&mut self, tok: Tok, line: u32, col: u32) -> Result<(), MaskModError> {
        if self.out.len() >= MAX_TOKENS {
            return Err(MaskModError::Text(format!("the text has over {MAX_TOKENS} tokens")));
        }
        self.out.push(Token { tok, line, col });
        Ok(())
    }
    fn err(&self, what: impl Into<String>) -> MaskModError {
        at(self.line as usize, self.col as usize, what)
    }
}

/// Tokenizes a whole text.
pub(super) fn lex(text: &str) -> Result<Vec<Token>, MaskModError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut chars = Vec::with_capacity(text.len());
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\r' {
            if it.peek() == Some(&'\n') {
                it.next();
            }
            chars.push('\n');
        } else {
            chars.push(c);
        }
    }
    let mut lx = Lexer { chars, i: 0, line: 1, col: 1, out: Vec::new() };
    // Indentation stack: (width with tabs to 8, width with tabs to 1).
    let mut indents: Vec<(usize, usize)> = vec![(0, 0)];
    // Each open bracket with where it opened (Python names that place when one is never closed).
    let mut brackets: Vec<(char, usize, usize)> = Vec::new();
    let mut at_line_start = true;
    while lx.i < lx.chars.len() {
        if at_line_start && brackets.is_empty() {
            let (mut w8, mut w1) = (0usize, 0usize);
            loop {
                match lx.peek(0) {
                    ' ' => {
                        w8 += 1;
                        w1 += 1;
                    }
                    '\t' => {
                        w8 = (w8 / 8 + 1) * 8;
                        w1 += 1;
                    }
                    '\x0c' => {
                        w8 = 0;
                        w1 = 0;
                    }
                    _ => break,
                }
                lx.bump();
            }
            let c = lx.peek(0);
            if c == '\0' && lx.i >= lx.chars.len() {
                break;
            }
            if c == '\n' || c == '#' || (c == '\\' && lx.peek(1) == '\n') {
                // A blank or comment-only line: no tokens, no indentation change.
                if c == '#' {
                    while lx.i < lx.chars.len() && lx.peek(0) != '\n' {
                        lx.bump();
                    }
                }
                if lx.peek(0) == '\\' {
                    lx.bump();
                }
                if lx.i < lx.chars.len() {
                    lx.bump();
                }
                continue;
            }
            let (line, col) = (lx.line, lx.col);
            let &(top8, top1) = indents.last().unwrap_or(&(0, 0));
            if w8 > top8 {
                if w1 <= top1 {
                    return Err(lx.err("inconsistent use of tabs and spaces in indentation (TabError)"));
                }
                if indents.len() > MAX_INDENT_LEVELS {
                    return Err(lx.err(format!("too many levels of indentation (over {MAX_INDENT_LEVELS})")));
                }
                indents.push((w8, w1));
                lx.push(Tok::Indent, line, col)?;
            } else if w8 == top8 {
                if w1 != top1 {
                    return Err(lx.err("inconsistent use of tabs and spaces in indentation (TabError)"));
                }
            } else {
                while indents.last().is_some_and(|&(t8, _)| t8 > w8) {
                    indents.pop();
                    lx.push(Tok::Dedent, line, col)?;
                }
                match indents.last() {
                    Some(&(t8, t1)) if t8 == w8 => {
                        if t1 != w1 {
                            return Err(lx.err("inconsistent use of tabs and spaces in indentation (TabError)"));
                        }
                    }
                    _ => return Err(lx.err("unindent does not match any outer indentation level")),
                }
            }
            at_line_start = false;
        }
        let (line, col) = (lx.line, lx.col);
        let c = lx.peek(0);
        match c {
            '\n' => {
                lx.bump();
                if brackets.is_empty() {
                    lx.push(Tok::Newline, line, col)?;
                    at_line_start = true;
                }
            }
            ' ' | '\t' | '\x0c' => {
                lx.bump();
            }
            '#' => {
                while lx.i < lx.chars.len() && lx.peek(0) != '\n' {
                    lx.bump();
                }
            }
            '\\' => {
                lx.bump();
                if lx.peek(0) != '\n' {
                    return Err(at(
                        line as usize,
                        col as usize,
                        "unexpected character after line continuation character",
                    ));
                }
                lx.bump();
                if lx.i >= lx.chars.len() {
                    return Err(at(line as usize, col as usize, "unexpected end of file after a line continuation"));
                }
            }
            '0'..='9' => number(&mut lx)?,
            '.' if lx.peek(1).is_ascii_digit() => number(&mut lx)?,
            '"' | '\'' => string(&mut lx, String::new())?,
            _ if c.is_ascii_alphabetic() || c == '_' || !c.is_ascii() => {
                let start = lx.i;
                let mut name = String::new();
                while lx.i < lx.chars.len() {
                    let ch = lx.peek(0);
                    match ident_char(ch, lx.i == start) {
                        Some(Ok(f)) => {
                            name.push(f);
                            lx.bump();
                        }
                        Some(Err(())) => {
                            return Err(lx.err(format!(
                                "identifier character {ch:?} (U+{:04X}) is not supported: Python folds identifiers \
                                 by NFKC, which hasseflow does only for ASCII-like letters",
                                ch as u32
                            )));
                        }
                        None => break,
                    }
                }
                if name.is_empty() {
                    return Err(lx.err(format!("invalid character {c:?} (U+{:04X})", c as u32)));
                }
                let lower = name.to_ascii_lowercase();
                let is_prefix = name.len() <= 2 && lower.chars().all(|p| matches!(p, 'r' | 'b' | 'f' | 'u'));
                if is_prefix && matches!(lx.peek(0), '"' | '\'') {
                    string(&mut lx, lower)?;
                } else {
                    lx.push(Tok::Name(name), line, col)?;
                }
            }
            _ => {
                let op = OPS.iter().find(|op| op.chars().enumerate().all(|(k, oc)| lx.peek(k) == oc));
                let Some(op) = op else {
                    return Err(lx.err(format!("invalid character {c:?} (U+{:04X})", c as u32)));
                };
                for _ in 0..op.len() {
                    lx.bump();
                }
                match *op {
                    "(" | "[" | "{" => {
                        if brackets.len() >= MAX_BRACKETS {
                            return Err(at(
                                line as usize,
                                col as usize,
                                format!("too many nested parentheses (over {MAX_BRACKETS})"),
                            ));
                        }
                        brackets.push((op.chars().next().unwrap_or('('), line as usize, col as usize));
                    }
                    ")" | "]" | "}" => {
                        let want = match *op {
                            ")" => '(',
                            "]" => '[',
                            _ => '{',
                        };
                        if brackets.pop().map(|b| b.0) != Some(want) {
                            return Err(at(line as usize, col as usize, format!("unmatched '{op}'")));
                        }
                    }
                    "!" => return Err(at(line as usize, col as usize, "invalid syntax: '!'")),
                    _ => {}
                }
                lx.push(Tok::Op(op), line, col)?;
            }
        }
    }
    if let Some(&(b, line, col)) = brackets.last() {
        return Err(at(line, col, format!("'{b}' was never closed")));
    }
    let (line, col) = (lx.line, lx.col);
    if !at_line_start {
        lx.push(Tok::Newline, line, col)?;
    }
    for _ in 1..indents.len() {
        lx.push(Tok::Dedent, line, col)?;
    }
    lx.push(Tok::End, line, col)?;
    Ok(lx.out)
}

fn number(lx: &mut Lexer) -> Result<(), MaskModError> {
    let (line, col) = (lx.line, lx.col);
    let start = lx.i;
    let radix = if lx.peek(0) == '0' && matches!(lx.peek(1), 'x' | 'X' | 'o' | 'O' | 'b' | 'B') {
        let r = match lx.peek(1) {
            'x' | 'X' => 16,
            'o' | 'O' => 8,
            _ => 2,
        };
        lx.bump();
        lx.bump();
        r
    } else {
        10
    };
    let mut digits = String::new();
    let mut float = false;
    loop {
        let c = lx.peek(0);
        if c == '_' {
            lx.bump();
            continue;
        }
        if c.is_digit(radix) || (radix == 10 && c.is_ascii_digit()) {
            digits.push(c);
            lx.bump();
        } else if radix == 10 && c == '.' && !float && !digits.contains(['e', 'E']) {
            float = true;
            digits.push(c);
            lx.bump();
        } else if radix == 10 && matches!(c, 'e' | 'E') && !digits.contains(['e', 'E']) {
            let sign = matches!(lx.peek(1), '+' | '-');
            if !lx.peek(if sign { 2 } else { 1 }).is_ascii_digit() {
                break;
            }
            float = true;
            digits.push(c);
            lx.bump();
            if sign {
                digits.push(lx.bump());
            }
        } else {
            break;
        }
    }
    let text: String = lx.chars[start..lx.i].iter().collect();
    if matches!(lx.peek(0), 'j' | 'J') {
        return Err(at(line as usize, col as usize, format!("the complex number {}j is not supported", clip(&text))));
    }
    if lx.peek(0).is_ascii_alphanumeric() || lx.peek(0) == '_' {
        return Err(at(line as usize, col as usize, format!("invalid number literal {}", clip(&text))));
    }
    let tok = if float {
        match digits.parse::<f64>() {
            Ok(v) => Tok::Float(v),
            Err(_) => return Err(at(line as usize, col as usize, format!("invalid number literal {}", clip(&text)))),
        }
    } else if digits.is_empty() {
        return Err(at(line as usize, col as usize, format!("invalid number literal {}", clip(&text))));
    } else if radix == 10 && digits.len() > 1 && digits.starts_with('0') && digits.chars().any(|d| d != '0') {
        return Err(at(line as usize, col as usize, "leading zeros in decimal integer literals are not permitted"));
    } else {
        match i64::from_str_radix(&digits, radix) {
            Ok(v) => Tok::Int(v),
            Err(_) => Tok::BigInt(digits.len()),
        }
    };
    lx.push(tok, line, col)
}

fn string(lx: &mut Lexer, prefix: String) -> Result<(), MaskModError> {
    let (line, col) = (lx.line, lx.col.saturating_sub(prefix.len() as u32));
    let raw = prefix.contains('r');
    let fstr = prefix.contains('f');
    let bytes = prefix.contains(['b', 'B']);
    let quote = lx.bump();
    let triple = lx.peek(0) == quote && lx.peek(1) == quote;
    if triple {
        lx.bump();
        lx.bump();
    }
    let mut value = String::new();
    loop {
        if lx.i >= lx.chars.len() {
            let what = if triple { "unterminated triple-quoted string literal" } else { "unterminated string literal" };
            return Err(at(line as usize, col as usize, what));
        }
        let c = lx.peek(0);
        if c == quote && (!triple || (lx.peek(1) == quote && lx.peek(2) == quote)) {
            lx.bump();
            if triple {
                lx.bump();
                lx.bump();
            }
            break;
        }
        if c == '\n' && !triple {
            return Err(at(line as usize, col as usize, "unterminated string literal"));
        }
        lx.bump();
        if c == '\\' {
            let e = lx.peek(0);
            if lx.i >= lx.chars.len() {
                continue;
            }
            lx.bump();
            if raw {
                value.push('\\');
                value.push(e);
                continue;
            }
            match e {
                '\n' => {}
                'n' => value.push('\n'),
                't' => value.push('\t'),
                'r' => value.push('\r'),
                'u' | 'U' | 'N' if bytes => {
                    value.push('\\');
                    value.push(e);
                }
                'a' => value.push('\u{7}'),
                'b' => value.push('\u{8}'),
                'f' => value.push('\u{c}'),
                'v' => value.push('\u{b}'),
                '0'..='7' => {
                    // Octal: up to three digits, as Python reads them.
                    let mut v = e.to_digit(8).unwrap_or(0);
                    for _ in 0..2 {
                        match lx.peek(0).to_digit(8) {
                            Some(d) if lx.i < lx.chars.len() => {
                                v = v * 8 + d;
                                lx.bump();
                            }
                            _ => break,
                        }
                    }
                    value.push(char::from_u32(v).unwrap_or('\0'));
                }
                'x' | 'u' | 'U' => {
                    let digits = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let mut v: u32 = 0;
                    for _ in 0..digits {
                        let d = if lx.i < lx.chars.len() { lx.peek(0).to_digit(16) } else { None };
                        let Some(d) = d else {
                            return Err(at(
                                line as usize,
                                col as usize,
                                format!("truncated \\{e} escape in a string (SyntaxError)"),
                            ));
                        };
                        v = v.wrapping_mul(16).wrapping_add(d);
                        lx.bump();
                    }
                    match char::from_u32(v) {
                        Some(ch) => value.push(ch),
                        None => {
                            return Err(at(
                                line as usize,
                                col as usize,
                                "a \\U escape outside Unicode, or a lone surrogate, in a string is not modelled",
                            ));
                        }
                    }
                }
                'N' => {
                    return Err(at(
                        line as usize,
                        col as usize,
                        "the \\N{...} escape (a character by its Unicode name) is not modelled",
                    ));
                }
                '\\' | '\'' | '"' => value.push(e),
                _ => {
                    value.push('\\');
                    value.push(e);
                }
            }
        } else {
            value.push(c);
        }
    }
    lx.push(Tok::Str(if fstr { None } else { Some(value) }), line, col)
}

/// A short form of a literal's text for messages (24 characters at most).
pub(super) fn short(text: &str) -> String {
    clip(text)
}

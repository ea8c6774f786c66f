//! The `labelSelector` query syntax, read as upstream's lexer and parser read it (so that a
//! selector the real server refuses is refused here with the same message): identifiers, the
//! operators `=`, `==`, `!=`, `in`, `notin`, `gt` (`>`), `lt` (`<`), `!` for absence, value
//! sets in parentheses, requirements joined by commas.

use crate::machinery::name_rules::{label_value_problem, qualified_name_problem};

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LabelReq {
    /// `k=v` or `k==v`.
    Eq(String, String),
    /// `k!=v`: true also when the label is absent.
    NotEq(String, String),
    /// `k in (a,b)`.
    In(String, Vec<String>),
    /// `k notin (a,b)`: true also when the label is absent.
    NotIn(String, Vec<String>),
    /// `k`.
    Exists(String),
    /// `!k`.
    NotExists(String),
    /// `k>n` (`gt`): the label is an integer greater than n.
    Gt(String, i64),
    /// `k<n` (`lt`): the label is an integer less than n.
    Lt(String, i64),
}

/// Upstream's lexer tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
    /// A run of operator characters that forms no operator.
    Error,
}

fn symbol(text: &str) -> Option<Token> {
    Some(match text {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_symbol(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Splits a selector into tokens, ending with [`Token::End`].
fn lex(text: &str) -> Vec<(Token, String)> {
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut out = Vec::new();
    loop {
        while at < bytes.len() && is_space(bytes[at]) {
            at += 1;
        }
        if at >= bytes.len() {
            out.push((Token::End, String::new()));
            return out;
        }
        let start = at;
        if is_symbol(bytes[at]) {
            // The longest run of operator characters that is an operator.
            let mut best: Option<(Token, usize)> = None;
            while at < bytes.len() && is_symbol(bytes[at]) {
                at += 1;
                match symbol(&text[start..at]) {
                    Some(tok) => best = Some((tok, at)),
                    None if best.is_some() => {
                        at -= 1;
                        break;
                    }
                    None => {}
                }
            }
            match best {
                Some((tok, end)) => {
                    at = end;
                    out.push((tok, text[start..end].to_string()));
                }
                None => out.push((
                    Token::Error,
                    format!("error expected: keyword found '{}'", &text[start..at]),
                )),
            }
        } else {
            while at < bytes.len() && !is_space(bytes[at]) && !is_symbol(bytes[at]) {
                at += 1;
            }
            let word = &text[start..at];
            let tok = match word {
                "in" => Token::In,
                "notin" => Token::NotIn,
                _ => Token::Identifier,
            };
            out.push((tok, word.to_string()));
        }
    }
}

/// Where a token is read: as a value, `in` and `notin` are identifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    tokens: Vec<(Token, String)>,
    at: usize,
}

impl Parser {
    fn token(&self, i: usize, ctx: Context) -> (Token, String) {
        let (tok, lit) = self
            .tokens
            .get(i)
            .cloned()
            .unwrap_or((Token::End, String::new()));
        match tok {
            Token::In | Token::NotIn if ctx == Context::Values => (Token::Identifier, lit),
            _ => (tok, lit),
        }
    }

    fn lookahead(&self, ctx: Context) -> (Token, String) {
        self.token(self.at, ctx)
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        let t = self.token(self.at, ctx);
        self.at += 1;
        t
    }

    fn selector(&mut self) -> Result<Vec<LabelReq>, String> {
        let mut reqs = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let req = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(req);
                    let (next, lit) = self.consume(Context::Values);
                    match next {
                        Token::End => return Ok(reqs),
                        Token::Comma => {
                            let (after, lit) = self.lookahead(Context::Values);
                            if after != Token::Identifier && after != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{lit}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!("found '{lit}', expected: ',' or 'end of string'"));
                        }
                    }
                }
                Token::End => return Ok(reqs),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<LabelReq, String> {
        let (mut tok, mut key) = self.consume(Context::Values);
        let absent = tok == Token::DoesNotExist;
        if absent {
            (tok, key) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{key}', expected: identifier"));
        }
        if let Some(why) = qualified_name_problem(&key) {
            return Err(format!("<nil>: Invalid value: {key:?}: {why}"));
        }
        let (next, _) = self.lookahead(Context::Values);
        if absent {
            // Upstream reads no operator after `!key`; what follows is judged by the caller.
            return Ok(LabelReq::NotExists(key));
        }
        if next == Token::End || next == Token::Comma {
            return Ok(LabelReq::Exists(key));
        }
        let (op, lit) = self.consume(Context::KeyAndOperator);
        let req = match op {
            Token::In => LabelReq::In(key.clone(), self.value_set()?),
            Token::NotIn => LabelReq::NotIn(key.clone(), self.value_set()?),
            Token::Equals | Token::DoubleEquals => LabelReq::Eq(key.clone(), self.exact_value()?),
            Token::NotEquals => LabelReq::NotEq(key.clone(), self.exact_value()?),
            Token::GreaterThan | Token::LessThan => {
                let value = self.exact_value()?;
                let bound = value.parse::<i64>().map_err(|_| {
                    format!(
                        "values[0]: Invalid value: {value:?}: for 'Gt', 'Lt' operators, the value must be an integer"
                    )
                })?;
                if op == Token::GreaterThan {
                    LabelReq::Gt(key.clone(), bound)
                } else {
                    LabelReq::Lt(key.clone(), bound)
                }
            }
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        };
        let values: Vec<&str> = match &req {
            LabelReq::In(_, vs) | LabelReq::NotIn(_, vs) => vs.iter().map(String::as_str).collect(),
            LabelReq::Eq(_, v) | LabelReq::NotEq(_, v) => vec![v.as_str()],
            _ => Vec::new(),
        };
        for (i, v) in values.iter().enumerate() {
            if let Some(why) = label_value_problem(v) {
                return Err(format!("values[{i}][{key}]: Invalid value: {v:?}: {why}"));
            }
        }
        Ok(req)
    }

    /// `( a, b )`; `()` is the set of the empty value.
    fn value_set(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let set = self.identifiers()?;
                if self.consume(Context::Values).0 != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    /// The values inside parentheses, sorted and without repeats (empty ones where commas
    /// leave a gap), up to the closing parenthesis.
    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut set = std::collections::BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    set.insert(lit);
                    let (next, lit) = self.lookahead(Context::Values);
                    match next {
                        Token::Comma => {}
                        Token::ClosedPar => return Ok(set.into_iter().collect()),
                        _ => return Err(format!("found '{lit}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    match self.lookahead(Context::Values).0 {
                        Token::ClosedPar => {
                            set.insert(String::new());
                            return Ok(set.into_iter().collect());
                        }
                        Token::Comma => {
                            self.consume(Context::Values);
                            set.insert(String::new());
                        }
                        _ => {}
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    /// The value after `=`, `==`, `!=`, `>` or `<`; nothing before a comma or the end is the
    /// empty value.
    fn exact_value(&mut self) -> Result<String, String> {
        let (next, _) = self.lookahead(Context::Values);
        if next == Token::End || next == Token::Comma {
            return Ok(String::new());
        }
        match self.consume(Context::Values) {
            (Token::Identifier, lit) => Ok(lit),
            (_, lit) => Err(format!("found '{lit}', expected: identifier")),
        }
    }
}

/// Parses a `labelSelector` as upstream does; the error is upstream's message.
pub(super) fn parse(text: &str) -> Result<Vec<LabelReq>, String> {
    let mut parser = Parser {
        tokens: lex(text),
        at: 0,
    };
    parser.selector()
}

#[cfg(test)]
mod tests {
    use super::{LabelReq, parse};

    #[test]
    fn reads_every_form() {
        let reqs = parse("a=1, b==2,c!=3, d in (x, y), e notin (z), f, !g, h>4, i<5, j=, k in ()")
            .expect("parses");
        assert_eq!(
            reqs,
            vec![
                LabelReq::Eq("a".into(), "1".into()),
                LabelReq::Eq("b".into(), "2".into()),
                LabelReq::NotEq("c".into(), "3".into()),
                LabelReq::In("d".into(), vec!["x".into(), "y".into()]),
                LabelReq::NotIn("e".into(), vec!["z".into()]),
                LabelReq::Exists("f".into()),
                LabelReq::NotExists("g".into()),
                LabelReq::Gt("h".into(), 4),
                LabelReq::Lt("i".into(), 5),
                LabelReq::Eq("j".into(), String::new()),
                LabelReq::In("k".into(), vec![String::new()]),
            ]
        );
        assert_eq!(parse("  ").expect("empty"), Vec::new());
        assert_eq!(
            parse("x in (in, notin)").expect("keywords as values"),
            vec![LabelReq::In("x".into(), vec!["in".into(), "notin".into()])]
        );
    }

    #[test]
    fn refuses_with_upstreams_messages() {
        let err = |s: &str| parse(s).expect_err(s);
        assert_eq!(
            err("tier===x"),
            "unable to parse requirement: found '=', expected: identifier"
        );
        assert_eq!(
            err("tier=a b"),
            "found 'b', expected: ',' or 'end of string'"
        );
        assert_eq!(err("a=1,"), "found '', expected: identifier after ','");
        assert_eq!(
            err("=a"),
            "found '=', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            err("a in x"),
            "unable to parse requirement: found 'x' expected: '('"
        );
        assert_eq!(
            err("a in (x"),
            "unable to parse requirement: found '', expected: ',' or ')'"
        );
        assert_eq!(
            err("a>x"),
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(
            err("a b=1"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert!(
            err("-a=1").starts_with(
                "unable to parse requirement: <nil>: Invalid value: \"-a\": name part"
            )
        );
        assert!(
            err("a=-x")
                .starts_with("unable to parse requirement: values[0][a]: Invalid value: \"-x\"")
        );
    }
}

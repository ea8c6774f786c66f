//! The JSONPath dialect of Kubernetes (client-go `util/jsonpath`), as CRD printer columns
//! use it: fields (`.spec.replicas`, with `\.` escaping a dot inside a key), `.*` and
//! `[*]`, recursive descent (`..name`), array indices, slices and unions (`[0]`, `[-1]`,
//! `[1:3]`, `[0,2]`), quoted keys (`['a.b']`), and filters
//! (`[?(@.type=="Ready")]`, `[?(@.x)]`, with `==`, `!=`, `<`, `>`, `<=`, `>=`). Missing keys
//! and out-of-range indices give no result rather than an error, as for printer columns.

use std::borrow::Cow;

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// `.name` (an empty name keeps the current value).
    Field(String),
    /// `['a','b']`.
    Keys(Vec<String>),
    /// `.*` or `[*]`.
    Wildcard,
    /// `..`: the current values and all their descendants.
    Recursive,
    /// `[i]`, `[a:b:c]`, `[i,j]`.
    Index(Vec<Slice>),
    /// `[?(...)]`.
    Filter(Box<Filter>),
    /// A literal (`"text"`, a number, `true`/`false`): replaces the current values.
    Literal(Value),
}

/// `start:end:step` of an array subscript; a single index has `single` set.
#[derive(Debug, Clone, PartialEq)]
struct Slice {
    start: Option<i64>,
    end: Option<i64>,
    step: Option<i64>,
    single: bool,
}

/// `left op right`, or `left` alone (exists).
#[derive(Debug, Clone, PartialEq)]
struct Filter {
    left: Vec<Step>,
    op: String,
    right: Vec<Step>,
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

/// Why a path cannot be parsed.
pub type ParseError = String;

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

fn is_terminator(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(
            c,
            b'.' | b',' | b'[' | b']' | b'$' | b'@' | b'{' | b'}' | b'(' | b')'
        )
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a [u8] {
        &self.s[self.pos.min(self.s.len())..]
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn steps(&mut self) -> Result<Vec<Step>, ParseError> {
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            let rest = self.rest();
            if c == b'}' {
                break;
            } else if rest.starts_with(b"[?(") {
                self.pos += 3;
                out.push(Step::Filter(Box::new(self.filter()?)));
            } else if rest.starts_with(b"..") {
                self.pos += 1;
                out.push(Step::Recursive);
            } else if c == b' ' || c == b'@' || c == b'$' {
                self.pos += 1;
            } else if c == b'[' {
                self.pos += 1;
                out.push(self.subscript()?);
            } else if c == b'"' || c == b'\'' {
                self.pos += 1;
                out.push(Step::Literal(Value::String(self.quoted(c)?)));
            } else if c == b'.' {
                self.pos += 1;
                out.push(self.field());
            } else if c == b'+' || c == b'-' || c.is_ascii_digit() {
                out.push(Step::Literal(self.number()?));
            } else if c.is_ascii_alphanumeric() || c == b'_' {
                out.push(self.identifier()?);
            } else {
                return Err(format!("unrecognized character in action: {:?}", c as char));
            }
        }
        Ok(out)
    }

    fn field(&mut self) -> Step {
        let mut name = Vec::new();
        while let Some(c) = self.peek() {
            if c == b'\\' {
                self.pos += 1;
                if let Some(n) = self.peek() {
                    name.push(n);
                    self.pos += 1;
                }
                continue;
            }
            if is_terminator(c) {
                break;
            }
            name.push(c);
            self.pos += 1;
        }
        let name = String::from_utf8_lossy(&name).into_owned();
        if name == "*" {
            Step::Wildcard
        } else {
            Step::Field(name)
        }
    }

    fn quoted(&mut self, quote: u8) -> Result<String, ParseError> {
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            if c == b'\\' {
                if let Some(n) = self.peek() {
                    out.push(n);
                    self.pos += 1;
                }
                continue;
            }
            if c == quote {
                return Ok(String::from_utf8_lossy(&out).into_owned());
            }
            out.push(c);
        }
        Err("unterminated quoted string".into())
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.' | b'e' | b'E'))
        {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Value::from(i));
        }
        text.parse::<f64>()
            .ok()
            .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
            .ok_or_else(|| format!("cannot parse number {text:?}"))
    }

    fn identifier(&mut self) -> Result<Step, ParseError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.pos += 1;
        }
        match &self.s[start..self.pos] {
            b"true" => Ok(Step::Literal(Value::Bool(true))),
            b"false" => Ok(Step::Literal(Value::Bool(false))),
            other => Err(format!(
                "unrecognized identifier {}",
                String::from_utf8_lossy(other)
            )),
        }
    }

    /// After `[`: up to and including `]`.
    fn subscript(&mut self) -> Result<Step, ParseError> {
        let Some(len) = self.rest().iter().position(|c| *c == b']') else {
            return Err("unterminated array".into());
        };
        let text = String::from_utf8_lossy(&self.rest()[..len])
            .trim()
            .to_string();
        self.pos += len + 1;
        if text == "*" {
            return Ok(Step::Wildcard);
        }
        if text.starts_with('\'') || text.starts_with('"') {
            let keys = text
                .split(',')
                .map(|k| {
                    let k = k.trim();
                    let q = k.chars().next().unwrap_or('\'');
                    k.strip_prefix(q)
                        .and_then(|k| k.strip_suffix(q))
                        .map(str::to_string)
                        .ok_or_else(|| format!("invalid array index {k}"))
                })
                .collect::<Result<_, _>>()?;
            return Ok(Step::Keys(keys));
        }
        let slices = text
            .split(',')
            .map(parse_slice)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Step::Index(slices))
    }

    /// After `[?(`: up to and including `)]`.
    fn filter(&mut self) -> Result<Filter, ParseError> {
        let start = self.pos;
        let mut quote: Option<u8> = None;
        loop {
            let Some(c) = self.peek() else {
                return Err("unterminated filter".into());
            };
            self.pos += 1;
            match (quote, c) {
                (Some(q), c) if c == q && self.s.get(self.pos.wrapping_sub(2)) != Some(&b'\\') => {
                    quote = None
                }
                (None, b'"' | b'\'') => quote = Some(c),
                (None, b')') => break,
                _ => {}
            }
        }
        if self.peek() != Some(b']') {
            return Err("unclosed array expect ]".into());
        }
        let text = String::from_utf8_lossy(&self.s[start..self.pos - 1]).into_owned();
        self.pos += 1;
        let op_at = text.find(['!', '<', '>', '=']);
        let Some(i) = op_at.filter(|i| *i > 0) else {
            return Ok(Filter {
                left: parse_steps(&text)?,
                op: "exists".into(),
                right: Vec::new(),
            });
        };
        let op_len = text[i..]
            .bytes()
            .take_while(|c| matches!(c, b'!' | b'<' | b'>' | b'='))
            .count();
        let (left, op, right) = (&text[..i], &text[i..i + op_len], &text[i + op_len..]);
        if right.trim().is_empty() {
            return Ok(Filter {
                left: parse_steps(&text)?,
                op: "exists".into(),
                right: Vec::new(),
            });
        }
        Ok(Filter {
            left: parse_steps(left)?,
            op: op.to_string(),
            right: parse_steps(right)?,
        })
    }
}

fn parse_slice(part: &str) -> Result<Slice, ParseError> {
    let part = part.trim();
    let fields: Vec<&str> = part.split(':').collect();
    if fields.len() > 3 {
        return Err(format!("invalid array index {part}"));
    }
    let num = |s: &str| -> Result<Option<i64>, ParseError> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(None);
        }
        s.parse()
            .map(Some)
            .map_err(|_| format!("invalid array index {part}"))
    };
    let start = num(fields[0])?;
    if fields.len() == 1 && start.is_none() {
        return Err(format!("invalid array index {part}"));
    }
    Ok(Slice {
        start,
        end: fields.get(1).map(|f| num(f)).transpose()?.flatten(),
        step: fields.get(2).map(|f| num(f)).transpose()?.flatten(),
        single: fields.len() == 1,
    })
}

fn parse_steps(text: &str) -> Result<Vec<Step>, ParseError> {
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
    };
    let steps = p.steps()?;
    if p.pos < text.len() {
        return Err(format!("unexpected {:?}", &text[p.pos..]));
    }
    Ok(steps)
}

impl JsonPath {
    /// Parses a path written without braces (`.spec.x`, as in a CRD column); the first
    /// action of a template with several (`.a}text{.b`) is the one evaluated.
    pub fn parse(path: &str) -> Result<Self, ParseError> {
        let mut p = Parser {
            s: path.as_bytes(),
            pos: 0,
        };
        let steps = p.steps()?;
        Ok(Self { steps })
    }

    /// Every value the path selects in `root`, in document order.
    pub fn find<'a>(&self, root: &'a Value) -> Vec<Cow<'a, Value>> {
        eval(&self.steps, vec![Cow::Borrowed(root)])
    }
}

/// Children of a node selected by `f`, borrowed when the node is.
fn child<'a>(
    node: &Cow<'a, Value>,
    f: impl Fn(&Value) -> Option<&Value>,
) -> Option<Cow<'a, Value>> {
    match node {
        Cow::Borrowed(v) => f(v).map(Cow::Borrowed),
        Cow::Owned(v) => f(v).map(|c| Cow::Owned(c.clone())),
    }
}

fn elements<'a>(node: &Cow<'a, Value>) -> Vec<Cow<'a, Value>> {
    let n = match &**node {
        Value::Array(a) => a.len(),
        Value::Object(m) => m.len(),
        _ => 0,
    };
    (0..n)
        .filter_map(|i| {
            child(node, |v| match v {
                Value::Array(a) => a.get(i),
                Value::Object(m) => m.values().nth(i),
                _ => None,
            })
        })
        .collect()
}

fn descendants<'a>(node: Cow<'a, Value>, out: &mut Vec<Cow<'a, Value>>) {
    let kids = elements(&node);
    if kids.is_empty() {
        return;
    }
    out.push(node);
    for k in kids {
        descendants(k, out);
    }
}

fn index<'a>(node: Cow<'a, Value>, sl: &Slice, out: &mut Vec<Cow<'a, Value>>) {
    let node = &node;
    let len = match &**node {
        Value::Array(a) => a.len() as i64,
        _ => return,
    };
    let fix = |i: i64| if i < 0 { i + len } else { i };
    if sl.single {
        let i = fix(sl.start.unwrap_or(0));
        if (0..len).contains(&i) {
            out.extend(child(node, |v| v.get(i as usize)));
        }
        return;
    }
    let start = fix(sl.start.unwrap_or(0)).clamp(0, len);
    let end = fix(sl.end.unwrap_or(len)).clamp(0, len);
    let step = sl.step.filter(|s| *s > 0).unwrap_or(1);
    let mut i = start;
    while i < end {
        out.extend(child(node, |v| v.get(i as usize)));
        i += step;
    }
}

fn eval<'a>(steps: &[Step], mut set: Vec<Cow<'a, Value>>) -> Vec<Cow<'a, Value>> {
    for step in steps {
        let mut next = Vec::new();
        for node in &set {
            match step {
                Step::Field(name) if name.is_empty() => next.push(node.clone()),
                Step::Field(name) => next.extend(child(node, |v| v.get(name.as_str()))),
                Step::Keys(keys) => {
                    for k in keys {
                        next.extend(child(node, |v| v.get(k.as_str())));
                    }
                }
                Step::Wildcard => next.extend(elements(node)),
                Step::Recursive => descendants(node.clone(), &mut next),
                Step::Index(slices) => {
                    for sl in slices {
                        index(node.clone(), sl, &mut next);
                    }
                }
                Step::Filter(f) => {
                    next.extend(elements(node).into_iter().filter(|item| passes(f, item)))
                }
                Step::Literal(v) => next.push(Cow::Owned(v.clone())),
            }
        }
        set = next;
    }
    set
}

fn passes(f: &Filter, item: &Value) -> bool {
    let left = eval(&f.left, vec![Cow::Borrowed(item)]);
    if f.op == "exists" {
        return !left.is_empty();
    }
    let right = eval(&f.right, vec![Cow::Borrowed(item)]);
    let (Some(l), Some(r)) = (left.first(), right.first()) else {
        return false;
    };
    if left.len() != 1 || right.len() != 1 {
        return false;
    }
    let ord = match (&**l, &**r) {
        (Value::Number(a), Value::Number(b)) => a.as_f64().partial_cmp(&b.as_f64()),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
        _ => None,
    };
    let Some(ord) = ord else { return false };
    match f.op.as_str() {
        "==" => ord.is_eq(),
        "!=" => !ord.is_eq(),
        "<" => ord.is_lt(),
        ">" => ord.is_gt(),
        "<=" => ord.is_le(),
        ">=" => ord.is_ge(),
        _ => false,
    }
}

#[cfg(test)]
#[path = "jsonpath_tests.rs"]
mod tests;

//! The diff apimachinery's `diff.Diff` prints between two values: each value as Go's
//! `json.MarshalIndent(v, "", " ")` writes it, and a unified diff of their lines with three
//! lines of context and no file header, as go-difflib (Python's `difflib`) computes it.

/// Go's `json.Indent` of a compact JSON text, one space per level.
pub fn pretty(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    let chars: Vec<char> = compact.chars().collect();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', depth));
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                let close = if c == '{' { '}' } else { ']' };
                if chars.get(i + 1) == Some(&close) {
                    out.push(c);
                    out.push(close);
                    i += 1;
                } else {
                    out.push(c);
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// go-difflib's `SplitLines`: lines with their `\n`, the last one given one.
fn split_lines(s: &str) -> Vec<String> {
    let mut lines: Vec<String> = s.split_inclusive('\n').map(str::to_string).collect();
    match lines.last_mut() {
        Some(last) if !s.ends_with('\n') => last.push('\n'),
        _ => lines.push("\n".to_string()),
    }
    lines
}

/// The unified diff (context 3, no header) of two texts, line by line.
pub fn unified(a: &str, b: &str) -> String {
    let (a, b) = (split_lines(a), split_lines(b));
    let mut out = String::new();
    for group in grouped_opcodes(&a, &b, 3) {
        let (first, last) = (group[0], group[group.len() - 1]);
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(first.1, last.2),
            range(first.3, last.4)
        ));
        for (tag, i1, i2, j1, j2) in group {
            if tag == Tag::Equal {
                a[i1..i2]
                    .iter()
                    .for_each(|l| out.push_str(&format!(" {l}")));
                continue;
            }
            if matches!(tag, Tag::Replace | Tag::Delete) {
                a[i1..i2]
                    .iter()
                    .for_each(|l| out.push_str(&format!("-{l}")));
            }
            if matches!(tag, Tag::Replace | Tag::Insert) {
                b[j1..j2]
                    .iter()
                    .for_each(|l| out.push_str(&format!("+{l}")));
            }
        }
    }
    out
}

fn range(start: usize, stop: usize) -> String {
    let length = stop - start;
    match length {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{length}", start + 1),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tag {
    Equal,
    Replace,
    Delete,
    Insert,
}

type Opcode = (Tag, usize, usize, usize, usize);

/// The longest common run of `a[alo..ahi]` and `b[blo..bhi]` (earliest in `a`, then in `b`).
fn longest_match(
    a: &[String],
    b: &[String],
    (alo, ahi): (usize, usize),
    (blo, bhi): (usize, usize),
) -> (usize, usize, usize) {
    let (mut besti, mut bestj, mut best) = (alo, blo, 0);
    let mut run = vec![0usize; b.len() + 1];
    for (i, line) in a.iter().enumerate().take(ahi).skip(alo) {
        let mut next = vec![0usize; b.len() + 1];
        for (j, other) in b.iter().enumerate().take(bhi).skip(blo) {
            if line == other {
                let k = if j > 0 { run[j - 1] } else { 0 } + 1;
                next[j] = k;
                if k > best {
                    (besti, bestj, best) = (i + 1 - k, j + 1 - k, k);
                }
            }
        }
        run = next;
    }
    (besti, bestj, best)
}

fn matching_blocks(a: &[String], b: &[String]) -> Vec<(usize, usize, usize)> {
    let mut queue = vec![(0, a.len(), 0, b.len())];
    let mut blocks = Vec::new();
    while let Some((alo, ahi, blo, bhi)) = queue.pop() {
        let (i, j, k) = longest_match(a, b, (alo, ahi), (blo, bhi));
        if k == 0 {
            continue;
        }
        blocks.push((i, j, k));
        if alo < i && blo < j {
            queue.push((alo, i, blo, j));
        }
        if i + k < ahi && j + k < bhi {
            queue.push((i + k, ahi, j + k, bhi));
        }
    }
    blocks.sort_unstable();
    let mut merged: Vec<(usize, usize, usize)> = Vec::new();
    for (i, j, k) in blocks {
        match merged.last_mut() {
            Some(last) if last.0 + last.2 == i && last.1 + last.2 == j => last.2 += k,
            _ => merged.push((i, j, k)),
        }
    }
    merged.push((a.len(), b.len(), 0));
    merged
}

fn opcodes(a: &[String], b: &[String]) -> Vec<Opcode> {
    let (mut i, mut j) = (0, 0);
    let mut codes = Vec::new();
    for (ai, bj, size) in matching_blocks(a, b) {
        let tag = match (i < ai, j < bj) {
            (true, true) => Some(Tag::Replace),
            (true, false) => Some(Tag::Delete),
            (false, true) => Some(Tag::Insert),
            (false, false) => None,
        };
        if let Some(tag) = tag {
            codes.push((tag, i, ai, j, bj));
        }
        (i, j) = (ai + size, bj + size);
        if size > 0 {
            codes.push((Tag::Equal, ai, i, bj, j));
        }
    }
    codes
}

fn grouped_opcodes(a: &[String], b: &[String], n: usize) -> Vec<Vec<Opcode>> {
    let mut codes = opcodes(a, b);
    if codes.is_empty() {
        codes.push((Tag::Equal, 0, 1, 0, 1));
    }
    if let Some(c) = codes.first_mut().filter(|c| c.0 == Tag::Equal) {
        *c = (
            Tag::Equal,
            c.1.max(c.2.saturating_sub(n)),
            c.2,
            c.3.max(c.4.saturating_sub(n)),
            c.4,
        );
    }
    if let Some(c) = codes.last_mut().filter(|c| c.0 == Tag::Equal) {
        *c = (Tag::Equal, c.1, c.2.min(c.1 + n), c.3, c.4.min(c.3 + n));
    }
    let mut groups = Vec::new();
    let mut group = Vec::new();
    for (tag, mut i1, i2, mut j1, j2) in codes {
        if tag == Tag::Equal && i2 - i1 > 2 * n {
            group.push((tag, i1, i2.min(i1 + n), j1, j2.min(j1 + n)));
            groups.push(std::mem::take(&mut group));
            i1 = i1.max(i2.saturating_sub(n));
            j1 = j1.max(j2.saturating_sub(n));
        }
        group.push((tag, i1, i2, j1, j2));
    }
    if !(group.is_empty() || (group.len() == 1 && group[0].0 == Tag::Equal)) {
        groups.push(group);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_indented_as_go_indents_them() {
        assert_eq!(
            pretty(r#"{"A":"x,{","B":[],"C":[1,2],"D":{}}"#),
            "{\n \"A\": \"x,{\",\n \"B\": [],\n \"C\": [\n  1,\n  2\n ],\n \"D\": {}\n}"
        );
    }

    #[test]
    fn a_changed_line_is_shown_with_three_lines_of_context() {
        let a = "{\n a\n b\n c\n d\n e\n f\n g\n}";
        let b = "{\n a\n b\n c\n D\n e\n f\n g\n}";
        assert_eq!(
            unified(a, b),
            "@@ -2,7 +2,7 @@\n  a\n  b\n  c\n- d\n+ D\n  e\n  f\n  g\n"
        );
        let far = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11";
        let changed = "x\n2\n3\n4\n5\n6\n7\n8\n9\n10\ny";
        assert_eq!(
            unified(far, changed),
            "@@ -1,4 +1,4 @@\n-1\n+x\n 2\n 3\n 4\n@@ -8,4 +8,4 @@\n 8\n 9\n 10\n-11\n+y\n"
        );
    }
}

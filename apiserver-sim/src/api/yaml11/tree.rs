//! The first document of a YAML stream as a tree of nodes, from `saphyr-parser`'s events:
//! scalars with their text and how they were written, sequences, mappings, and aliases
//! pointing at the node their anchor names (expanded only when decoded).

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Tag};

use super::OwnedHint;

/// A node of the tree; children are indices into [`Tree`].
#[derive(Debug)]
pub(crate) enum Node {
    /// A scalar: its text and how it was written.
    Scalar {
        /// The scalar's value, escapes and folding applied.
        text: String,
        /// Its style and tag, as resolution needs them.
        hint: OwnedHint,
    },
    /// A sequence's items.
    Seq(Vec<usize>),
    /// A mapping's key and value nodes, in order.
    Map(Vec<(usize, usize)>),
    /// An alias of the node at this index.
    Alias(usize),
}

/// A parsed document.
#[derive(Debug, Default)]
pub(crate) struct Tree {
    nodes: Vec<Node>,
    /// The document's root node (none for an empty stream).
    pub root: Option<usize>,
}

/// A reader error as go-yaml words its own (`yaml: line N: …`; an alias of no anchor by
/// the anchor's name, which the parser's error leaves out but the text has at its mark).
fn scan_error(text: &str, e: &ScanError) -> String {
    let mut at = text.chars().skip(e.marker().index());
    if e.info().ends_with("unknown anchor") && at.next() == Some('*') {
        let name: String = at
            .take_while(|c| !c.is_whitespace() && !",[]{}".contains(*c))
            .collect();
        return format!("yaml: unknown anchor '{name}' referenced");
    }
    format!("yaml: line {}: {}", e.marker().line(), e.info())
}

fn hint(style: ScalarStyle, tag: Option<&Tag>) -> OwnedHint {
    match tag {
        None if style == ScalarStyle::Plain => OwnedHint::Plain,
        None => OwnedHint::Quoted,
        Some(t) if t.is_yaml_core_schema() => OwnedHint::Core(t.suffix.clone()),
        Some(t) if t.handle == "!" && t.suffix.is_empty() => OwnedHint::Quoted,
        Some(_) => OwnedHint::Other,
    }
}

/// An open collection while its events are read: its node, and a mapping's pending key.
struct Open {
    node: usize,
    key: Option<usize>,
}

impl Tree {
    /// The node at `id` (an index this tree handed out).
    pub(crate) fn node(&self, id: usize) -> &Node {
        // Indices come from this tree only; an empty sequence stands for none.
        static NONE: Node = Node::Seq(Vec::new());
        self.nodes.get(id).unwrap_or(&NONE)
    }

    /// Whether node `id` is the merge key `<<` (plain, or tagged `!!merge`).
    pub(crate) fn is_merge_key(&self, id: usize) -> bool {
        match self.node(id) {
            Node::Scalar { text, hint } => match hint {
                OwnedHint::Plain => text == "<<",
                OwnedHint::Core(tag) => tag == "merge",
                _ => false,
            },
            _ => false,
        }
    }

    /// Parses the first document of `text`, refusing collections nested deeper than
    /// `max_depth`.
    pub(crate) fn parse(text: &str, max_depth: usize) -> Result<Tree, String> {
        let mut tree = Tree::default();
        let mut anchors: HashMap<usize, usize> = HashMap::new();
        let mut open: Vec<Open> = Vec::new();
        for event in Parser::new_from_str(text) {
            let (event, _span) = event.map_err(|e| scan_error(text, &e))?;
            let (node, anchor, opens) = match event {
                Event::DocumentEnd if tree.root.is_some() => break,
                Event::StreamEnd => break,
                Event::Scalar(value, style, anchor, tag) => (
                    Node::Scalar {
                        text: value.into_owned(),
                        hint: hint(style, tag.as_deref()),
                    },
                    anchor,
                    false,
                ),
                Event::SequenceStart(anchor, _) => (Node::Seq(Vec::new()), anchor, true),
                Event::MappingStart(anchor, _) => (Node::Map(Vec::new()), anchor, true),
                Event::Alias(anchor) => {
                    let Some(&target) = anchors.get(&anchor) else {
                        return Err("yaml: unknown anchor referenced".to_string());
                    };
                    (Node::Alias(target), 0, false)
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    open.pop();
                    continue;
                }
                Event::Nothing
                | Event::StreamStart
                | Event::DocumentStart(_)
                | Event::DocumentEnd => continue,
            };
            let id = tree.nodes.len();
            tree.nodes.push(node);
            if anchor != 0 {
                anchors.insert(anchor, id);
            }
            tree.attach(open.last_mut(), id);
            if opens {
                if open.len() >= max_depth {
                    return Err(format!("yaml: exceeded max depth of {max_depth}"));
                }
                open.push(Open {
                    node: id,
                    key: None,
                });
            }
        }
        Ok(tree)
    }

    /// Puts node `id` in its parent (a sequence's next item, a mapping's next key or value),
    /// or makes it the root.
    fn attach(&mut self, parent: Option<&mut Open>, id: usize) {
        let Some(parent) = parent else {
            self.root.get_or_insert(id);
            return;
        };
        match self.nodes.get_mut(parent.node) {
            Some(Node::Seq(items)) => items.push(id),
            Some(Node::Map(pairs)) => match parent.key.take() {
                Some(key) => pairs.push((key, id)),
                None => parent.key = Some(id),
            },
            _ => {}
        }
    }
}

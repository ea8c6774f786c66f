//! Where a watch body's events end, as its bytes stream by: one JSON document per line, or
//! (`application/vnd.kubernetes.protobuf;stream=watch`) frames of a 4-byte big-endian length
//! and that many bytes.

/// How a watch body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Newline-terminated JSON events.
    Lines,
    /// Length-prefixed protobuf events.
    LengthPrefixed,
}

impl Framing {
    /// The framing of a watch answered with `content_type`.
    pub fn of(content_type: Option<&str>) -> Self {
        match content_type {
            Some(t) if t.starts_with("application/vnd.kubernetes.protobuf") => {
                Framing::LengthPrefixed
            }
            _ => Framing::Lines,
        }
    }
}

/// Finds the ends of events in a body fed chunk by chunk.
#[derive(Debug)]
pub(crate) struct Frames {
    framing: Framing,
    /// Length-prefixed: the bytes of the current length prefix read so far.
    prefix: Vec<u8>,
    /// Length-prefixed: payload bytes still to come in the current frame.
    remaining: usize,
}

impl Frames {
    /// A reader at the start of a body.
    pub fn new(framing: Framing) -> Self {
        Self {
            framing,
            prefix: Vec::with_capacity(4),
            remaining: 0,
        }
    }

    /// The offsets in `chunk` just past each event that ends in it, in order.
    pub fn ends_in(&mut self, chunk: &[u8]) -> Vec<usize> {
        match self.framing {
            Framing::Lines => chunk
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1)
                .collect(),
            Framing::LengthPrefixed => self.length_prefixed_ends(chunk),
        }
    }

    fn length_prefixed_ends(&mut self, chunk: &[u8]) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut i = 0;
        while i < chunk.len() {
            if self.remaining > 0 {
                let take = self.remaining.min(chunk.len() - i);
                self.remaining -= take;
                i += take;
                if self.remaining == 0 {
                    ends.push(i);
                }
                continue;
            }
            self.prefix.push(chunk[i]);
            i += 1;
            if let Ok(prefix) = <[u8; 4]>::try_from(self.prefix.as_slice()) {
                self.prefix.clear();
                self.remaining = u32::from_be_bytes(prefix) as usize;
                if self.remaining == 0 {
                    ends.push(i);
                }
            }
        }
        ends
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event end, feeding `body` cut at `cut`.
    fn ends(framing: Framing, body: &[u8], cut: usize) -> Vec<usize> {
        let mut frames = Frames::new(framing);
        let (a, b) = body.split_at(cut);
        let mut out = frames.ends_in(a);
        out.extend(frames.ends_in(b).into_iter().map(|e| e + cut));
        out
    }

    #[test]
    fn lines_end_at_newlines_however_the_body_is_cut() {
        let body = b"{\"type\":\"ADDED\"}\n{\"type\":\"BOOKMARK\"}\n{\"ty";
        for cut in 0..=body.len() {
            assert_eq!(ends(Framing::Lines, body, cut), [17, 37], "{cut}");
        }
    }

    #[test]
    fn length_prefixed_frames_end_after_their_length_however_the_body_is_cut() {
        let mut body = Vec::new();
        for payload in [&b"abc"[..], b"", b"defgh"] {
            body.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            body.extend_from_slice(payload);
        }
        body.extend_from_slice(&[0, 0]);
        for cut in 0..=body.len() {
            assert_eq!(
                ends(Framing::LengthPrefixed, &body, cut),
                [7, 11, 20],
                "{cut}"
            );
        }
        assert_eq!(
            Framing::of(Some("application/vnd.kubernetes.protobuf;stream=watch")),
            Framing::LengthPrefixed
        );
        assert_eq!(Framing::of(Some("application/json")), Framing::Lines);
    }
}

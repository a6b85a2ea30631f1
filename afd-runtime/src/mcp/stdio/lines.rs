//! Reading the client's stream a line at a time, never holding more than the longest line
//! the server reads: a longer line is cut at the limit and the rest of it skipped as it
//! arrives.

use tokio::io::{AsyncBufRead, AsyncBufReadExt as _};

/// What [`read_line`] read.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::mcp) enum Line {
    /// The stream ended with nothing more to read.
    End,
    /// A whole line (with its newline, unless the stream ended without one).
    Whole,
    /// A line longer than the limit: the buffer holds its first `limit` bytes; call
    /// [`skip_line`] to pass over the rest.
    TooLong,
}

/// Reads one line into `line` (cleared first), holding at most `limit` bytes of it.
pub(in crate::mcp) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Line> {
    line.clear();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if line.is_empty() {
                Line::End
            } else {
                Line::Whole
            });
        }
        let (take, whole) = match available.iter().position(|&byte| byte == b'\n') {
            Some(newline) => (newline + 1, true),
            None => (available.len(), false),
        };
        let room = limit - line.len();
        if take > room {
            line.extend_from_slice(&available[..room]);
            reader.consume(room);
            return Ok(Line::TooLong);
        }
        line.extend_from_slice(&available[..take]);
        reader.consume(take);
        if whole {
            return Ok(Line::Whole);
        }
    }
}

/// Skips the rest of a line (through its newline), reading it a buffer at a time; false
/// when the stream ended first.
pub(in crate::mcp) async fn skip_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> std::io::Result<bool> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(false);
        }
        match available.iter().position(|&byte| byte == b'\n') {
            Some(newline) => {
                reader.consume(newline + 1);
                return Ok(true);
            }
            None => {
                let all = available.len();
                reader.consume(all);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_read_whole_up_to_the_limit_and_cut_beyond_it() {
        let input: &[u8] = b"short\nexactly8\nmuch longer than eight\nlast";
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        let mut line = Vec::new();
        assert_eq!(
            read_line(&mut reader, &mut line, 9).await.unwrap(),
            Line::Whole
        );
        assert_eq!(line, b"short\n");
        assert_eq!(
            read_line(&mut reader, &mut line, 9).await.unwrap(),
            Line::Whole
        );
        assert_eq!(line, b"exactly8\n");
        assert_eq!(
            read_line(&mut reader, &mut line, 9).await.unwrap(),
            Line::TooLong
        );
        assert_eq!(line, b"much long");
        assert!(skip_line(&mut reader).await.unwrap());
        assert_eq!(
            read_line(&mut reader, &mut line, 9).await.unwrap(),
            Line::Whole
        );
        assert_eq!(line, b"last");
        assert_eq!(
            read_line(&mut reader, &mut line, 9).await.unwrap(),
            Line::End
        );
    }

    #[tokio::test]
    async fn skipping_stops_at_the_end_of_the_stream() {
        let input: &[u8] = b"no newline here";
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        let mut line = Vec::new();
        assert_eq!(
            read_line(&mut reader, &mut line, 4).await.unwrap(),
            Line::TooLong
        );
        assert!(!skip_line(&mut reader).await.unwrap());
    }
}

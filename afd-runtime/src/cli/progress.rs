//! [`TerminalProgress`]: the progress a handler reports, shown on the command line: a bar
//! on a terminal, plain lines on stderr otherwise (a log, a pipe, a test).

use std::io::IsTerminal as _;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::progress::{ProgressSink, ProgressUpdate};

/// Shows progress reports on stderr: a bar on a terminal (indicatif), else one line each,
/// `progress: 2/3 message`.
#[derive(Debug)]
pub struct TerminalProgress {
    bar: Option<Mutex<Option<ProgressBar>>>,
}

impl TerminalProgress {
    /// A bar when stderr is a terminal, plain lines otherwise.
    pub fn stderr() -> Self {
        TerminalProgress::new(std::io::stderr().is_terminal())
    }

    /// A bar (`true`) or plain lines.
    pub fn new(bar: bool) -> Self {
        TerminalProgress {
            bar: bar.then(|| Mutex::new(None)),
        }
    }

    /// Clears the bar, if one is shown, before the result is printed.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar
            && let Some(bar) = bar.lock().unwrap_or_else(|e| e.into_inner()).take()
        {
            bar.finish_and_clear();
        }
    }

    fn show(&self, update: &ProgressUpdate) {
        let Some(slot) = &self.bar else {
            eprintln!("{}", line(update));
            return;
        };
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        let bar = slot.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar
        });
        if let Some(total) = update.total {
            bar.set_length(total.max(0.0) as u64);
        }
        bar.set_position(update.progress.max(0.0) as u64);
        if let Some(message) = &update.message {
            bar.set_message(message.clone());
        }
    }
}

/// One report as a plain line: `progress: 2/3 copying`.
fn line(update: &ProgressUpdate) -> String {
    let mut text = format!("progress: {}", number(update.progress));
    if let Some(total) = update.total {
        text.push('/');
        text.push_str(&number(total));
    }
    if let Some(message) = &update.message {
        text.push(' ');
        text.push_str(message);
    }
    text
}

fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

impl ProgressSink for TerminalProgress {
    fn report(&self, update: ProgressUpdate) -> BoxFuture<'_, ()> {
        self.show(&update);
        Box::pin(std::future::ready(()))
    }
}

impl Drop for TerminalProgress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_reads_as_one_line() {
        assert_eq!(
            line(&ProgressUpdate::new(2.0, Some(3.0), Some("copying".into()))),
            "progress: 2/3 copying"
        );
        assert_eq!(line(&ProgressUpdate::new(0.5, None, None)), "progress: 0.5");
    }
}

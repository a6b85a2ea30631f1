//! The floor over stdio: reads JSON-RPC lines, answers each request with its fixed result.
//!
//!     floor-stdio

#[path = "../answer.rs"]
mod answer;

use std::io::{BufRead, Write};

fn main() -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    for line in std::io::stdin().lock().split(b'\n') {
        if let Some(mut answer) = answer::answer(&line?) {
            answer.push('\n');
            stdout.write_all(answer.as_bytes())?;
            stdout.flush()?;
        }
    }
    Ok(())
}

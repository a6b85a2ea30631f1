//! libFuzzer's entry for `afd_fuzz::targets::stdio_line` (what it checks is said there).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| afd_fuzz::targets::stdio_line::run(data));

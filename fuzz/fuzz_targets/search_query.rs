//! libFuzzer's entry for `afd_fuzz::targets::search_query` (what it checks is said there).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| afd_fuzz::targets::search_query::run(data));

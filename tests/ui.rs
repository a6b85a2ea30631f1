#[test]
fn ui() {}

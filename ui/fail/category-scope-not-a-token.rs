afd_runtime::category!("billing", "Invoices and refunds.", scopes("billing read"));

fn main() {}

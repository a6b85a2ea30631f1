//! Metrics as a scraper reads them: a shop replica serving `--metrics`, its series by the
//! MCP semantic conventions' names, their labels bounded however many made-up tool names
//! agents send, and a real Prometheus (Debian's package) scraping the replica and
//! answering for the series through its HTTP API.
//!
//! Needs `prometheus` on `PATH` (or `AFD_TEST_PROMETHEUS`); `.ci/run` installs it.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use afd_tests::oauth::Caller;
use afd_tests::services::{Running, free_port, program, temp_dir, wait_for_port};
use serde_json::{Value, json};

const SHOP: &str = env!("CARGO_BIN_EXE_afd-example-shop");

/// A shop replica on `port` with its metrics on `metrics`, each command a tool.
fn shop(port: u16, metrics: u16) -> Running {
    let child = Command::new(SHOP)
        .args(["serve", "--strategy", "individual", "--http"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--metrics")
        .arg(format!("127.0.0.1:{metrics}"))
        .env_remove("AFD_TOOL_STRATEGY")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the shop starts");
    let running = Running(child);
    for port in [port, metrics] {
        assert!(
            wait_for_port(port, Duration::from_secs(30)),
            "the shop did not listen on {port}"
        );
    }
    running
}

/// The Prometheus text of the replica's metrics.
async fn scrape(metrics: u16) -> String {
    let response = reqwest::get(format!("http://127.0.0.1:{metrics}/metrics"))
        .await
        .expect("the metrics listener answers");
    assert_eq!(response.status().as_u16(), 200);
    assert!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/plain")),
        "Prometheus text"
    );
    response.text().await.unwrap()
}

/// The samples of `metric` (its name up to the labels): each sample's labels and value.
fn samples<'a>(text: &'a str, metric: &str) -> Vec<(&'a str, f64)> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (name, labels) = series.split_once('{').unwrap_or((series, "}"));
            let labels = labels.strip_suffix('}').unwrap_or(labels);
            (name == metric).then(|| (labels, value.parse().unwrap_or(f64::NAN)))
        })
        .collect()
}

/// The value of `label` in a sample's labels.
fn label<'a>(labels: &'a str, label: &str) -> Option<&'a str> {
    let start = labels.find(&format!("{label}=\""))? + label.len() + 2;
    let end = labels[start..].find('"')? + start;
    Some(&labels[start..end])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_made_up_tool_names_add_no_series() {
    let (port, metrics) = (free_port(), free_port());
    let _shop = shop(port, metrics);
    let mut caller = Caller::new(&format!("http://127.0.0.1:{port}/mcp"), None);
    assert_eq!(caller.open().await.status, 200);
    for _ in 0..3 {
        let result = caller.result("product-list", json!({"limit": 1})).await;
        assert_eq!(result["isError"], false, "{result}");
    }
    let before = scrape(metrics).await;
    let series_before = before.lines().filter(|l| !l.starts_with('#')).count();
    for n in 0..1000 {
        let answer = caller.call(&format!("no-such-tool-{n}"), json!({})).await;
        assert_eq!(answer.status, 200, "{answer:?}");
    }
    let after = scrape(metrics).await;
    let series_after = after.lines().filter(|l| !l.starts_with('#')).count();

    // The made-up names are counted, under one value; none appears as a label.
    assert!(
        !after.contains("no-such-tool"),
        "a made-up name became a label value"
    );
    let session = caller.session.clone().unwrap();
    assert!(
        !after.contains(&session),
        "a session id became a label value"
    );
    let calls = samples(&after, "mcp_server_operation_duration_seconds_count");
    let other: f64 = calls
        .iter()
        .filter(|(labels, _)| label(labels, "gen_ai_tool_name") == Some("_OTHER"))
        .map(|(_, value)| value)
        .sum();
    assert_eq!(other, 1000.0, "{after}");
    let tools: BTreeSet<&str> = calls
        .iter()
        .filter_map(|(labels, _)| label(labels, "gen_ai_tool_name"))
        .collect();
    assert_eq!(tools, BTreeSet::from(["_OTHER", "product-list"]), "{after}");
    // At most a handful of new series (the `_OTHER` tool and the not-found outcome),
    // not a thousand.
    assert!(
        series_after <= series_before + 40,
        "{series_before} series before, {series_after} after"
    );
    // No command ran for them.
    let commands: BTreeSet<&str> = samples(&after, "afd_command_calls_total")
        .iter()
        .map(|(labels, _)| *labels)
        .collect();
    assert_eq!(
        commands,
        BTreeSet::from([r#"afd_command_name="product-list",afd_outcome="success""#]),
        "{after}"
    );

    // The conventions' attributes, and a session open on TCP.
    let listed = calls
        .iter()
        .find(|(labels, _)| label(labels, "gen_ai_tool_name") == Some("product-list"))
        .expect("the product-list series");
    assert_eq!(label(listed.0, "mcp_method_name"), Some("tools/call"));
    assert_eq!(label(listed.0, "network_transport"), Some("tcp"));
    assert_eq!(
        label(listed.0, "gen_ai_operation_name"),
        Some("execute_tool")
    );
    assert_eq!(listed.1, 3.0);
    let active = samples(&after, "afd_sessions_active");
    assert!(
        active.iter().any(
            |(labels, value)| label(labels, "network_transport") == Some("tcp") && *value >= 1.0
        ),
        "{after}"
    );
    // The buckets are the conventions'.
    assert!(after.contains("le=\"0.01\""), "{after}");
    assert!(after.contains("le=\"300\""), "{after}");
}

/// Prometheus's answer to an instant query: the result vector.
async fn query(prometheus: u16, promql: &str) -> Vec<Value> {
    let url = reqwest::Url::parse_with_params(
        &format!("http://127.0.0.1:{prometheus}/api/v1/query"),
        &[("query", promql)],
    )
    .expect("a query URL");
    let response = reqwest::get(url).await;
    let Ok(response) = response else {
        return Vec::new();
    };
    let body: Value = response.json().await.unwrap_or(Value::Null);
    body["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_scrapes_a_shop_replica_and_answers_for_its_series() {
    let Some(binary) = program("AFD_TEST_PROMETHEUS", "prometheus") else {
        return;
    };
    let (port, metrics, web) = (free_port(), free_port(), free_port());
    let _shop = shop(port, metrics);
    let dir = temp_dir("prometheus");
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: afd-shop\n    static_configs:\n      \
             - targets: ['127.0.0.1:{metrics}']\n"
        ),
    )
    .unwrap();
    let child = Command::new(binary)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{web}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus starts");
    let _prometheus = Running(child);
    assert!(
        wait_for_port(web, Duration::from_secs(60)),
        "prometheus did not listen on {web}"
    );

    let mut caller = Caller::new(&format!("http://127.0.0.1:{port}/mcp"), None);
    assert_eq!(caller.open().await.status, 200);
    for _ in 0..5 {
        caller.result("product-list", json!({"limit": 1})).await;
    }
    // What a dashboard asks: calls of a command, the operation histogram, the target up.
    let start = Instant::now();
    let (calls, histogram, up) = loop {
        let calls = query(
            web,
            "sum(afd_command_calls_total{job=\"afd-shop\",afd_command_name=\"product-list\",afd_outcome=\"success\"})",
        )
        .await;
        let histogram = query(
            web,
            "sum by (mcp_method_name, gen_ai_tool_name) (mcp_server_operation_duration_seconds_count{job=\"afd-shop\"})",
        )
        .await;
        let up = query(web, "up{job=\"afd-shop\"}").await;
        let value = |result: &[Value]| {
            result
                .first()
                .and_then(|sample| sample["value"][1].as_str())
                .and_then(|text| text.parse::<f64>().ok())
        };
        if value(&calls) == Some(5.0) && !histogram.is_empty() {
            break (value(&calls), histogram, value(&up));
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "Prometheus did not see the calls: {calls:?} {histogram:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(calls, Some(5.0));
    assert_eq!(up, Some(1.0));
    let listed = histogram
        .iter()
        .find(|series| series["metric"]["gen_ai_tool_name"] == "product-list")
        .expect("the tools/call series of product-list");
    assert_eq!(listed["metric"]["mcp_method_name"], "tools/call");
    let _ = std::fs::remove_dir_all(&dir);
}

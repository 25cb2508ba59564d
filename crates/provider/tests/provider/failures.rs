//! Every failure mode: authentication, retries, cut and malformed streams,
//! timeouts, cancellation.

use std::time::{Duration, Instant};

use dsh_model::Model;
use dsh_provider::mock::{MockProvider, MockReply, MockResponse};
use dsh_provider::{OpenAiProvider, ProviderError, ProviderSettings};
use serde_json::json;

use crate::support::{RecordingSink, eventually, request, settings_for};

#[tokio::test]
async fn unauthorized_names_the_key_variables_and_is_not_retried() {
    let mock = MockProvider::start(vec![MockResponse::status(
        401,
        r#"{"error":{"message":"Authentication Fails (no such user)","type":"authentication_error"}}"#,
    )])
    .unwrap();
    let mut settings = settings_for(&mock);
    settings.origins.api_key = Some("DSH_API_KEY".to_owned());
    let provider = OpenAiProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();

    let error = provider
        .complete(&request("hi"), &mut sink)
        .await
        .unwrap_err();

    assert!(
        error.message.contains("authentication failed (HTTP 401"),
        "{}",
        error.message
    );
    // The variable the key actually came from, and only that one.
    assert!(
        error
            .message
            .contains("the key in DSH_API_KEY was refused; set a valid key in DSH_API_KEY"),
        "{}",
        error.message
    );
    assert!(
        !error.message.contains("DEEPSEEK_API_KEY"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("Authentication Fails"),
        "{}",
        error.message
    );
    assert!(
        !error.message.contains("test-key"),
        "the key leaked: {}",
        error.message
    );
    assert_eq!(mock.requests().len(), 1);
    assert!(sink.retries.is_empty());
}

#[tokio::test]
async fn a_key_the_server_echoes_back_is_not_repeated_in_the_error() {
    let mock = MockProvider::start(vec![MockResponse::status(
        401,
        r#"{"error":{"message":"Incorrect API key provided: sk-echoed-0123456789"}}"#,
    )])
    .unwrap();
    let mut settings = settings_for(&mock);
    settings.api_key = Some("sk-echoed-0123456789".to_owned());
    let provider = OpenAiProvider::new(settings).unwrap();
    assert!(!format!("{provider:?}").contains("0123456789"));
    let error = provider
        .complete(&request("hi"), &mut RecordingSink::default())
        .await
        .unwrap_err();
    assert!(
        error
            .message
            .contains("Incorrect API key provided: [API key]"),
        "{}",
        error.message
    );
    assert!(!error.message.contains("0123456789"), "{}", error.message);
    let failure = format!("{:?}", error.failure);
    assert!(!failure.contains("0123456789"), "{failure}");
}

#[tokio::test]
async fn forbidden_names_a_configured_key_variable() {
    let mock = MockProvider::start(vec![MockResponse::status(403, "")]).unwrap();
    let mut settings = settings_for(&mock);
    settings.api_key_env = "OTHER_LLM_KEY".to_owned();
    let provider = OpenAiProvider::new(settings).unwrap();

    let error = provider
        .complete(&request("hi"), &mut RecordingSink::default())
        .await
        .unwrap_err();

    assert!(error.message.contains("(HTTP 403"), "{}", error.message);
    assert!(error.message.contains("OTHER_LLM_KEY"), "{}", error.message);
}

#[tokio::test]
async fn rate_limit_honours_retry_after_then_succeeds() {
    let mock = MockProvider::start(vec![
        MockResponse::status_retry_after(429, "1", r#"{"error":{"message":"slow down"}}"#),
        MockResponse::text("finally"),
    ])
    .unwrap();
    let mut settings = settings_for(&mock);
    // Backoff alone would retry after 10 ms; the header asks for 1 s.
    settings.retry_base_delay = Duration::from_millis(10);
    let provider = OpenAiProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();

    let reply = provider.complete(&request("hi"), &mut sink).await.unwrap();

    assert_eq!(reply.text, "finally");
    assert_eq!(sink.retries.len(), 1);
    assert_eq!(sink.retries[0].0, 1);
    assert!(
        sink.retries[0].1.contains("HTTP 429"),
        "{}",
        sink.retries[0].1
    );
    assert!(
        sink.retries[0].1.contains("slow down"),
        "{}",
        sink.retries[0].1
    );
    assert!(
        sink.retries[0].1.contains("retrying in 1.0s"),
        "{}",
        sink.retries[0].1
    );
    let recorded = mock.recorded();
    assert_eq!(recorded.len(), 2);
    let gap = recorded[1]
        .received_at
        .duration_since(recorded[0].received_at);
    assert!(
        gap >= Duration::from_millis(900),
        "retried after only {gap:?}"
    );
}

#[tokio::test]
async fn server_errors_retry_with_growing_backoff_then_give_up_naming_status_and_body() {
    let mock = MockProvider::start(vec![
        MockResponse::status(503, "upstream overloaded, try later"),
        MockResponse::status(500, "upstream overloaded, try later"),
        MockResponse::status(502, "bad gateway body"),
        MockResponse::text("never reached"),
    ])
    .unwrap();
    let mut settings = settings_for(&mock);
    settings.max_retries = 2;
    settings.retry_base_delay = Duration::from_millis(200);
    let provider = OpenAiProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();

    let error = provider
        .complete(&request("hi"), &mut sink)
        .await
        .unwrap_err();

    assert!(error.message.contains("HTTP 502"), "{}", error.message);
    assert!(
        error.message.contains("bad gateway body"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("gave up after 3 attempts"),
        "{}",
        error.message
    );
    assert_eq!(
        sink.retries.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert!(
        sink.retries[0].1.contains("HTTP 503"),
        "{}",
        sink.retries[0].1
    );
    assert_eq!(mock.remaining(), 1, "max_retries bounds the attempts");
    let times: Vec<Instant> = mock.recorded().iter().map(|r| r.received_at).collect();
    assert_eq!(times.len(), 3);
    // Backoff doubles: 200 ms, then 400 ms (lower bounds only; machines are noisy).
    assert!(times[1].duration_since(times[0]) >= Duration::from_millis(180));
    assert!(times[2].duration_since(times[1]) >= Duration::from_millis(380));
}

#[tokio::test]
async fn max_retries_zero_means_one_attempt() {
    let mock =
        MockProvider::start(vec![MockResponse::status_retry_after(429, "0", "busy")]).unwrap();
    let mut settings = settings_for(&mock);
    settings.max_retries = 0;
    let provider = OpenAiProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();

    let error = provider
        .complete(&request("hi"), &mut sink)
        .await
        .unwrap_err();

    assert!(error.message.contains("HTTP 429"), "{}", error.message);
    assert!(
        error.message.contains("gave up after 1 attempt)"),
        "{}",
        error.message
    );
    assert!(sink.retries.is_empty());
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn other_client_errors_fail_at_once_with_the_servers_message() {
    let mock = MockProvider::start(vec![MockResponse::status(
        400,
        r#"{"error":{"message":"Model Not Exist","type":"invalid_request_error"}}"#,
    )])
    .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();
    let mut sink = RecordingSink::default();

    let error = provider
        .complete(&request("hi"), &mut sink)
        .await
        .unwrap_err();

    assert!(error.message.contains("HTTP 400"), "{}", error.message);
    assert!(
        error.message.contains("Model Not Exist"),
        "{}",
        error.message
    );
    assert_eq!(mock.requests().len(), 1);
    assert!(sink.retries.is_empty());
}

#[tokio::test]
async fn a_stream_cut_mid_response_keeps_the_partial_text() {
    // Events: role, "The ", "answer ", then the connection drops.
    let mock = MockProvider::start(vec![MockResponse::CutAfter {
        reply: MockReply::chunks(["The ", "answer ", "is ", "42"]),
        events: 3,
    }])
    .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();
    let mut sink = RecordingSink::default();

    let error = provider
        .complete(&request("q"), &mut sink)
        .await
        .unwrap_err();

    assert_eq!(error.partial_text, "The answer ");
    assert_eq!(sink.texts(), vec!["The ", "answer "]);
    assert!(error.message.contains("mid-reply"), "{}", error.message);
    assert_eq!(mock.requests().len(), 1, "a broken stream is not retried");
}

#[tokio::test]
async fn a_body_ending_before_finish_reason_is_an_error_with_partial_text() {
    let mock = MockProvider::start(vec![MockResponse::Events(vec![
        json!({"choices":[{"index":0,"delta":{"content":"Half"},"finish_reason":null}]})
            .to_string(),
    ])])
    .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();

    let error = provider
        .complete(&request("q"), &mut RecordingSink::default())
        .await
        .unwrap_err();

    assert_eq!(error.partial_text, "Half");
    assert!(
        error
            .message
            .contains("closed before the reply was complete"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_malformed_chunk_is_a_clear_error_with_partial_text() {
    let mock = MockProvider::start(vec![MockResponse::Malformed {
        reply: MockReply::chunks(["Partial ", "reply"]),
        after_events: 2,
        raw: "{\"choices\": [oops".to_owned(),
    }])
    .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();

    let error = provider
        .complete(&request("q"), &mut RecordingSink::default())
        .await
        .unwrap_err();

    assert_eq!(error.partial_text, "Partial ");
    assert!(
        error.message.contains("malformed stream chunk"),
        "{}",
        error.message
    );
    assert!(error.message.contains("[oops"), "{}", error.message);
}

#[tokio::test]
async fn an_error_object_inside_the_stream_is_reported() {
    let mock = MockProvider::start(vec![MockResponse::Events(vec![
        json!({"choices":[{"index":0,"delta":{"content":"So far"},"finish_reason":null}]})
            .to_string(),
        json!({"error":{"message":"context length exceeded","type":"invalid_request_error"}})
            .to_string(),
    ])])
    .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();

    let error = provider
        .complete(&request("q"), &mut RecordingSink::default())
        .await
        .unwrap_err();

    assert_eq!(error.partial_text, "So far");
    assert!(
        error.message.contains("context length exceeded"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn no_response_headers_times_out() {
    let mock = MockProvider::start(vec![MockResponse::Hang {
        send_headers: false,
    }])
    .unwrap();
    let mut settings = settings_for(&mock);
    settings.request_timeout = Duration::from_millis(500);
    let provider = OpenAiProvider::new(settings).unwrap();

    let started = Instant::now();
    let error = provider
        .complete(&request("q"), &mut RecordingSink::default())
        .await
        .unwrap_err();

    assert!(error.message.contains("timed out"), "{}", error.message);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(mock.requests().len(), 1, "timeouts are not retried");
    assert!(
        eventually(Duration::from_secs(5), || mock.disconnects() == 1).await,
        "the timed-out connection stayed open"
    );
}

#[tokio::test]
async fn a_stream_that_stalls_times_out_with_partial_text() {
    let mock = MockProvider::start(vec![MockResponse::Reply(
        MockReply::chunks(["quick ", "then very slow"]).with_delay(Duration::from_secs(3)),
    )])
    .unwrap();
    let mut settings = settings_for(&mock);
    settings.request_timeout = Duration::from_millis(500);
    let provider = OpenAiProvider::new(settings).unwrap();

    let error = provider
        .complete(&request("q"), &mut RecordingSink::default())
        .await
        .unwrap_err();

    // Only the role chunk arrived before the first 3 s pause.
    assert!(error.message.contains("stalled"), "{}", error.message);
    assert_eq!(error.partial_text, "");

    let mock = MockProvider::start(vec![MockResponse::Hang { send_headers: true }]).unwrap();
    let mut settings = settings_for(&mock);
    settings.request_timeout = Duration::from_millis(500);
    let provider = OpenAiProvider::new(settings).unwrap();
    let error = provider
        .complete(&request("q"), &mut RecordingSink::default())
        .await
        .unwrap_err();
    assert!(error.message.contains("stalled"), "{}", error.message);
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    // A port that was free a moment ago and has no listener now.
    let port = {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        listener.local_addr().unwrap().port()
    };
    let settings = ProviderSettings {
        base_url: format!("http://127.0.0.1:{port}"),
        api_key: Some("k".into()),
        max_retries: 1,
        retry_base_delay: Duration::from_millis(10),
        ..ProviderSettings::default()
    };
    let provider = OpenAiProvider::new(settings).unwrap();
    let mut sink = RecordingSink::default();

    let error = provider
        .complete(&request("q"), &mut sink)
        .await
        .unwrap_err();

    assert!(
        error.message.contains("cannot connect"),
        "{}",
        error.message
    );
    assert!(
        error.message.contains(&port.to_string()),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("gave up after 2 attempts"),
        "{}",
        error.message
    );
    assert_eq!(sink.retries.len(), 1);
}

#[tokio::test]
async fn dropping_the_future_closes_the_connection() {
    for send_headers in [false, true] {
        let mock = MockProvider::start(vec![MockResponse::Hang { send_headers }]).unwrap();
        let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();
        let mut sink = RecordingSink::default();
        let request = request("q");
        {
            let pending = provider.complete(&request, &mut sink);
            let outcome = tokio::time::timeout(Duration::from_millis(300), pending).await;
            assert!(outcome.is_err(), "the hang answered");
        }
        assert!(
            eventually(Duration::from_secs(5), || mock.disconnects() == 1).await,
            "the mock never saw the connection close (send_headers={send_headers})"
        );
        assert_eq!(mock.requests().len(), 1);
    }
}

#[tokio::test]
async fn dropping_the_future_mid_stream_closes_the_connection() {
    let chunks: Vec<String> = (0..100).map(|n| format!("{n} ")).collect();
    let mock = MockProvider::start(vec![MockResponse::Reply(
        MockReply::chunks(chunks).with_delay(Duration::from_millis(50)),
    )])
    .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();
    let mut sink = RecordingSink::default();
    let request = request("q");
    {
        let pending = provider.complete(&request, &mut sink);
        let outcome = tokio::time::timeout(Duration::from_millis(400), pending).await;
        assert!(outcome.is_err(), "the slow reply finished early");
    }
    assert!(!sink.deltas.is_empty(), "nothing streamed before the drop");
    assert!(
        eventually(Duration::from_secs(5), || mock.disconnects() == 1).await,
        "the mock kept streaming into a dropped request"
    );
}

#[tokio::test]
async fn running_out_of_script_is_a_clear_500() {
    let mock = MockProvider::start(vec![MockResponse::text("only one")]).unwrap();
    let mut settings = settings_for(&mock);
    settings.max_retries = 0;
    let provider = OpenAiProvider::new(settings).unwrap();

    provider
        .complete(&request("1"), &mut RecordingSink::default())
        .await
        .unwrap();
    let error = provider
        .complete(&request("2"), &mut RecordingSink::default())
        .await
        .unwrap_err();

    assert!(error.message.contains("HTTP 500"), "{}", error.message);
    assert!(
        error.message.contains("script exhausted: request #2"),
        "{}",
        error.message
    );
}

#[test]
fn a_missing_key_names_the_variables() {
    let error = OpenAiProvider::new(ProviderSettings::default()).unwrap_err();
    assert!(matches!(error, ProviderError::MissingApiKey { .. }));
    let message = error.to_string();
    assert!(message.contains("DSH_API_KEY"), "{message}");
    assert!(message.contains("DEEPSEEK_API_KEY"), "{message}");
    // With no API chosen, the Anthropic and OpenAI keys were looked at too.
    assert!(
        message.contains("ANTHROPIC_API_KEY and OPENAI_API_KEY are all unset"),
        "{message}"
    );

    let settings = ProviderSettings {
        api_key_env: "MY_KEY".into(),
        api_key: Some("   ".into()),
        ..ProviderSettings::default()
    };
    let message = OpenAiProvider::new(settings).unwrap_err().to_string();
    assert!(message.contains("MY_KEY"), "{message}");
}

/// Every refused request carries the typed failure: category from the
/// status, the provider's own message, the wait it asked for and the
/// endpoint, so bridges and the terminal need not parse the message.
#[tokio::test]
async fn refusals_carry_the_typed_failure() {
    use dsh_model::FailureCategory;
    let cases = [
        (401, FailureCategory::AuthenticationFailed),
        (400, FailureCategory::InvalidRequest),
        (429, FailureCategory::RateLimit),
        (529, FailureCategory::ServerError),
    ];
    for (status, category) in cases {
        let mock = MockProvider::start(vec![MockResponse::status_retry_after(
            status,
            "2",
            r#"{"error":{"message":"MOCK: refused"}}"#,
        )])
        .unwrap();
        let mut settings = settings_for(&mock);
        settings.max_retries = 0;
        let provider = OpenAiProvider::new(settings).unwrap();
        let error = provider
            .complete(&request("hi"), &mut RecordingSink::default())
            .await
            .unwrap_err();
        let failure = error.failure.clone().expect("a typed failure");
        assert_eq!(failure.category, category, "{status}");
        assert_eq!(error.category(), category);
        assert_eq!(failure.status, Some(status));
        assert_eq!(failure.message, "MOCK: refused");
        assert_eq!(failure.retry_after, Some(Duration::from_secs(2)));
        let gateway = failure.gateway.clone().expect("the endpoint");
        assert!(gateway.starts_with("127.0.0.1:"), "{gateway}");
    }
}

#[test]
fn a_missing_key_is_typed_too() {
    let settings = ProviderSettings {
        api_key: None,
        ..ProviderSettings::default()
    };
    let Err(error) = OpenAiProvider::new(settings) else {
        panic!("a provider without a key was built");
    };
    let failure = error.failure().expect("typed");
    assert_eq!(failure.category, dsh_model::FailureCategory::MissingKey);
    assert!(failure.fix().contains("DSH_API_KEY"));
}

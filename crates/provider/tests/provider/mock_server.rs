//! The mock server itself, as the CLI's tests will use it.

use std::time::Duration;

use dsh_model::Model;
use dsh_provider::OpenAiProvider;
use dsh_provider::mock::{MockProvider, MockResponse};

use crate::support::{RecordingSink, request, settings_for};

/// `start_blocking` serves from its own thread, so a synchronous test (or a
/// child process pointed at `base_url`) can use it.
#[test]
fn start_blocking_serves_a_client_on_another_runtime() {
    let mock = MockProvider::start_blocking(vec![MockResponse::text("from a thread")]).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();
    let reply = runtime
        .block_on(provider.complete(&request("hi"), &mut RecordingSink::default()))
        .unwrap();
    assert_eq!(reply.text, "from a thread");
    assert_eq!(mock.requests().len(), 1);
    assert_eq!(mock.remaining(), 0);
}

#[test]
fn dropping_the_mock_stops_it() {
    let mock = MockProvider::start_blocking(vec![MockResponse::Hang {
        send_headers: false,
    }])
    .unwrap();
    let address = mock.base_url().trim_start_matches("http://").to_owned();
    // A hanging connection must not keep the server alive past the drop.
    let _hanging = std::net::TcpStream::connect(&address).unwrap();
    drop(mock);
    let refused =
        std::net::TcpStream::connect_timeout(&address.parse().unwrap(), Duration::from_secs(2));
    assert!(refused.is_err(), "the mock still accepts connections");
}

#[tokio::test]
async fn other_paths_get_404_without_consuming_the_script() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mock = MockProvider::start(vec![MockResponse::text("kept")]).unwrap();
    let address = mock.base_url().trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&address).await.unwrap();
    socket
        .write_all(b"GET /models HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    assert_eq!(mock.remaining(), 1);

    let provider = OpenAiProvider::new(settings_for(&mock)).unwrap();
    let reply = provider
        .complete(&request("hi"), &mut RecordingSink::default())
        .await
        .unwrap();
    assert_eq!(reply.text, "kept");
    let recorded = mock.recorded();
    assert_eq!(recorded.len(), 2);
    assert_eq!(
        (recorded[0].method.as_str(), recorded[0].path.as_str()),
        ("GET", "/models")
    );
}

#[test]
fn start_outside_a_runtime_is_an_error_not_a_panic() {
    let error = MockProvider::start(vec![]).unwrap_err();
    assert!(error.to_string().contains("start_blocking"), "{error}");
}

//! A small HTTP/1.1 server on 127.0.0.1 for the fake model APIs that real
//! CLIs are pointed at: it reads each request (keep-alive, bodies by
//! `Content-Length` or chunked), hands it to the test's handler, and
//! writes the handler's reply. The fakes (the Messages API for Claude
//! Code, the Responses API for Codex, the Gemini API for Gemini CLI) only
//! say what to answer, and keep what they were asked in a [`Log`].
//!
//! It stops by itself: when dropped, and at the latest after [`LIFETIME`],
//! and each connection after [`IDLE`] without a request. It binds
//! 127.0.0.1 only; a test that starts a real CLI runs in its own
//! loopback-only network namespace besides ([`super::netns`]).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

pub const LIFETIME: Duration = Duration::from_secs(900);
pub const IDLE: Duration = Duration::from_secs(60);

/// One request as it came.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Names in lower case, in the order sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (null when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// A request as a fake API logs it: the session its CLI named (in a
/// header of the CLI's), the path, and the body as JSON.
#[derive(Clone, Debug)]
pub struct Logged {
    pub session: Option<String>,
    pub path: String,
    pub body: Value,
}

/// The requests a fake API logged, shared by its handler and the test.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<Logged>>>);

impl Log {
    pub fn push(&self, logged: Logged) {
        self.0.lock().unwrap().push(logged);
    }

    /// The requests logged so far for `session`.
    pub fn of_session(&self, session: &str) -> Vec<Logged> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.session.as_deref() == Some(session))
            .cloned()
            .collect()
    }

    /// How many requests were logged so far.
    pub fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// The requests logged since the `from`-th.
    pub fn since(&self, from: usize) -> Vec<Logged> {
        self.0.lock().unwrap()[from..].to_vec()
    }
}

/// `events` as a stream of server-sent events, each named by its `type`
/// (as the Messages and Responses APIs stream them).
pub fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// What the handler answers.
pub struct Reply {
    pub status: &'static str,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn new(
        status: &'static str,
        content_type: &'static str,
        body: impl Into<Vec<u8>>,
    ) -> Reply {
        Reply {
            status,
            content_type,
            body: body.into(),
        }
    }

    pub fn not_found() -> Reply {
        Reply::new("404 Not Found", "text/plain", "")
    }
}

type Handler = dyn Fn(&Received) -> Reply + Send + Sync;

pub struct FakeHttp {
    pub port: u16,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl FakeHttp {
    /// Listens on a free port of 127.0.0.1 and answers every request with
    /// `handler`, each connection on a thread of its own.
    pub fn start(handler: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> FakeHttp {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let stopping = stop.clone();
        let accept = std::thread::spawn(move || {
            let deadline = Instant::now() + LIFETIME;
            while !stopping.load(Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let handler = handler.clone();
                        std::thread::spawn(move || serve(stream, &*handler));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        FakeHttp {
            port,
            stop,
            accept: Some(accept),
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for FakeHttp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Serves one keep-alive connection until it closes or idles.
fn serve(stream: TcpStream, handler: &Handler) {
    stream.set_read_timeout(Some(IDLE)).ok();
    let mut writer = stream.try_clone().expect("clone a TcpStream");
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader) {
        let reply = handler(&request);
        let head = format!(
            "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n",
            reply.status,
            reply.content_type,
            reply.body.len()
        );
        if writer.write_all(head.as_bytes()).is_err()
            || (request.method != "HEAD" && writer.write_all(&reply.body).is_err())
        {
            return;
        }
    }
}

fn read_request(reader: &mut impl BufRead) -> Option<Received> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).ok()? == 0 {
        return None;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v): &(String, String)| v.clone())
    };
    let body = if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        read_chunked(reader)?
    } else {
        let length: usize = find("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        reader.read_exact(&mut body).ok()?;
        body
    };
    Some(Received {
        method,
        path,
        headers,
        body,
    })
}

fn read_chunked(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).ok()?;
        let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).ok()?;
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

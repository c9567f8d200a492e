//! One HTTP/1.1 request to the running Paige, which listens on loopback over plain HTTP:
//! std's `TcpStream`, a deadline over the whole exchange, no async runtime and no TLS. A TLS
//! client is never needed here, and building one (reqwest with native-tls) reads the system's
//! root certificates — OpenSSL parses `/etc/ssl/certs/ca-certificates.crt` even when told to
//! use none of them — which was most of a `paige memory query`'s 100+ ms. `paige hook`,
//! `paige memory`, `paige session` and `paige claude` ask Paige through it.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// A request to Paige at a `http://host:port[/base]` url.
pub(crate) struct Request<'a> {
    pub method: &'a str,
    /// After the url's base, from its first `/`.
    pub path: &'a str,
    /// Sent as `Authorization: Bearer`.
    pub token: &'a str,
    /// A JSON body, if any.
    pub body: Option<&'a [u8]>,
    /// For connecting, sending and the whole answer.
    pub timeout: Duration,
    /// Tells Paige how long this command still waits (`X-Paige-Answer-Within-Ms`): it does
    /// not act on a decision nobody hears.
    pub answer_within: bool,
}

/// Paige's answer: the status and the body (de-chunked).
pub(crate) struct Response {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Sends `request` to Paige at `base_url` and reads the whole answer before the timeout.
pub(crate) fn send(base_url: &str, request: &Request<'_>) -> anyhow::Result<Response> {
    let (host, port, base) = parse_url(base_url)?;
    let deadline = Instant::now() + request.timeout;
    let remaining = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let addr = (host.as_str(), port)
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {host}"))?
        .next()
        .with_context(|| format!("cannot resolve {host}"))?;
    let mut stream =
        TcpStream::connect_timeout(&addr, remaining()).with_context(|| format!("cannot reach paige at {addr}"))?;
    stream.set_nodelay(true).ok();
    stream.set_write_timeout(Some(remaining()))?;
    let host_header = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
    let mut head = format!(
        "{} {base}{} HTTP/1.1\r\nHost: {host_header}\r\nAuthorization: Bearer {}\r\nAccept: application/json\r\n",
        request.method, request.path, request.token
    );
    if let Some(body) = request.body {
        head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
    }
    if request.answer_within {
        head.push_str(&format!("X-Paige-Answer-Within-Ms: {}\r\n", remaining().as_millis()));
    }
    head.push_str("Connection: close\r\n\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(request.body.unwrap_or_default());
    stream.write_all(&bytes).context("cannot send the request to paige")?;
    let waited = || format!("paige did not answer within {} ms", request.timeout.as_millis());
    let mut response = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        stream.set_read_timeout(Some(remaining()))?;
        if Instant::now() >= deadline {
            bail!("{}", waited());
        }
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                response.extend_from_slice(&buf[..n]);
                if complete(&response) {
                    break;
                }
            }
            Err(err) if matches!(err.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                bail!("{}", waited())
            }
            Err(err) => return Err(err).context("cannot read paige's answer"),
        }
    }
    let (status, body) = split_response(&response)?;
    Ok(Response { status, body })
}

/// `http://host:port[/base]` → (host, port, base without trailing slash).
pub(crate) fn parse_url(url: &str) -> anyhow::Result<(String, u16, String)> {
    let rest = url.strip_prefix("http://").with_context(|| format!("PAIGE_URL {url:?} is not an http:// url"))?;
    let (authority, base) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = authority.rsplit_once(':').with_context(|| format!("PAIGE_URL {url:?} has no port"))?;
    let port = port.parse().with_context(|| format!("PAIGE_URL {url:?} has a bad port"))?;
    Ok((host.trim_matches(['[', ']']).to_owned(), port, base.to_owned()))
}

fn header_end(response: &[u8]) -> Option<usize> {
    response.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.trim().eq_ignore_ascii_case(name)).map(|(_, v)| v.trim()))
}

fn content_length(head: &str) -> Option<usize> {
    header(head, "content-length").and_then(|v| v.parse().ok())
}

fn chunked(head: &str) -> bool {
    header(head, "transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
}

/// True once the headers and `Content-Length` bytes of body (or the last chunk) have arrived.
fn complete(response: &[u8]) -> bool {
    let Some(end) = header_end(response) else { return false };
    let head = String::from_utf8_lossy(&response[..end]);
    if chunked(&head) {
        return matches!(dechunk(&response[end..]), Ok(Some(_)));
    }
    content_length(&head).is_some_and(|len| response.len() >= end + len)
}

/// A chunked body's content; `None` until its last chunk has arrived.
fn dechunk(mut body: &[u8]) -> anyhow::Result<Option<Vec<u8>>> {
    let mut out = Vec::new();
    loop {
        let Some(line_end) = body.windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
        let size = std::str::from_utf8(&body[..line_end]).ok().and_then(|line| {
            let digits = line.split(';').next().unwrap_or_default().trim();
            usize::from_str_radix(digits, 16).ok()
        });
        let size = size.context("paige's answer has a bad chunk")?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(Some(out));
        }
        if body.len() < size + 2 {
            return Ok(None);
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

fn split_response(response: &[u8]) -> anyhow::Result<(u16, Vec<u8>)> {
    let end = header_end(response).context("paige's answer is not http")?;
    let head = String::from_utf8_lossy(&response[..end]);
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .filter(|_| head.starts_with("HTTP/1."))
        .context("paige's answer is not http")?;
    let body = &response[end..];
    let body = if chunked(&head) {
        dechunk(body)?.context("paige's answer was cut short")?
    } else {
        match content_length(&head) {
            Some(len) if body.len() >= len => body[..len].to_vec(),
            Some(_) => bail!("paige's answer was cut short"),
            None => body.to_vec(),
        }
    };
    Ok((status, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_url_takes_host_port_and_base() {
        assert_eq!(parse_url("http://127.0.0.1:4100").unwrap(), ("127.0.0.1".into(), 4100, String::new()));
        assert_eq!(parse_url("http://localhost:9/x/").unwrap(), ("localhost".into(), 9, "/x".into()));
        assert!(parse_url("https://127.0.0.1:1").is_err());
        assert!(parse_url("http://127.0.0.1").is_err());
    }

    #[test]
    fn split_response_rejects_short_bodies_and_non_http() {
        let ok = split_response(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}").unwrap();
        assert_eq!((ok.0, ok.1.as_slice()), (200, &b"{}"[..]));
        assert!(split_response(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}").is_err());
        assert!(split_response(b"garbage\r\n\r\n").is_err());
    }

    #[test]
    fn a_chunked_answer_is_complete_at_its_last_chunk_and_read_without_its_framing() {
        let answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3;x=y\r\n:1}\r\n0\r\n\r\n";
        for cut in 0..answer.len() - 2 {
            assert!(!complete(&answer[..cut]), "complete at {cut}");
        }
        assert!(complete(answer));
        let (status, body) = split_response(answer).unwrap();
        assert_eq!((status, body.as_slice()), (200, &b"{\"a\":1}"[..]));
        assert!(split_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n").is_err());
    }

    #[test]
    fn a_request_reaches_a_loopback_server_with_its_token_body_and_deadline_header() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/base", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 1024];
            while !seen.ends_with(b"{\"q\":1}") {
                let n = conn.read(&mut buf).unwrap();
                seen.extend_from_slice(&buf[..n]);
            }
            conn.write_all(b"HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\ndone").unwrap();
            String::from_utf8(seen).unwrap()
        });
        let request = Request {
            method: "POST",
            path: "/api/x",
            token: "t0k",
            body: Some(b"{\"q\":1}"),
            timeout: Duration::from_secs(10),
            answer_within: true,
        };
        let response = send(&url, &request).unwrap();
        assert_eq!((response.status, response.body.as_slice()), (201, &b"done"[..]));
        let seen = server.join().unwrap();
        assert!(seen.starts_with("POST /base/api/x HTTP/1.1\r\n"), "{seen}");
        for header in ["Authorization: Bearer t0k", "Content-Length: 7", "X-Paige-Answer-Within-Ms: "] {
            assert!(seen.contains(header), "{header} in {seen}");
        }
    }

    #[test]
    fn an_answer_slower_than_the_timeout_is_an_error_naming_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let request = Request {
            method: "GET",
            path: "/api/session",
            token: "t",
            body: None,
            timeout: Duration::from_millis(200),
            answer_within: false,
        };
        // Accepted by the kernel's backlog, never answered.
        let err = send(&url, &request).err().expect("no answer");
        assert!(err.to_string().contains("did not answer within 200 ms"), "{err:#}");
        drop(listener);
    }
}

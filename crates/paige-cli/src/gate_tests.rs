//! The gate and the relay over real sockets, with real clients: curl through the proxy, a
//! plain TCP client through a forwarded port, and a stub upstream proxy that records what the
//! gate asks it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;

use super::{Rules, relay, serve};

/// A web server on 127.0.0.1 that answers every request with `hello from PORT`.
fn web_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let _ = super::read_until(&mut stream, b"\r\n\r\n");
                let body = format!("hello from {port}");
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

/// A gate allowing `allow` (with `upstream`), and a relay in front of it: one forwarded
/// listener per `(opening line)` and a proxy listener. Returns the gate's socket (in `dir`),
/// the forwarded ports in order, and the proxy's port.
fn gate_and_relay(
    dir: &tempfile::TempDir,
    allow: &[String],
    upstream: Option<&str>,
    forwards: &[u16],
) -> (std::path::PathBuf, Vec<u16>, u16) {
    let socket = dir.path().join("gate.sock");
    let rules = Arc::new(Rules::new(allow.to_vec(), upstream).expect("rules"));
    let listener = UnixListener::bind(&socket).expect("gate socket");
    std::thread::spawn(move || serve(listener, rules));
    let mut listeners = Vec::new();
    let mut ports = Vec::new();
    // In the jail each relay port is the port it forwards; here, beside the servers, it is a
    // free one that opens with the same line.
    for port in forwards {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        ports.push(l.local_addr().expect("addr").port());
        listeners.push((l, format!("connect 127.0.0.1:{port}\n")));
    }
    let proxy = TcpListener::bind("127.0.0.1:0").expect("bind");
    let proxy_port = proxy.local_addr().expect("addr").port();
    listeners.push((proxy, "proxy\n".to_owned()));
    let gate = socket.clone();
    std::thread::spawn(move || relay(listeners, gate));
    (socket, ports, proxy_port)
}

fn curl(args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "10"])
        .args(args)
        .output()
        .expect("curl (scripts/test.sh installs it)");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn the_gate_passes_only_allowed_loopback_ports_and_connects_only_to_allowed_hosts() {
    let dir = tempfile::tempdir().expect("dir");
    let (paige, model, learners) = (web_server(), web_server(), web_server());
    let allow = [format!("127.0.0.1:{paige}"), format!("127.0.0.1:{model}")];
    let (socket, ports, proxy) = gate_and_relay(&dir, &allow, None, &[paige, learners]);

    // A forwarded port reaches its server, over and over (a plain client, a connection each).
    for _ in 0..3 {
        let (ok, text) = curl(&[&format!("http://127.0.0.1:{}/health", ports[0])]);
        assert!(ok && text == format!("hello from {paige}"), "{text}");
    }
    // A port the gate does not allow: the connection is closed, nothing reaches the server.
    let (ok, text) = curl(&[&format!("http://127.0.0.1:{}/", ports[1])]);
    assert!(!ok && !text.contains("hello"), "the learner's local service is out of reach: {text}");

    // Through the proxy: CONNECT to an allowed destination tunnels; anything else is 403.
    let via = format!("http://127.0.0.1:{proxy}");
    let (ok, text) = curl(&["-p", "-x", &via, &format!("http://127.0.0.1:{model}/v1/messages")]);
    assert!(ok && text == format!("hello from {model}"), "{text}");
    let (ok, text) = curl(&["-p", "-x", &via, &format!("http://127.0.0.1:{learners}/")]);
    assert!(!ok && text.contains("403"), "CONNECT to a destination not allowed: {text}");
    let (ok, text) = curl(&["-x", &via, &format!("http://127.0.0.1:{model}/")]);
    assert!(ok && text.contains("only CONNECT"), "a plain-HTTP proxy request is refused: {text}");

    // The gate's own greeting, and an opening line it does not know.
    let mut hello = UnixStream::connect(&socket).expect("gate");
    hello.write_all(b"hello\n").expect("write");
    let mut answer = String::new();
    hello.read_to_string(&mut answer).expect("read");
    assert_eq!(answer, "ok\n");
    let mut odd = UnixStream::connect(&socket).expect("gate");
    odd.write_all(b"connect 10.0.0.1:80\n").expect("write");
    assert_eq!(odd.read(&mut [0u8; 16]).expect("closed"), 0, "closed without a word");
}

#[test]
fn with_the_learners_own_proxy_the_gate_connects_through_it_with_its_credentials() {
    let upstream = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = upstream.local_addr().expect("addr").port();
    let asked = std::thread::spawn(move || {
        let (mut stream, _) = upstream.accept().expect("the gate connects");
        let head = super::read_until(&mut stream, b"\r\n\r\n").expect("a CONNECT head");
        stream.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").expect("answer");
        // The tunnel: echo a line.
        let mut line = [0u8; 5];
        stream.read_exact(&mut line).expect("tunnel bytes");
        stream.write_all(&line).expect("echo");
        head
    });
    let dir = tempfile::tempdir().expect("dir");
    let url = format!("http://learner:s%40cret@127.0.0.1:{port}");
    let (_, _, proxy) = gate_and_relay(&dir, &["api.example.test:443".to_owned()], Some(&url), &[]);
    let mut client = TcpStream::connect(("127.0.0.1", proxy)).expect("proxy");
    client.write_all(b"CONNECT api.example.test:443 HTTP/1.1\r\nhost: api.example.test:443\r\n\r\n").expect("connect");
    let reply = super::read_until(&mut client, b"\r\n\r\n").expect("reply");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    client.write_all(b"ping\n").expect("tunnel");
    let mut echoed = [0u8; 5];
    client.read_exact(&mut echoed).expect("echo");
    assert_eq!(&echoed, b"ping\n");
    let head = asked.join().expect("upstream");
    assert!(head.starts_with("CONNECT api.example.test:443 HTTP/1.1\r\n"), "{head}");
    // base64("learner:s@cret")
    assert!(head.contains("proxy-authorization: Basic bGVhcm5lcjpzQGNyZXQ=\r\n"), "{head}");
}

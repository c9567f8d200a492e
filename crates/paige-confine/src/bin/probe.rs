//! The tests' probe: `paige-confine-probe '<JSON Policy>' PROBE [ARG]` applies the policy to
//! itself, then tries PROBE once and prints `ok` (exit 0) or `errno N` (exit 1); a policy
//! that cannot be applied prints `apply: <error>` (exit 3). What was applied goes to stderr as
//! JSON. Not shipped.

use std::io::{Error, Write};
use std::process::ExitCode;

fn check(rc: libc::c_long) -> Result<(), Error> {
    if rc < 0 { Err(Error::last_os_error()) } else { Ok(()) }
}

fn cstring(s: &str) -> std::ffi::CString {
    std::ffi::CString::new(s).expect("no NUL")
}

/// Work that must happen before the policy is applied.
fn prepare(probe: &str) -> Result<(), Error> {
    if probe == "mount" {
        // A private mount namespace, so a mount that works does not reach the host.
        // SAFETY: plain syscalls with valid C strings.
        unsafe {
            check(libc::unshare(libc::CLONE_NEWNS).into())?;
            let root = cstring("/");
            let flags = libc::MS_REC | libc::MS_PRIVATE;
            check(libc::mount(std::ptr::null(), root.as_ptr(), std::ptr::null(), flags, std::ptr::null()).into())?;
        }
    }
    Ok(())
}

fn run(probe: &str, arg: &str) -> Result<(), Error> {
    match probe {
        "read" => std::fs::read(arg).map(drop),
        "write" => std::fs::write(arg, b"written by the probe"),
        "tcp" => std::net::TcpStream::connect(("127.0.0.1", arg.parse::<u16>().expect("port"))).map(drop),
        "abstract" => {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(arg.as_bytes())?;
            std::os::unix::net::UnixStream::connect_addr(&addr).map(drop)
        }
        // SAFETY: socket(2) with constant arguments; the fd is closed.
        "unix-socket" => unsafe {
            let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
            check(fd.into())?;
            libc::close(fd);
            Ok(())
        },
        "socketpair" => std::os::unix::net::UnixStream::pair().map(drop),
        "tiocsti" | "tiocsti-high-bits" => {
            let (mut master, mut slave) = (0, 0);
            // SAFETY: openpty fills two fds; null name, termios and winsize are allowed.
            let rc = unsafe {
                libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), std::ptr::null())
            };
            check(rc.into())?;
            // The kernel reads the command as 32 bits: the high bits must not slip past the filter.
            let high: libc::c_ulong = if probe == "tiocsti-high-bits" { 1 << 32 } else { 0 };
            let byte: libc::c_char = b'x' as libc::c_char;
            // SAFETY: TIOCSTI reads one byte from the pointer.
            let rc = unsafe { libc::syscall(libc::SYS_ioctl, slave, libc::TIOCSTI as libc::c_ulong | high, &byte) };
            check(rc)
        }
        // SAFETY: PTRACE_TRACEME takes no pointers.
        "ptrace-traceme" => check(unsafe { libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) }),
        "process-vm-readv" => {
            let source = [7u8; 8];
            let mut target = [0u8; 8];
            let local = libc::iovec { iov_base: target.as_mut_ptr().cast(), iov_len: 8 };
            let remote = libc::iovec { iov_base: source.as_ptr() as *mut _, iov_len: 8 };
            // SAFETY: both iovecs point at 8 valid bytes of this process.
            check(unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) } as libc::c_long)
        }
        "mount" => {
            let (source, target, kind) = (cstring("none"), cstring(arg), cstring("tmpfs"));
            // SAFETY: valid C strings; no data.
            check(unsafe { libc::mount(source.as_ptr(), target.as_ptr(), kind.as_ptr(), 0, std::ptr::null()) }.into())
        }
        // SAFETY: unshare takes flags only.
        "unshare-user" => check(unsafe { libc::unshare(libc::CLONE_NEWUSER) }.into()),
        "spawn" => {
            let status = std::process::Command::new(arg).status()?;
            if status.success() { Ok(()) } else { Err(Error::other(format!("{arg}: {status}"))) }
        }
        "mknod" => {
            let path = cstring(arg);
            // SAFETY: valid C string; /dev/null's device numbers.
            check(unsafe { libc::mknod(path.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) }.into())
        }
        // SAFETY: kill takes integers only.
        "kill" => check(unsafe { libc::kill(arg.parse().expect("pid"), libc::SIGTERM) }.into()),
        "status" => {
            // /proc/self/status's capability and no_new_privs lines, for the test to read.
            let status = std::fs::read_to_string("/proc/self/status")?;
            for line in status.lines().filter(|l| l.starts_with("Cap") || l.starts_with("NoNewPrivs")) {
                println!("{line}");
            }
            Ok(())
        }
        _ => panic!("unknown probe {probe}"),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (policy, probe, arg) = (&args[1], &args[2], args.get(3).map_or("", String::as_str));
    let policy: paige_confine::Policy = serde_json::from_str(policy).expect("policy JSON");
    if let Err(e) = prepare(probe) {
        println!("prepare: {e}");
        return ExitCode::from(4);
    }
    match paige_confine::apply(&policy) {
        Ok(applied) => eprintln!("{}", serde_json::to_string(&applied).expect("Applied as JSON")),
        Err(e) => {
            println!("apply: {e}");
            return ExitCode::from(3);
        }
    }
    let result = run(probe, arg);
    let mut out = std::io::stdout().lock();
    match result {
        Ok(()) => {
            let _ = writeln!(out, "ok");
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(out, "errno {} ({e})", e.raw_os_error().unwrap_or(-1));
            ExitCode::from(1)
        }
    }
}

//! The keyboard while a turn runs: keys typed then start the next prompt,
//! and a Ctrl-D is not lost.

use std::sync::atomic::{AtomicBool, Ordering};

/// The keyboard while a turn runs: the terminal without line editing and
/// echo (Ctrl-C still signals, output is still translated), and a thread
/// collecting the keys pressed, so a Ctrl-D is not lost and typed text
/// starts the next prompt instead of garbling the output. Nothing happens
/// when stdin is not a terminal.
pub(super) struct TypeAhead {
    stop: std::sync::Arc<AtomicBool>,
    reader: Option<std::thread::JoinHandle<Vec<u8>>>,
    saved: Option<libc::termios>,
}

impl TypeAhead {
    pub(super) fn start() -> TypeAhead {
        let idle = TypeAhead {
            stop: Default::default(),
            reader: None,
            saved: None,
        };
        if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            return idle;
        }
        // SAFETY: tcgetattr/tcsetattr on fd 0 with a termios we own.
        let saved = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return idle;
            }
            let mut quiet = t;
            quiet.c_lflag &= !(libc::ICANON | libc::ECHO);
            quiet.c_cc[libc::VMIN] = 1;
            quiet.c_cc[libc::VTIME] = 0;
            if libc::tcsetattr(0, libc::TCSANOW, &quiet) != 0 {
                return idle;
            }
            t
        };
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let reader = std::thread::spawn(move || {
            let mut keys = Vec::new();
            while !flag.load(Ordering::SeqCst) {
                let mut fd = libc::pollfd {
                    fd: 0,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one pollfd, then a read into a local buffer.
                let ready = unsafe { libc::poll(&mut fd, 1, 50) };
                if ready > 0 && fd.revents & libc::POLLIN != 0 {
                    let mut buf = [0u8; 256];
                    let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
                    if n <= 0 {
                        break;
                    }
                    keys.extend_from_slice(&buf[..n as usize]);
                } else if ready < 0
                    && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    break;
                }
            }
            keys
        });
        TypeAhead {
            stop,
            reader: Some(reader),
            saved: Some(saved),
        }
    }

    /// Restores the terminal: the text typed (its first line, printable
    /// characters only) and whether Ctrl-D was pressed.
    pub(super) fn finish(mut self) -> (String, bool) {
        self.stop.store(true, Ordering::SeqCst);
        let keys = self
            .reader
            .take()
            .and_then(|r| r.join().ok())
            .unwrap_or_default();
        self.restore();
        typed_keys(&keys)
    }

    fn restore(&mut self) {
        if let Some(t) = self.saved.take() {
            // SAFETY: puts back the termios read in start().
            unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) };
        }
    }
}

impl Drop for TypeAhead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.restore();
    }
}

/// Keys pressed during a turn → (the text up to the first Enter, printable
/// characters only, Backspace applied; whether Ctrl-D came).
fn typed_keys(keys: &[u8]) -> (String, bool) {
    let leave = keys.contains(&0x04);
    let text = String::from_utf8_lossy(keys);
    let mut line = String::new();
    let mut escape = false;
    for c in text.chars() {
        match c {
            '\r' | '\n' | '\u{4}' => break,
            '\u{1b}' => escape = true,
            '\u{7f}' | '\u{8}' => {
                line.pop();
            }
            // The rest of an escape sequence (arrow keys…) ends at a letter or `~`.
            c if escape => escape = !(c.is_ascii_alphabetic() || c == '~'),
            c if !c.is_control() => line.push(c),
            _ => {}
        }
    }
    (line, leave)
}

#[cfg(test)]
mod tests {
    use super::typed_keys;

    #[test]
    fn keys_typed_during_a_turn_become_the_next_prompt_and_ctrl_d_is_kept() {
        assert_eq!(typed_keys(b"/vars"), ("/vars".into(), false));
        assert_eq!(
            typed_keys(b"plot it\x7f\x7fthem\rmore"),
            ("plot them".into(), false)
        );
        assert_eq!(typed_keys(b"\x1b[Aab\x1b[3~c"), ("abc".into(), false));
        assert_eq!(typed_keys(b"\x04"), (String::new(), true));
        assert_eq!(typed_keys(b"half\x04"), ("half".into(), true));
    }
}

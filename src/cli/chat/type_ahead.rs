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

    /// Restores the terminal: what was typed (see [`Typed`]).
    pub(super) fn finish(mut self) -> Typed {
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

/// What was typed while a turn ran.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Typed {
    /// The text up to the first Enter, printable characters only,
    /// Backspace applied.
    pub(super) text: String,
    /// Whether Enter ended it: the line is sent as it is, no second Enter.
    pub(super) entered: bool,
    /// Whether Ctrl-D came.
    pub(super) leave: bool,
}

/// Keys pressed during a turn → what was typed.
fn typed_keys(keys: &[u8]) -> Typed {
    let leave = keys.contains(&0x04);
    let mut entered = false;
    let text = String::from_utf8_lossy(keys);
    let mut line = String::new();
    let mut escape = false;
    for c in text.chars() {
        match c {
            '\r' | '\n' => {
                entered = true;
                break;
            }
            '\u{4}' => break,
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
    Typed {
        text: line,
        entered,
        leave,
    }
}

#[cfg(test)]
mod tests {
    use super::{typed_keys, Typed};

    #[test]
    fn keys_typed_during_a_turn_become_the_next_prompt_and_ctrl_d_is_kept() {
        let typed = |text: &str, entered: bool, leave: bool| Typed {
            text: text.into(),
            entered,
            leave,
        };
        assert_eq!(typed_keys(b"/vars"), typed("/vars", false, false));
        assert_eq!(
            typed_keys(b"plot it\x7f\x7fthem\rmore"),
            typed("plot them", true, false)
        );
        assert_eq!(typed_keys(b"\x1b[Aab\x1b[3~c"), typed("abc", false, false));
        assert_eq!(typed_keys(b"\x04"), typed("", false, true));
        assert_eq!(typed_keys(b"half\x04"), typed("half", false, true));
    }
}

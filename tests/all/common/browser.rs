//! A real headless Chromium (Debian's, `tests/browser/chromium.sh`) driven
//! over the Chrome DevTools Protocol on a pipe (`--remote-debugging-pipe`:
//! NUL-separated JSON on fds 3 and 4), so no port and no WebSocket: open a
//! page, run script in it, click like a mouse, take screenshots, and
//! collect every console error, uncaught exception and browser log error.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Where the test expects Chromium.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// How long one protocol answer or page load may take.
const LIMIT: Duration = Duration::from_secs(60);

/// One browser with one page.
pub struct Browser {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    next: u64,
    session: String,
    /// Console errors, exceptions and log errors seen so far.
    pub errors: Vec<String>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium headless with a fresh profile and one blank page of
    /// `width`×`height` CSS pixels.
    pub fn start(width: u32, height: u32) -> Browser {
        assert!(
            Path::new(CHROMIUM).is_file(),
            "{CHROMIUM} is missing: `bash tests/browser/chromium.sh` installs Debian's Chromium (make test does)"
        );
        let profile = tempfile::tempdir().unwrap();
        // The shell gives Chromium our pipes as its fds 3 (commands in) and
        // 4 (answers out), the protocol's pipe convention.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" 3<&0 4>&1 0</dev/null 1>/dev/null")
            .arg(CHROMIUM)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("--window-size={width},{height}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        let to = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, from) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(out);
            let mut buf = Vec::new();
            while reader.read_until(0, &mut buf).is_ok_and(|n| n > 0) {
                if buf.last() == Some(&0) {
                    buf.pop();
                }
                if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
                buf.clear();
            }
        });
        let mut browser = Browser {
            child,
            to,
            from,
            next: 0,
            session: String::new(),
            errors: Vec::new(),
            _profile: profile,
        };
        let target = browser.call_browser("Target.createTarget", json!({ "url": "about:blank" }));
        let attached = browser.call_browser(
            "Target.attachToTarget",
            json!({ "targetId": target["targetId"], "flatten": true }),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            browser.call(domain, json!({}));
        }
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        );
        browser
    }

    /// Sends a command to the browser itself and returns its result.
    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, None)
    }

    /// Sends a command to the page and returns its result.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(method, params, Some(session))
    }

    fn send(&mut self, method: &str, params: Value, session: Option<String>) -> Value {
        self.next += 1;
        let id = self.next;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).expect("write to chromium");
        self.to.flush().unwrap();
        let answer = self.wait_for(|m| m["id"] == id, method);
        assert!(
            answer.get("error").is_none(),
            "{method}: {}",
            answer["error"]
        );
        answer["result"].clone()
    }

    /// Reads messages (recording the errors among the events) until one
    /// matches.
    fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool, what: &str) -> Value {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(m) => {
                    self.note_error(&m);
                    if wanted(&m) {
                        return m;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("chromium: no answer to {what} in {LIMIT:?}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("chromium exited while waiting for {what}")
                }
            }
        }
    }

    fn note_error(&mut self, m: &Value) {
        let p = &m["params"];
        match m["method"].as_str() {
            Some("Runtime.exceptionThrown") => self.errors.push(format!(
                "exception: {}",
                p["exceptionDetails"]["exception"]["description"]
                    .as_str()
                    .unwrap_or_else(|| p["exceptionDetails"]["text"].as_str().unwrap_or("?"))
            )),
            Some("Runtime.consoleAPICalled")
                if matches!(p["type"].as_str(), Some("error" | "assert" | "warning")) =>
            {
                self.errors.push(format!(
                    "console.{}: {}",
                    p["type"].as_str().unwrap_or(""),
                    p["args"]
                ))
            }
            Some("Log.entryAdded")
                if matches!(p["entry"]["level"].as_str(), Some("error" | "warning")) =>
            {
                self.errors.push(format!(
                    "log: {}",
                    p["entry"]["text"].as_str().unwrap_or("")
                ))
            }
            _ => {}
        }
    }

    /// Opens `url` and waits for its load event.
    pub fn open(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
        self.wait_for(|m| m["method"] == "Page.loadEventFired", "the page's load");
        self.settle();
    }

    /// Lets pending events (late console messages) arrive.
    pub fn settle(&mut self) {
        self.eval("new Promise(r => setTimeout(r, 200))");
    }

    /// The value of a JavaScript expression in the page (promises awaited).
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expression}: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// Clicks the first element matching `selector` with the mouse, at the
    /// centre of its first box (a wrapped link's first line), after
    /// scrolling it into view.
    pub fn click(&mut self, selector: &str) {
        let rect = self.eval(&format!(
            "(() => {{ const e = document.querySelector({0}); if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getClientRects()[0]; return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
            json!(selector)
        ));
        let (x, y) = match rect.as_array().map(Vec::as_slice) {
            Some([x, y]) => (x.as_f64().unwrap(), y.as_f64().unwrap()),
            _ => panic!("nothing matches {selector}"),
        };
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            );
        }
        self.settle();
    }

    /// A PNG of the viewport.
    pub fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine;
        let r = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

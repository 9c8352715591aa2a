//! The environment the worker (and so every session) inherits from
//! gisclaw: an allowlist, without credentials or network settings.

/// Environment variables the worker inherits; everything else (API keys
/// above all) is withheld from code the model writes.
const INHERITED_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TERM",
];
/// Prefixes of variables that configure the GIS libraries and are passed on.
const INHERITED_ENV_PREFIXES: &[&str] = &["LC_", "GDAL_", "CPL_", "PROJ_", "OGR_"];
/// Words that mark a GIS library variable as a credential or as network
/// configuration (useless in a sandbox without sockets): never passed on.
const WITHHELD_ENV_WORDS: &[&str] = &[
    "HTTP",
    "PROXY",
    "PWD",
    "PASS",
    "SECRET",
    "TOKEN",
    "KEY",
    "CREDENTIAL",
    "AUTH",
    "HEADER",
    "BEARER",
    "COOKIE",
    "SAS",
    "CERT",
    "SSL",
    "CURL",
    "AWS",
    "AZURE",
];

/// Whether the worker inherits the variable `key` from gisclaw.
fn inherited(key: &str) -> bool {
    INHERITED_ENV.contains(&key)
        || (INHERITED_ENV_PREFIXES.iter().any(|p| key.starts_with(p))
            && !WITHHELD_ENV_WORDS.iter().any(|w| key.contains(w)))
}

/// The environment the worker inherits from gisclaw.
pub(super) fn inherited_env() -> impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)> {
    std::env::vars_os().filter(|(key, _)| inherited(&key.to_string_lossy()))
}

#[cfg(test)]
mod tests {
    use super::inherited;

    #[test]
    fn gis_settings_are_inherited_and_their_credentials_are_not() {
        for key in [
            "PATH",
            "LC_ALL",
            "GDAL_CACHEMAX",
            "GDAL_NUM_THREADS",
            "PROJ_DATA",
            "CPL_DEBUG",
        ] {
            assert!(inherited(key), "{key}");
        }
        for key in [
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "GDAL_HTTP_USERPWD",
            "GDAL_HTTP_HEADERS",
            "GDAL_HTTP_PROXYUSERPWD",
            "CPL_AWS_CREDENTIALS_FILE",
            "GDAL_HTTP_HEADER_FILE",
            "CPL_VSIL_CURL_ALLOWED_EXTENSIONS",
        ] {
            assert!(!inherited(key), "{key}");
        }
    }
}

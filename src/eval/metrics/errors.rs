//! The error taxonomy: every failed cell and every failed run gets one type,
//! after AutoGEEval's error analysis (syntax, parameter, invalid answer,
//! runtime) with GISclaw's sandbox cases added (timeouts and crashes,
//! blocked imports) and the output checks (wrong type, trivial content).

use serde::{Deserialize, Serialize};

use crate::bench::answers::HarnessError;
use crate::bench::judge::Mismatch;
use crate::observation;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// SyntaxError, IndentationError, TabError.
    Syntax,
    /// AttributeError, TypeError, NameError, ImportError, or a ValueError
    /// about an argument: a function or parameter that does not exist or
    /// does not fit (the hallucination class).
    AttributeParameter,
    /// An output of the wrong type (unreadable as its extension says, or an
    /// answer of the wrong type).
    OutputType,
    /// An output or answer present but wrong or empty of meaning.
    InvalidAnswer,
    /// Any other exception, or a worker crash (records written before the
    /// split read `runtime_timeout` as this).
    #[serde(alias = "runtime_timeout")]
    Runtime,
    /// A cell stopped at its time limit (or interrupted), or a run out of
    /// its budget.
    Timeout,
    /// An import refused by the Package Constraint.
    BlockedImport,
    /// The run could not be carried out: the model server or network
    /// failed, or the sandbox did. Counted, never scored as the model's
    /// fault.
    Infrastructure,
    /// None of the above (e.g. the model stopped calling tools).
    Other,
}

impl ErrorType {
    /// Every type, in report order.
    pub const ALL: [ErrorType; 9] = [
        ErrorType::Syntax,
        ErrorType::AttributeParameter,
        ErrorType::OutputType,
        ErrorType::InvalidAnswer,
        ErrorType::Runtime,
        ErrorType::Timeout,
        ErrorType::BlockedImport,
        ErrorType::Infrastructure,
        ErrorType::Other,
    ];

    /// The snake_case name used in results.
    pub fn name(self) -> &'static str {
        match self {
            ErrorType::Syntax => "syntax",
            ErrorType::AttributeParameter => "attribute_parameter",
            ErrorType::OutputType => "output_type",
            ErrorType::InvalidAnswer => "invalid_answer",
            ErrorType::Runtime => "runtime",
            ErrorType::Timeout => "timeout",
            ErrorType::BlockedImport => "blocked_import",
            ErrorType::Infrastructure => "infrastructure",
            ErrorType::Other => "other",
        }
    }
}

/// GeoAgent's four error types (its §5 discussion), from gisclaw's: a
/// wrong answer from code that ran is *instruction following*; a call of a
/// function, attribute or keyword that does not exist (or an undefined
/// name) is *hallucination*; every other failure of the code is *general
/// code*. *Lack of information* (the prompt did not say enough) GeoAgent
/// judged by hand; gisclaw does not tell it apart. Infrastructure failures
/// are none of the model's (`None`).
pub fn geoagent_type(error: ErrorType) -> Option<&'static str> {
    match error {
        ErrorType::InvalidAnswer | ErrorType::OutputType => Some("instruction following"),
        ErrorType::AttributeParameter => Some("hallucination"),
        ErrorType::Infrastructure => None,
        ErrorType::Syntax
        | ErrorType::Runtime
        | ErrorType::Timeout
        | ErrorType::BlockedImport
        | ErrorType::Other => Some("general code"),
    }
}

/// GeoAgent's error types in its order (lack of information is not told
/// apart automatically).
pub const GEOAGENT_TYPES: [&str; 4] = [
    "instruction following",
    "hallucination",
    "lack of information",
    "general code",
];

/// AutoGEEval's error types (its §3.4 error detection and Table 10), in
/// Table 10's column order.
pub const AUTOGEEVAL_TYPES: [&str; 5] = [
    "ParameterError",
    "InvalidAnswer",
    "SyntaxError",
    "RuntimeError",
    "NetworkError",
];

/// AutoGEEval's type of a failing sample, from gisclaw's type and the first
/// failing call's problem text. Its syntax errors include missing module
/// imports (an `ImportError`, a module refused by the Package Constraint,
/// or a `NameError` on a module's usual name such as `np`); its parameter
/// errors are every other failure of code that ran ("has no attribute",
/// "not found", missing arguments: AutoGEEval has no class for other
/// exceptions); invalid answers include a wrong output type; its runtime
/// errors are timeouts (180 s in the paper); its network errors are the
/// executing platform failing, gisclaw's infrastructure.
pub fn autogeeval_type(error: ErrorType, problem: &str) -> &'static str {
    match error {
        ErrorType::Syntax | ErrorType::BlockedImport => "SyntaxError",
        ErrorType::AttributeParameter if missing_import(problem) => "SyntaxError",
        ErrorType::AttributeParameter | ErrorType::Runtime | ErrorType::Other => "ParameterError",
        ErrorType::OutputType | ErrorType::InvalidAnswer => "InvalidAnswer",
        ErrorType::Timeout => "RuntimeError",
        ErrorType::Infrastructure => "NetworkError",
    }
}

/// Module names code uses without importing them (`np` for numpy): a
/// `NameError` on one of them is a missing import.
const MODULE_NAMES: &[&str] = &[
    "np",
    "numpy",
    "pd",
    "pandas",
    "gpd",
    "geopandas",
    "plt",
    "matplotlib",
    "ee",
    "math",
    "os",
    "re",
    "json",
    "sys",
    "rasterio",
    "shapely",
    "scipy",
    "xr",
    "xarray",
    "pyproj",
    "fiona",
    "datetime",
    "random",
    "statistics",
    "itertools",
    "collections",
    "functools",
    "sklearn",
];

/// Whether a problem text is a missing module import: an `ImportError` /
/// `ModuleNotFoundError`, or a `NameError` on a module's usual name.
fn missing_import(problem: &str) -> bool {
    if problem.contains("ImportError") || problem.contains("ModuleNotFoundError") {
        return true;
    }
    let Some(at) = problem.find("NameError: name '") else {
        return false;
    };
    let rest = &problem[at + "NameError: name '".len()..];
    rest.split('\'')
        .next()
        .is_some_and(|name| MODULE_NAMES.contains(&name))
}

/// The type of a failed cell from its transcript status (`Error`,
/// `TimedOut…`, `Crashed…`, `Cancelled…`) and observation text.
pub fn classify_cell(status: &str, observation_text: &str) -> ErrorType {
    if status.starts_with("TimedOut") || status.starts_with("Cancelled") {
        return ErrorType::Timeout;
    }
    if status.starts_with("Crashed") {
        return ErrorType::Runtime;
    }
    if observation_text.contains("is not available in this sandbox (package constraint)") {
        return ErrorType::BlockedImport;
    }
    classify_exception(observation::error_line(observation_text))
}

/// The type of an exception from its last traceback line (`KeyError: 'x'`).
pub fn classify_exception(line: &str) -> ErrorType {
    let name = line.split(':').next().unwrap_or("").trim();
    let name = name.rsplit('.').next().unwrap_or(name);
    let message = line.to_lowercase();
    match name {
        "SyntaxError" | "IndentationError" | "TabError" => ErrorType::Syntax,
        "AttributeError"
        | "TypeError"
        | "NameError"
        | "ImportError"
        | "ModuleNotFoundError"
        | "UnboundLocalError" => ErrorType::AttributeParameter,
        "ValueError"
            if ["argument", "parameter", "keyword"]
                .iter()
                .any(|w| message.contains(w)) =>
        {
            ErrorType::AttributeParameter
        }
        // The sandbox interrupts a cell at its time limit.
        "KeyboardInterrupt" => ErrorType::Timeout,
        n if n.ends_with("Error") || n.ends_with("Exception") || n == "StopIteration" => {
            ErrorType::Runtime
        }
        _ => ErrorType::Other,
    }
}

/// The type of a unit or step harness failure: the model's code raised
/// (by its exception), did not end in time, or the sandbox itself failed
/// (infrastructure, not the model's fault).
pub fn classify_harness(error: &HarnessError) -> ErrorType {
    match error {
        HarnessError::TimedOut(_) => ErrorType::Timeout,
        HarnessError::Failed(line) => match classify_exception(line) {
            ErrorType::Other => ErrorType::Runtime,
            kind => kind,
        },
        HarnessError::Sandbox(crate::sandbox::SandboxError::BudgetExhausted(_)) => {
            ErrorType::Timeout
        }
        HarnessError::Sandbox(_) | HarnessError::Io { .. } | HarnessError::Prepare(_) => {
            ErrorType::Infrastructure
        }
        _ => ErrorType::Runtime,
    }
}

/// The type of a judged answer's mismatch (unit and step suites).
pub fn classify_mismatch(mismatch: &Mismatch) -> ErrorType {
    match mismatch {
        Mismatch::Type { .. } => ErrorType::OutputType,
        Mismatch::Value(_) => ErrorType::InvalidAnswer,
        Mismatch::Raised(text) => classify_exception(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_classified_by_status_then_exception() {
        assert_eq!(
            classify_cell("TimedOut { limit: 5s, killed: false }", "x"),
            ErrorType::Timeout
        );
        let blocked = "[error]\nModuleNotFoundError: 'arcpy' is not available in this sandbox (package constraint); use geopandas instead";
        assert_eq!(classify_cell("Error", blocked), ErrorType::BlockedImport);
        assert_eq!(
            classify_cell(
                "Error",
                "[error]\n  File \"<cell 3>\", line 1\nSyntaxError: invalid syntax"
            ),
            ErrorType::Syntax
        );
        assert_eq!(
            classify_cell(
                "Error",
                "[error]\nAttributeError: 'GeoDataFrame' object has no attribute 'bufer'"
            ),
            ErrorType::AttributeParameter
        );
        assert_eq!(
            classify_cell("Error", "[error]\nKeyError: 'POP'"),
            ErrorType::Runtime
        );
        assert_eq!(
            classify_cell(
                "Error",
                "[error]\nValueError: unexpected keyword argument 'how'"
            ),
            ErrorType::AttributeParameter
        );
        assert_eq!(
            classify_cell("Error", "[error]\nValueError: cannot reshape"),
            ErrorType::Runtime
        );
        assert_eq!(
            classify_cell(
                "Error",
                "[error]\nrasterio.errors.RasterioIOError: no such file"
            ),
            ErrorType::Runtime
        );
        assert_eq!(classify_cell("Error", "something odd"), ErrorType::Other);
    }

    #[test]
    fn geoagent_types_come_from_the_model_s_own_types() {
        assert_eq!(
            geoagent_type(ErrorType::InvalidAnswer),
            Some("instruction following")
        );
        assert_eq!(
            geoagent_type(ErrorType::AttributeParameter),
            Some("hallucination")
        );
        assert_eq!(geoagent_type(ErrorType::Timeout), Some("general code"));
        assert_eq!(geoagent_type(ErrorType::Infrastructure), None);
        // Every gisclaw type but infrastructure is one of GeoAgent's.
        for e in ErrorType::ALL {
            assert!(geoagent_type(e).is_none_or(|t| GEOAGENT_TYPES.contains(&t)));
        }
    }

    #[test]
    fn autogeeval_types_follow_its_table_10() {
        use ErrorType::*;
        // Missing imports are syntax errors (its §3.4), other attribute and
        // name errors parameter errors.
        let t = autogeeval_type;
        assert_eq!(
            t(
                AttributeParameter,
                "raised ModuleNotFoundError: No module named 'pykrige'"
            ),
            "SyntaxError"
        );
        assert_eq!(
            t(
                AttributeParameter,
                "ImportError: cannot import name 'x' from 'y'"
            ),
            "SyntaxError"
        );
        assert_eq!(
            t(AttributeParameter, "NameError: name 'np' is not defined"),
            "SyntaxError"
        );
        assert_eq!(
            t(
                AttributeParameter,
                "NameError: name 'result' is not defined"
            ),
            "ParameterError"
        );
        assert_eq!(
            t(
                AttributeParameter,
                "AttributeError: 'Image' object has no attribute 'bands'"
            ),
            "ParameterError"
        );
        assert_eq!(t(BlockedImport, "arcpy is not available"), "SyntaxError");
        assert_eq!(t(Syntax, ""), "SyntaxError");
        // Other exceptions of code that ran: parameter errors ("not found").
        assert_eq!(t(Runtime, "KeyError: 'B4 not found'"), "ParameterError");
        assert_eq!(t(OutputType, ""), "InvalidAnswer");
        assert_eq!(t(InvalidAnswer, ""), "InvalidAnswer");
        assert_eq!(t(Timeout, ""), "RuntimeError");
        assert_eq!(t(Infrastructure, ""), "NetworkError");
        for e in ErrorType::ALL {
            assert!(AUTOGEEVAL_TYPES.contains(&t(e, "")));
        }
    }

    #[test]
    fn mismatches_map_to_answer_types() {
        assert_eq!(
            classify_mismatch(&Mismatch::Type {
                expected: "int".into(),
                got: "str".into()
            }),
            ErrorType::OutputType
        );
        assert_eq!(
            classify_mismatch(&Mismatch::Value("x".into())),
            ErrorType::InvalidAnswer
        );
        assert_eq!(
            classify_mismatch(&Mismatch::Raised("TypeError: f() got 3".into())),
            ErrorType::AttributeParameter
        );
    }
}

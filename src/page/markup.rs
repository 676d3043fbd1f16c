//! The first screen's fixed markup: the element ids, the classes the style sheet, `static/boot.js`
//! and the tests select, the `aria-*` values, the `data-*` attribute names and the fixed texts
//! that both renderers write (the Yew components and the first view, `crate::first`). Each is
//! written here once; what varies (a row's label, a value, a message) is [`crate::page`]'s.
//!
//! Every entry is a `pub const` (the components write `class={markup::PICKER}`) and, through
//! [`markup!`], the same text as a literal that the first view writes into its format strings
//! (`markup!("<div class=\"" PICKER "\">")`): its HTML is written from these entries with no
//! formatting call more than from literals (a first view's size is counted). `markup!` is in
//! textual scope after `page` in `lib.rs` (`#[macro_use]`): a macro that a macro defines cannot
//! be imported by path.
//!
//! `tests/markup.rs` holds both renderers to it: no literal attribute value or text in their
//! shared parts, and every class, id, `aria-*` value and `data-*` name the first view writes is
//! one of these.

macro_rules! table {
    ($($(#[doc = $doc:literal])* $name:ident = $value:literal;)*) => {
        $($(#[doc = $doc])* pub const $name: &str = $value;)*

        /// Every entry, `(name, value)`, for the tests.
        pub const ALL: &[(&str, &str)] = &[$((stringify!($name), $value)),*];

        /// The entry `NAME` as a string literal (`markup!` is the one to use).
        macro_rules! markup_entry {
            $(($name) => { $value };)*
        }
    };
}

/// Literals and entries, `markup!("<div class=\"" PICKER "\">")`, as one string literal:
/// `concat!` of the literals and of each entry's value (`markup!(PICKER)` is `"picker"`). A
/// format string too, whose arguments are then named (`key = key`: a format string that a
/// macro writes captures no variable).
macro_rules! markup {
    (@ $literal:literal) => { $literal };
    (@ $name:ident) => { markup_entry!($name) };
    ($($part:tt)*) => { concat!($(markup!(@ $part)),*) };
}

/// A field's element id: `prefix` ([`IN`], [`HELP_ID`], [`LIST_ID`], [`IN_HREF`]) and its key.
pub fn id(prefix: &str, key: &str) -> String {
    format!("{prefix}{key}")
}

table! {
    // the page skeleton (`app.rs`, `first::render`)
    /// `<main>`'s class.
    PAGE = "page";
    /// `<main>`'s class in the embedded layout (`embed=1`).
    PAGE_EMBED = "page embed";
    /// The embedded layout's heading, for screen readers only.
    SR_ONLY = "sr-only";
    EMBED_HEADING = "dpcalc: batch size and optimizer steps";
    /// The full layout's header, its heading and lede.
    TOP = "top";
    HEADING = "dpcalc";
    LEDE = "lede";
    /// The lede around its framework and release (`page::lede`).
    LEDE_BEFORE = "What batch size and how many optimizer steps your distributed ";
    LEDE_AFTER = " run gets (computed in your browser, exactly as the framework does it), which plan runs it fastest, and how many GPUs to rent.";
    /// The two columns: the picker and the form, the results beside them.
    LAYOUT = "layout";
    MAIN = "main";
    SIDE = "side";
    /// The embedded layout's link to the full calculator, and the share link it keeps hidden
    /// (their `data-output` names).
    FULL_LINK = "full-link";
    FULL_LINK_TEXT = "Open full calculator \u{2197}";
    FULL_URL = "full_url";
    SHARE_URL = "share_url";

    // the examples (`components::Examples`)
    EXAMPLES = "examples";
    EXAMPLES_ARIA = "Examples";
    EXAMPLES_LEAD_CLASS = "examples-label";
    EXAMPLES_LEAD = "Try:";

    // the link's notices (`components::Notices`)
    NOTICES = "notices";
    NOTICES_ARIA = "Link notices";
    NOTICE = "msg notice";
    /// The `data-notice` of the note under the picker (a link without `version=`).
    UNVERSIONED = "unversioned";
    /// The picker's note's class.
    NOTE = "msg note";

    // the summary bar (`components::Summary`)
    SUMMARY_BAR = "summary-bar";
    SUMMARY_ARIA = "Key results";
    /// A summary value's class (then [`MISSING`] when it has none).
    SUM = "sum";
    SUM_ERROR = "sum-error";
    /// The `data-summary` of the first error.
    SUMMARY_ERROR = "error";
    SUM_MORE = "sum-more";
    ALL_RESULTS = "All results";

    // the picker (`components::Picker`)
    PICKER = "picker";
    /// The label's text and the key beside it (every field's label has both).
    LABEL = "label";
    KEY = "key";
    /// The selects' names (what `static/boot.js` hands to the first view's `edit`), ids and
    /// labels.
    FRAMEWORK = "framework";
    IN_FRAMEWORK = "in-framework";
    FRAMEWORK_LABEL = "Framework";
    VERSION = "version";
    IN_VERSION = "in-version";
    VERSION_LABEL = "Version";

    // the form (`components::Form`)
    INPUTS = "inputs";
    INPUTS_ARIA = "Run configuration";
    GROUP = "group";
    /// The foldable architecture group (`<details>`).
    GROUP_FOLD = "group architecture";
    /// A row's classes (`FieldRow::class`).
    FIELD = "field";
    FIELD_FLAG = "field flag";
    FIELD_INVALID = "field invalid";
    FIELD_FLAG_INVALID = "field flag invalid";
    /// A field's input is `in-KEY`, its help `help-KEY`, its suggestions `list-KEY`, its n-th
    /// message `msg-KEY-n`; `#in-KEY` links to it.
    IN = "in-";
    IN_HREF = "#in-";
    HELP_ID = "help-";
    LIST_ID = "list-";
    MSG_ID = "msg-";
    HELP = "help";
    /// A message's class, before its level.
    MSG = "msg";
    /// The levels (`page::level_name`): the class after [`MSG`] and the `data-` attribute.
    LEVEL_ERROR = "error";
    LEVEL_WARNING = "warning";
    LEVEL_NOTE = "note";
    LEVEL_HINT = "hint";
    /// An error's `role`.
    ALERT = "alert";
    /// Between the key an error shows in front of it and its text.
    KEY_SEP = ": ";

    // the results (`components::Results`)
    /// The results' class and id.
    RESULTS = "results";
    RESULTS_HREF = "#results";
    RESULTS_ARIA = "Results";
    /// The results' `aria-live`.
    POLITE = "polite";
    /// A value's class (then [`MISSING`] when it has none).
    VALUE = "value";
    MISSING = "missing";

    // the `data-*` names the tests and `static/boot.js` read (the components write them as
    // attribute names; `tests/markup.rs` holds those to this list)
    DATA_OUTPUT = "data-output";
    DATA_VALUE = "data-value";
    DATA_NEEDS = "data-needs";
    DATA_SUMMARY = "data-summary";
    DATA_SUMMARY_BAR = "data-summary-bar";
    DATA_NOTICE = "data-notice";
    DATA_EXAMPLE = "data-example";
}

//! A bash launch script read as bash would for what dpcalc needs from it: the command that runs
//! the training script, with its words expanded. Megatron-LM's own examples
//! (`examples/gpt3/train_gpt3_175b_distributed.sh`, `examples/llama/train_llama3_8b_h100_fp8.sh`)
//! set `NAME=value` variables and bash arrays and expand them into the `torchrun … pretrain_gpt.py`
//! line; [`read`] follows them.
//!
//! Read: `NAME=value`, `export`/`declare`/`local`/`readonly NAME=value`, `NAME+=value`, arrays
//! `NAME=( … )` and `NAME+=( … )` (over lines, with comments), `$NAME`, `${NAME}`,
//! `${NAME:-default}` (also `-`, `:=`, `=`, `:+`, `+`), `${ARR[@]}`, `"${ARR[@]}"`, `${ARR[N]}`,
//! `${#NAME}`, `$((…))` integer arithmetic, quotes, backslashes, line continuations, comments,
//! `if`/`elif`/`else`/`fi` on `[[ … ]]`/`[ … ]` string tests (`==`, `=`, `!=`, `-z`, `-n`,
//! `!`, joined by `&&`/`||`), and `case WORD in PATTERN|PATTERN) … ;; esac` (a pattern of `*` and
//! `?`, or quoted). Nothing runs: a value dpcalc cannot know (a script argument `$1`, an
//! environment variable never assigned, `$(…)`, a backquote) stays as it is written, `$` and all,
//! so a caller can tell it apart and never takes it for a value. A branch under a condition that
//! cannot be decided (`[ -f … ]`, an unknown value, a `[…]` pattern) is not taken, nor any later
//! one (`else`, a later `case` arm); loops are skipped.
//! The training command may sit behind a runner (`uv run`, `srun -N 2`, `nsys profile -o f`, an
//! empty array, an unknown `$VENV_PREFIX`, see [`RUNNERS`]). A default taken for a variable the
//! script never sets (`${SLURM_NNODES:-1}`) is recorded once ([`Script::defaults`]) and followed,
//! through assignments, arrays and `$((…))`, to the command's words ([`Script::origins`]); a
//! branch taken because of one is not (`if [ "$USE_UV" = 1 ]`). Not this module's job: which
//! flags mean what (see `import/command_line.rs`).
//!
//! Bounded: every value is capped at [`MAX_LEN`] bytes, every array and the command at
//! [`MAX_WORDS`] words, and nesting (`${a:-${b:-…}}`, `$((…))`, parentheses) at [`MAX_DEPTH`];
//! past a cap the value is unknown and [`Script::too_large`] is set.

use std::collections::HashMap;

/// The longest value kept, in bytes.
pub const MAX_LEN: usize = 64 * 1024;
/// The most words an array or the command holds.
pub const MAX_WORDS: usize = 10_000;
/// The deepest nesting of expansions and arithmetic read.
pub const MAX_DEPTH: usize = 16;
/// The most bytes all expansions of one script produce together.
pub const MAX_TOTAL: usize = 4 * 1024 * 1024;

/// What a script runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    /// The words of the last command that runs a training script (`torchrun …`, `python …`,
    /// `deepspeed …`, `accelerate …`, `….py`), expanded; empty if there is none. A part dpcalc
    /// cannot know is kept as written (`$1`, `${PWD}`, `$(date)`).
    pub command: Vec<String>,
    /// How many such commands the script runs (the last one is kept).
    pub commands: usize,
    /// A value or an array grew past the caps.
    pub too_large: bool,
    /// The defaults the script took for variables it never sets (`${SLURM_NNODES:-1}`, `${1:-8}`),
    /// each once, in the order first taken; at most [`MAX_DEFAULTS`].
    pub defaults: Vec<Defaulted>,
    /// For each word of [`Script::command`], the defaults its value came from: bit `k` is
    /// `defaults[k]`.
    pub origins: Vec<u64>,
}

/// The most defaults of unset variables followed to the values they give.
pub const MAX_DEFAULTS: usize = 64;

/// A default taken because its variable is not set where dpcalc reads the script: bash takes it
/// too when the variable is not in the environment (or, for `$1`, the argument is not given).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Defaulted {
    /// The variable not set: `SLURM_NNODES`, or `1` for the script's first argument.
    pub name: String,
    /// The default as bash expands it: `1`.
    pub value: String,
    /// The script's variable first assigned from it (`NNODES` in `NNODES=${SLURM_NNODES:-1}`).
    pub into: Option<String>,
}

impl Script {
    /// The defaults the command's word `i` came from.
    pub fn defaults_of(&self, i: usize) -> impl Iterator<Item = &Defaulted> {
        let mask = self.origins.get(i).copied().unwrap_or(0);
        self.defaults
            .iter()
            .enumerate()
            .filter(move |(k, _)| mask & (1u64 << k) != 0)
            .map(|(_, d)| d)
    }
}

/// Whether a pasted text is a script rather than one command line: one of its lines assigns a
/// variable (`NAME=…`, `NAME+=…`, `export NAME=…`) before anything else.
pub fn is_script(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        let l = ["export ", "declare ", "local ", "readonly "]
            .iter()
            .find_map(|p| l.strip_prefix(p))
            .map_or(l, str::trim_start);
        assignment(l).is_some()
    })
}

/// `NAME=` or `NAME+=` at the start of a word: the name, whether it appends, and the rest.
fn assignment(word: &str) -> Option<(&str, bool, &str)> {
    let end = word
        .char_indices()
        .find(|&(i, c)| !(c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())))
        .map_or(word.len(), |(i, _)| i);
    if end == 0 {
        return None;
    }
    let (name, rest) = word.split_at(end);
    if let Some(v) = rest.strip_prefix("+=") {
        Some((name, true, v))
    } else {
        rest.strip_prefix('=').map(|v| (name, false, v))
    }
}

/// Reads a script: its assignments, arrays and conditions, and the training command it runs.
pub fn read(text: &str) -> Script {
    let tokens = lex(text);
    let mut run = Run {
        room: MAX_TOTAL,
        vars: HashMap::new(),
        frames: Vec::new(),
        cond: Vec::new(),
        subjects: Vec::new(),
        patterns: Vec::new(),
        glob_room: MAX_GLOB_STEPS,
        script: Script::default(),
    };
    run.tokens(&tokens);
    run.script
}

// ---- lexing --------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// A word as written (quotes and expansions still in it).
    Word(String),
    /// `NAME=( … )` or `NAME+=( … )`: the name, whether it appends, the words as written.
    Array(String, bool, Vec<String>),
    /// `;`, a newline, `&`, `|`, `(`: the end of a command.
    End,
    /// `)`: the end of a command, or of a `case` arm's patterns.
    Close,
    /// The end of a `case` arm: `;;` (0), `;&` (1: the next arm's commands run too), `;;&` (2:
    /// the next arms' patterns are tested too).
    ArmEnd(u8),
    And,
    Or,
}

/// The index just past a construct starting at `i`: a quote, `$(…)`, `${…}`, a backquote.
fn skip(c: &[char], i: usize, depth: usize) -> usize {
    let Some(&ch) = c.get(i) else { return i };
    if depth > MAX_DEPTH * 4 {
        return c.len();
    }
    match ch {
        '\'' => c[i + 1..]
            .iter()
            .position(|&x| x == '\'')
            .map_or(c.len(), |p| i + 1 + p + 1),
        '`' => {
            let mut j = i + 1;
            while j < c.len() && c[j] != '`' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            (j + 1).min(c.len())
        }
        '"' => {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j = match c[j] {
                    '\\' => j + 2,
                    '$' | '`' => skip(c, j, depth + 1).max(j + 1),
                    _ => j + 1,
                };
            }
            (j + 1).min(c.len())
        }
        '$' => match c.get(i + 1) {
            Some('(') | Some('{') => {
                let (open, close) = if c[i + 1] == '(' {
                    ('(', ')')
                } else {
                    ('{', '}')
                };
                let mut level = 0usize;
                let mut j = i + 1;
                while j < c.len() {
                    match c[j] {
                        x if x == open => {
                            level += 1;
                            j += 1;
                        }
                        x if x == close => {
                            level -= 1;
                            j += 1;
                            if level == 0 {
                                return j;
                            }
                        }
                        '\\' => j += 2,
                        '\'' if open == '{' => j += 1,
                        '\'' | '"' | '`' | '$' => j = skip(c, j, depth + 1).max(j + 1),
                        _ => j += 1,
                    }
                }
                c.len()
            }
            _ => i + 1,
        },
        _ => i + 1,
    }
}

/// The index just past an expansion starting at `i` (a `$` or a backquote), `$NAME` and `$1`
/// included.
fn dollar_end(c: &[char], i: usize) -> usize {
    let end = skip(c, i, 0).max(i + 1);
    if c.get(i) != Some(&'$') || end != i + 1 {
        return end.min(c.len());
    }
    let mut e = i + 1;
    match c.get(e) {
        Some(x) if x.is_ascii_digit() || "@*#?$!-".contains(*x) => e += 1,
        _ => {
            while c
                .get(e)
                .is_some_and(|x| x.is_ascii_alphanumeric() || *x == '_')
            {
                e += 1;
            }
        }
    }
    e
}

fn lex(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            ' ' | '\t' | '\r' => i += 1,
            '\\' if c.get(i + 1) == Some(&'\n') => i += 2,
            '#' => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '&' if c.get(i + 1) == Some(&'&') => {
                out.push(Tok::And);
                i += 2;
            }
            '|' if c.get(i + 1) == Some(&'|') => {
                out.push(Tok::Or);
                i += 2;
            }
            ';' if matches!(c.get(i + 1), Some(';' | '&')) => {
                let kind = match (c[i + 1], c.get(i + 2)) {
                    (';', Some('&')) => 2,
                    (';', _) => 0,
                    _ => 1,
                };
                out.push(Tok::ArmEnd(kind));
                i += if kind == 2 { 3 } else { 2 };
            }
            ')' => {
                out.push(Tok::Close);
                i += 1;
            }
            '\n' | ';' | '&' | '|' | '(' => {
                out.push(Tok::End);
                i += 1;
            }
            _ => {
                let (word, next) = word(&c, i);
                i = next;
                let array = assignment(&word)
                    .filter(|(_, _, rest)| rest.is_empty())
                    .map(|(n, a, _)| (n.to_string(), a));
                match (array, c.get(i)) {
                    (Some((name, append)), Some('(')) => {
                        let (words, next) = array_words(&c, i + 1);
                        i = next;
                        out.push(Tok::Array(name, append, words));
                    }
                    _ => out.push(Tok::Word(word)),
                }
            }
        }
    }
    out
}

/// One word as written, from `i`: up to an unquoted blank or operator.
fn word(c: &[char], mut i: usize) -> (String, usize) {
    let start = i;
    let mut w = String::new();
    while i < c.len() {
        match c[i] {
            ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' if i > start => {
                break
            }
            '\\' if c.get(i + 1) == Some(&'\n') => i += 2,
            '\\' => {
                w.extend(c[i..(i + 2).min(c.len())].iter());
                i += 2;
            }
            '\'' | '"' | '`' | '$' => {
                let end = skip(c, i, 0).max(i + 1).min(c.len());
                w.extend(c[i..end].iter());
                i = end;
            }
            x => {
                w.push(x);
                i += 1;
            }
        }
    }
    (w, i)
}

/// The words of an array assignment, from just after its `(` to its `)` (or the end).
fn array_words(c: &[char], mut i: usize) -> (Vec<String>, usize) {
    let mut words = Vec::new();
    while i < c.len() {
        match c[i] {
            ' ' | '\t' | '\r' | '\n' => i += 1,
            '\\' if c.get(i + 1) == Some(&'\n') => i += 2,
            '#' => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            ')' => return (words, i + 1),
            _ => {
                let (w, next) = word(c, i);
                i = next.max(i + 1);
                if words.len() < MAX_WORDS {
                    words.push(w);
                }
            }
        }
    }
    (words, i)
}

// ---- running -------------------------------------------------------------------------------

/// A value with the defaults it came from (a bit each, as [`Script::origins`]).
type Val = (String, u64);

#[derive(Clone, Debug)]
enum Var {
    Str(Val),
    Arr(Vec<Val>),
}

/// Values joined by blanks, as one field: their defaults together.
fn joined(vals: Vec<Val>) -> Val {
    let mask = vals.iter().fold(0, |m, (_, b)| m | b);
    let words: Vec<String> = vals.into_iter().map(|(s, _)| s).collect();
    (words.join(" "), mask)
}

/// The state of one `if` (or a skipped loop or `case`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Branch {
    /// Collecting the condition after `if` or `elif`.
    Cond,
    /// In the branch taken.
    Taking,
    /// In a branch not taken; a later `elif`/`else` may be.
    Waiting,
    /// A branch was taken (or cannot be decided): every later one is skipped.
    Done,
    /// Inside a loop, which is skipped.
    Skipped,
    /// Reading a `case` arm's patterns; `taken`: an arm ran (or which one runs cannot be
    /// decided), so no later arm runs; `fall`: the arm before ran and ended in `;&`, so this one
    /// runs.
    Patterns { taken: bool, fall: bool },
    /// In a `case` arm's commands: `run` when this arm runs.
    Arm { run: bool, taken: bool },
}

struct Run {
    /// Bytes the expansions may still produce.
    room: usize,
    vars: HashMap<String, Var>,
    frames: Vec<Branch>,
    cond: Vec<(Vec<String>, Option<bool>)>,
    /// The value each open `case` tests (`None`: unknown), innermost last.
    subjects: Vec<Option<String>>,
    /// The patterns of the `case` arm being read, as written.
    patterns: Vec<String>,
    /// Steps the glob matching of all `case` patterns may still take ([`MAX_GLOB_STEPS`]).
    glob_room: usize,
    script: Script,
}

/// A field being built by the expansion of one word.
#[derive(Default)]
struct Fields {
    done: Vec<Val>,
    cur: String,
    /// The defaults the field being built came from.
    cur_from: u64,
    /// The defaults of the value being put: added to every field it reaches.
    from: u64,
    started: bool,
    /// Bytes the whole run may still produce ([`MAX_TOTAL`]).
    room: usize,
    /// Something was left out at a cap.
    over: bool,
}

impl Fields {
    fn finish(&mut self) {
        if self.started && self.done.len() < MAX_WORDS {
            self.done
                .push((std::mem::take(&mut self.cur), self.cur_from));
        } else if self.started {
            self.over = true;
        }
        self.cur.clear();
        self.cur_from = 0;
        self.started = false;
    }
    fn push(&mut self, s: &str) {
        self.cur_from |= self.from;
        if self.cur.len() + s.len() <= MAX_LEN && s.len() <= self.room {
            self.cur.push_str(s);
            self.room -= s.len();
        } else {
            self.over = true;
        }
        self.started = true;
    }
    /// An unquoted expansion: split at blanks.
    fn split(&mut self, s: &str) {
        if s.starts_with(char::is_whitespace) {
            self.finish();
        }
        let mut any = false;
        for (k, part) in s.split_whitespace().enumerate() {
            if k > 0 {
                self.finish();
            }
            self.push(part);
            any = true;
        }
        if any && s.ends_with(char::is_whitespace) {
            self.finish();
        }
    }
    /// `s` put as `put` does, from the defaults `from`.
    fn put_from(&mut self, s: &str, from: u64, quoted: bool) {
        let outer = self.from;
        self.from |= from;
        if quoted {
            self.push(s)
        } else {
            self.split(s)
        }
        self.from = outer;
    }
    fn into_words(mut self) -> Vec<Val> {
        self.finish();
        self.done
    }
}

impl Run {
    fn executing(&self) -> bool {
        self.frames
            .iter()
            .all(|b| matches!(b, Branch::Taking | Branch::Arm { run: true, .. }))
    }

    fn tokens(&mut self, tokens: &[Tok]) {
        let mut cmd: Vec<&Tok> = Vec::new();
        for t in tokens {
            match t {
                Tok::Word(_) | Tok::Array(..) => cmd.push(t),
                Tok::End | Tok::Close | Tok::ArmEnd(_) => {
                    self.command(&cmd, None);
                    cmd.clear();
                    match (t, self.frames.last().copied()) {
                        (Tok::Close, Some(Branch::Patterns { taken, fall })) => {
                            self.arm(taken, fall)
                        }
                        (Tok::ArmEnd(kind), Some(Branch::Arm { run, taken })) => {
                            self.set_top(Branch::Patterns {
                                taken: taken && !(run && *kind == 2),
                                fall: run && *kind == 1,
                            })
                        }
                        _ => {}
                    }
                }
                Tok::And | Tok::Or => {
                    self.command(&cmd, Some(*t == Tok::And));
                    cmd.clear();
                }
            }
        }
        self.command(&cmd, None);
    }

    /// One command; `joined` says how it joins the next (`&&`: `Some(true)`, `||`: `Some(false)`).
    /// Keywords (`if`, `then`, `else`, `fi`, …) at its start are read one by one.
    fn command(&mut self, mut cmd: &[&Tok], joined: Option<bool>) {
        loop {
            let first = match cmd.first() {
                Some(Tok::Word(w)) => w.as_str(),
                Some(_) => "",
                None => return,
            };
            let top = self.frames.last().copied();
            let next = match first {
                "if" => {
                    // an if inside a branch not run is skipped to its fi
                    let b = if self.executing() {
                        Branch::Cond
                    } else {
                        Branch::Done
                    };
                    self.frames.push(b);
                    self.cond.clear();
                    None
                }
                "elif" => Some(match top {
                    Some(Branch::Waiting) => {
                        self.cond.clear();
                        Branch::Cond
                    }
                    Some(Branch::Taking) => Branch::Done,
                    Some(other) => other,
                    None => Branch::Done,
                }),
                "then" if top == Some(Branch::Cond) => Some(match self.decide() {
                    Some(true) => Branch::Taking,
                    Some(false) => Branch::Waiting,
                    None => Branch::Done,
                }),
                "then" => top,
                "else" => Some(match top {
                    Some(Branch::Waiting) => Branch::Taking,
                    Some(Branch::Taking) => Branch::Done,
                    Some(other) => other,
                    None => Branch::Done,
                }),
                "fi" | "done" | "esac" => {
                    self.close();
                    None
                }
                "case" => {
                    cmd = &cmd[self.case(cmd)..];
                    continue;
                }
                "for" | "while" | "until" | "select" => {
                    self.frames.push(Branch::Skipped);
                    return;
                }
                _ => break,
            };
            if let (Some(b), Some(last)) = (next, self.frames.last_mut()) {
                *last = b;
            }
            cmd = &cmd[1..];
        }
        if let Some(Branch::Patterns { .. }) = self.frames.last() {
            let room = MAX_PATTERNS - self.patterns.len().min(MAX_PATTERNS);
            self.patterns.extend(words_of(cmd).take(room));
            return;
        }
        if self.frames.last() == Some(&Branch::Cond) {
            self.cond.push((words_of(cmd).collect(), joined));
            return;
        }
        if !self.executing() {
            return;
        }
        self.simple(cmd);
    }

    /// `fi`, `done`, `esac`: the innermost frame ends.
    fn close(&mut self) {
        if let Some(Branch::Patterns { .. } | Branch::Arm { .. }) = self.frames.pop() {
            self.subjects.pop();
        }
    }

    fn set_top(&mut self, b: Branch) {
        if let Some(last) = self.frames.last_mut() {
            *last = b;
        }
    }

    /// `case WORD in`: opens its frame, with the value it tests when that is known; the number
    /// of words read.
    fn case(&mut self, cmd: &[&Tok]) -> usize {
        let subject = match (cmd.get(1), cmd.get(2)) {
            (Some(Tok::Word(w)), Some(Tok::Word(in_))) if in_ == "in" && self.executing() => {
                let (v, _) = joined(self.expand(w, false, 0));
                (!v.contains(['$', '`'])).then_some(v)
            }
            _ => None,
        };
        self.frames.push(Branch::Patterns {
            taken: subject.is_none(),
            fall: false,
        });
        self.subjects.push(subject);
        self.patterns.clear();
        cmd.len().min(3)
    }

    /// At a `case` arm's `)`: whether the arm runs. bash runs the first arm one of whose
    /// patterns matches; when a pattern cannot be decided before one matches, no later arm is
    /// taken either. After an arm that ran and ended in `;&` (`fall`), this one runs.
    fn arm(&mut self, taken: bool, fall: bool) {
        let patterns = std::mem::take(&mut self.patterns);
        let subject = self.subjects.last().cloned().flatten();
        let run = match subject {
            _ if fall => Some(true),
            _ if taken => Some(false),
            None => None,
            Some(s) => {
                let mut any: Option<bool> = Some(false);
                for p in &patterns {
                    match self.pattern(p, &s) {
                        Some(true) => {
                            any = Some(true);
                            break;
                        }
                        Some(false) => {}
                        None => any = None,
                    }
                }
                // past the cap a pattern was left out: whether the arm runs is unknown
                if patterns.len() >= MAX_PATTERNS && any == Some(false) {
                    any = None;
                }
                any
            }
        };
        self.set_top(match run {
            Some(true) => Branch::Arm {
                run: true,
                taken: true,
            },
            Some(false) => Branch::Arm { run: false, taken },
            None => Branch::Arm {
                run: false,
                taken: true,
            },
        });
    }

    /// Whether a `case` pattern as written matches `subject`: a quoted or expanded pattern
    /// literally, a bare one by glob (`*`, `?`); `None` for what is not read (`[…]`, extglob,
    /// a glob with quotes or expansions in it, an unknown value).
    fn pattern(&mut self, raw: &str, subject: &str) -> Option<bool> {
        let glob = raw.contains(['*', '?', '[']);
        if raw.contains(['\'', '"', '$', '`', '\\']) {
            if glob {
                return None;
            }
            let (v, _) = joined(self.expand(raw, false, 0));
            return (!v.contains(['$', '`'])).then(|| v == subject);
        }
        if raw.contains(['[', '(']) {
            return None;
        }
        glob_matches(raw, subject, &mut self.glob_room)
    }

    /// The last `&&`/`||` list before `then`, in bash's left-to-right order (unknown: `None`).
    fn decide(&mut self) -> Option<bool> {
        let cond = std::mem::take(&mut self.cond);
        let mut acc: Option<bool> = None;
        let mut join: Option<bool> = None;
        for (words, next) in &cond {
            let v = self.test(words);
            acc = match join {
                None => v,
                Some(true) => match (acc, v) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                },
                Some(false) => match (acc, v) {
                    (Some(true), _) | (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                },
            };
            join = *next;
        }
        acc
    }

    /// One `[[ … ]]`, `[ … ]` or `test …` on strings; anything else is unknown.
    fn test(&mut self, words: &[String]) -> Option<bool> {
        let w: Vec<&str> = words.iter().map(String::as_str).collect();
        let inner: &[&str] = match w.as_slice() {
            ["[[", inner @ .., "]]"] | ["[", inner @ .., "]"] | ["test", inner @ ..] => inner,
            _ => return None,
        };
        let (negate, inner) = match inner {
            ["!", rest @ ..] => (true, rest),
            _ => (false, inner),
        };
        let mut val = |raw: &str| -> Option<String> {
            let (v, _) = joined(self.expand(raw, false, 0));
            (!v.contains('$') && !v.contains('`')).then_some(v)
        };
        let result = match inner {
            [a] => !val(a)?.is_empty(),
            ["-z", a] => val(a)?.is_empty(),
            ["-n", a] => !val(a)?.is_empty(),
            [a, op @ ("==" | "=" | "!="), b] => {
                let (a, b) = (val(a)?, val(b)?);
                // an unquoted pattern in [[ ]] matches by glob: not read
                if b.contains(['*', '?', '[']) {
                    return None;
                }
                (a == b) == (*op != "!=")
            }
            _ => return None,
        };
        Some(result != negate)
    }

    /// A simple command: assignments alone set variables; a training command is kept.
    fn simple(&mut self, cmd: &[&Tok]) {
        let mut i = 0;
        let mut declare = false;
        if let Some(Tok::Word(w)) = cmd.first() {
            if matches!(
                w.as_str(),
                "export" | "declare" | "typeset" | "local" | "readonly"
            ) {
                declare = true;
                i = 1;
            }
        }
        let mut assigns: Vec<&Tok> = Vec::new();
        while let Some(t) = cmd.get(i) {
            match t {
                Tok::Array(..) => assigns.push(t),
                Tok::Word(w) if assignment(w).is_some() => assigns.push(t),
                Tok::Word(w) if declare && (w.starts_with('-') || !w.contains('=')) => {}
                Tok::Word(_) => break,
                _ => {}
            }
            i += 1;
        }
        if i >= cmd.len() {
            for t in assigns {
                self.assign(t);
            }
            return;
        }
        // `NAME=value cmd …`: the values are the command's environment only
        let mut words: Vec<Val> = Vec::new();
        for t in &cmd[i..] {
            if let Tok::Word(w) = t {
                for x in self.expand(w, true, 0) {
                    if words.len() < MAX_WORDS {
                        words.push(x);
                    } else {
                        self.script.too_large = true;
                    }
                }
            }
        }
        let Some(k) = training_start(&words) else {
            return;
        };
        let (command, origins) = words.split_off(k).into_iter().unzip();
        self.script.command = command;
        self.script.origins = origins;
        self.script.commands += 1;
    }

    fn assign(&mut self, t: &Tok) {
        match t {
            Tok::Array(name, append, raw) => {
                let mut items = match (append, self.vars.get(name)) {
                    (true, Some(Var::Arr(a))) => a.clone(),
                    (true, Some(Var::Str(s))) => vec![s.clone()],
                    _ => Vec::new(),
                };
                for w in raw {
                    for x in self.expand(w, true, 0) {
                        if items.len() < MAX_WORDS {
                            items.push(x);
                        } else {
                            self.script.too_large = true;
                        }
                    }
                }
                let from = items.iter().fold(0, |m, (_, b)| m | b);
                self.assigned_from(name, from);
                self.vars.insert(name.clone(), Var::Arr(items));
            }
            Tok::Word(w) => {
                let Some((name, append, value)) = assignment(w) else {
                    return;
                };
                let (mut v, mut from) = joined(self.expand(value, false, 0));
                let name = name.to_string();
                if append {
                    let (old, old_from) = match self.vars.get(&name) {
                        Some(Var::Str(s)) => s.clone(),
                        Some(Var::Arr(a)) => a.first().cloned().unwrap_or_default(),
                        None => Default::default(),
                    };
                    v = old + &v;
                    from |= old_from;
                }
                self.assigned_from(&name, from);
                let v = (v, from);
                if v.0.len() > MAX_LEN {
                    self.script.too_large = true;
                    return;
                }
                match self.vars.get_mut(&name) {
                    // `A=x` on an array sets its first element
                    Some(Var::Arr(a)) if !a.is_empty() => a[0] = v,
                    _ => {
                        self.vars.insert(name, Var::Str(v));
                    }
                }
            }
            _ => {}
        }
    }

    /// Records `name` as the variable the defaults `from` first went into.
    fn assigned_from(&mut self, name: &str, from: u64) {
        for (k, d) in self.script.defaults.iter_mut().enumerate() {
            if from & (1u64 << k) != 0 && d.into.is_none() {
                d.into = Some(name.to_string());
            }
        }
    }

    /// The bit of the default `value` taken for the unset `name` (recorded the first time).
    fn default_bit(&mut self, name: &str, value: &str) -> u64 {
        let defaults = &mut self.script.defaults;
        let k = match defaults
            .iter()
            .position(|d| d.name == name && d.value == value)
        {
            Some(k) => k,
            None if defaults.len() < MAX_DEFAULTS => {
                defaults.push(Defaulted {
                    name: name.to_string(),
                    value: value.to_string(),
                    into: None,
                });
                defaults.len() - 1
            }
            None => return 0,
        };
        1u64 << k
    }

    /// A word's fields after expansion (`split`: unquoted expansions are split at blanks, as in
    /// a command; otherwise one field, as in an assignment).
    fn expand(&mut self, raw: &str, split: bool, depth: usize) -> Vec<Val> {
        let c: Vec<char> = raw.chars().collect();
        let mut f = Fields {
            room: self.room,
            ..Fields::default()
        };
        if depth > MAX_DEPTH {
            self.script.too_large = true;
            f.push(raw);
            return f.into_words();
        }
        let mut i = 0;
        while i < c.len() {
            match c[i] {
                '\\' => {
                    if let Some(&x) = c.get(i + 1) {
                        if x != '\n' {
                            f.push(&x.to_string());
                        }
                    }
                    i += 2;
                }
                '\'' => {
                    let end = skip(&c, i, 0).max(i + 1);
                    let inner: String = c[(i + 1).min(end)..end.saturating_sub(1).max(i + 1)]
                        .iter()
                        .collect();
                    f.push(&inner);
                    i = end;
                }
                '"' => i = self.double_quoted(&c, i, &mut f, depth),
                '$' | '`' => {
                    let end = dollar_end(&c, i);
                    let text: String = c[i..end].iter().collect();
                    self.dollar(&text, !split, &mut f, depth);
                    i = end;
                }
                x => {
                    f.push(&x.to_string());
                    i += 1;
                }
            }
        }
        self.room = self.room.min(f.room);
        self.script.too_large |= f.over;
        let words = f.into_words();
        if split {
            words
        } else {
            vec![joined(words)]
        }
    }

    /// A double-quoted part from `c[i]`: its escapes and expansions into one field; the index
    /// after it.
    fn double_quoted(&mut self, c: &[char], i: usize, f: &mut Fields, depth: usize) -> usize {
        f.started = true;
        let end = skip(c, i, 0).max(i + 1);
        let stop = if c.get(end - 1) == Some(&'"') && end - 1 > i {
            end - 1
        } else {
            end
        };
        let mut j = i + 1;
        while j < stop {
            match c[j] {
                '\\' if matches!(c.get(j + 1), Some('$' | '`' | '"' | '\\')) => {
                    f.push(&c[j + 1].to_string());
                    j += 2;
                }
                '\\' if c.get(j + 1) == Some(&'\n') => j += 2,
                '$' | '`' => {
                    let e = dollar_end(c, j).min(stop).max(j + 1);
                    let text: String = c[j..e].iter().collect();
                    self.dollar(&text, true, f, depth);
                    j = e;
                }
                x => {
                    f.push(&x.to_string());
                    j += 1;
                }
            }
        }
        end
    }

    /// One expansion (`$NAME`, `${…}`, `$((…))`, `$(…)`, a backquote) into the fields.
    fn dollar(&mut self, text: &str, quoted: bool, f: &mut Fields, depth: usize) {
        let put = |f: &mut Fields, s: &str| {
            if quoted {
                f.push(s)
            } else {
                f.split(s)
            }
        };
        if text == "$" {
            return f.push("$");
        }
        if let Some(expr) = text.strip_prefix("$((").and_then(|t| t.strip_suffix("))")) {
            let (inner, from) = joined(self.expand(expr, false, depth + 1));
            match (!inner.contains(['$', '`']))
                .then(|| Arith::eval(&inner, &self.vars))
                .flatten()
            {
                Some((n, names)) => f.put_from(&n.to_string(), from | names, quoted),
                None => f.push(text),
            }
            return;
        }
        if let Some(inner) = text.strip_prefix("${").and_then(|t| t.strip_suffix('}')) {
            return self.braced(text, inner, quoted, f, depth);
        }
        let Some(name) = text.strip_prefix('$') else {
            return f.push(text); // a backquote: unknown
        };
        match self.vars.get(name).cloned() {
            Some(Var::Str((s, from))) => f.put_from(&s, from, quoted),
            Some(Var::Arr(a)) => match a.first() {
                Some((s, from)) => f.put_from(s, *from, quoted),
                None => put(f, ""),
            },
            None => f.push(text),
        }
    }

    /// `${…}`: a name, an element, a length, or a default.
    fn braced(&mut self, text: &str, inner: &str, quoted: bool, f: &mut Fields, depth: usize) {
        let put = |f: &mut Fields, s: &str| {
            if quoted {
                f.push(s)
            } else {
                f.split(s)
            }
        };
        let (len, body) = match inner.strip_prefix('#') {
            Some(b) if !b.is_empty() => (true, b),
            _ => (false, inner),
        };
        let name_end = body
            .char_indices()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(body.len(), |(i, _)| i);
        let (name, mut rest) = body.split_at(name_end);
        if name.is_empty() {
            return f.push(text);
        }
        let mut index: Option<&str> = None;
        if let Some(r) = rest.strip_prefix('[') {
            let Some(close) = r.find(']') else {
                return f.push(text);
            };
            index = Some(&r[..close]);
            rest = &r[close + 1..];
        }
        let var = self.vars.get(name).cloned();
        // the value's elements; None when unset
        let elems = elements(var.as_ref(), index);
        if len {
            if !rest.is_empty() {
                return f.push(text);
            }
            let n = match (&elems, index) {
                (Some(e), Some("@" | "*")) => e.len(),
                (Some(e), _) => e.first().map_or(0, |(s, _)| s.chars().count()),
                (None, _) => return f.push(text),
            };
            return put(f, &n.to_string());
        }
        let many = matches!(index, Some("@" | "*"));
        let set = elems.is_some();
        let empty = elems
            .as_ref()
            .is_none_or(|e| e.iter().all(|(s, _)| s.is_empty()));
        let op = ["-", ":-", "=", ":=", "+", ":+", "?", ":?"]
            .iter()
            .filter(|o| rest.starts_with(**o))
            .max_by_key(|o| o.len())
            .copied();
        let word = op.map_or("", |o| &rest[o.len()..]);
        let alternative = match op {
            None if !rest.is_empty() => return f.push(text), // ${a%…}, ${a/…}, ${a:1}: not read
            None => None,
            Some("-" | "=") => (!set).then_some(word),
            Some(":-" | ":=") => empty.then_some(word),
            Some("+") => Some(if set { word } else { "" }),
            Some(":+") => Some(if empty { "" } else { word }),
            _ => None, // ${a?msg}: an error when unset; the value otherwise
        };
        if let Some(w) = alternative {
            let (v, mut from) = joined(self.expand(w, false, depth + 1));
            // a default for a variable the script never sets: bash takes it where the variable
            // is not in the environment; dpcalc names it
            if var.is_none() && matches!(op, Some("-" | ":-" | "=" | ":=")) {
                from |= self.default_bit(name, &v);
            }
            if matches!(op, Some("=" | ":="))
                && index.is_none()
                && !name.starts_with(|c: char| c.is_ascii_digit())
            {
                self.vars
                    .insert(name.to_string(), Var::Str((v.clone(), from)));
            }
            return f.put_from(&v, from, quoted);
        }
        put_elements(f, text, elems, (many, quoted));
    }
}

/// Programs that run the command after their own words (`uv run`, `srun -N 2`, `nsys profile
/// -o f`, `env A=1`): a training command behind one of them is the one followed.
const RUNNERS: &[&str] = &[
    "apptainer",
    "conda",
    "env",
    "exec",
    "hatch",
    "ionice",
    "mpirun",
    "ncu",
    "nice",
    "nohup",
    "nsys",
    "numactl",
    "pdm",
    "pixi",
    "poetry",
    "rye",
    "singularity",
    "srun",
    "stdbuf",
    "taskset",
    "time",
    "timeout",
    "uv",
];

/// Whether a word names a program that runs a training script.
fn is_training(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    matches!(base, "torchrun" | "deepspeed" | "accelerate")
        || base.starts_with("python")
        || base.ends_with(".py")
}

/// Where a command's training program starts: its first word after `NAME=value` words, or,
/// behind a runner ([`RUNNERS`]) or a value dpcalc cannot know (`$VENV_PREFIX` from the
/// environment: bash may expand it to a runner or to nothing), the first training word after it.
fn training_start(words: &[Val]) -> Option<usize> {
    let k = words.iter().position(|(w, _)| assignment(w).is_none())?;
    let first = words[k].0.as_str();
    if is_training(first) {
        return Some(k);
    }
    let base = first.rsplit('/').next().unwrap_or(first);
    if !(RUNNERS.contains(&base) || first.starts_with('$')) {
        return None;
    }
    words[k + 1..]
        .iter()
        .position(|(w, _)| is_training(w))
        .map(|p| k + 1 + p)
}

/// A variable's elements as `${name}` or `${name[index]}` reads them; `None` when unset.
fn elements(var: Option<&Var>, index: Option<&str>) -> Option<Vec<Val>> {
    match (var, index) {
        (None, _) => None,
        (Some(Var::Str(s)), None | Some("0" | "@" | "*")) => Some(vec![s.clone()]),
        (Some(Var::Str(_)), Some(_)) => None,
        (Some(Var::Arr(a)), None) => a.first().map(|s| vec![s.clone()]),
        (Some(Var::Arr(a)), Some("@" | "*")) => Some(a.clone()),
        (Some(Var::Arr(a)), Some(n)) => n
            .trim()
            .parse::<usize>()
            .ok()
            .and_then(|n| a.get(n))
            .map(|v| vec![v.clone()]),
    }
}

/// A `${…}`'s value into the fields: `"${a[@]}"` one field per element, else split as unquoted.
fn put_elements(f: &mut Fields, text: &str, elems: Option<Vec<Val>>, (many, quoted): (bool, bool)) {
    match elems {
        None => f.push(text),
        Some(e) if many && quoted => {
            for (k, (s, from)) in e.iter().enumerate() {
                if k > 0 {
                    f.finish();
                    f.started = true;
                }
                f.put_from(s, *from, true);
            }
        }
        Some(e) => {
            for (k, (s, from)) in e.iter().enumerate() {
                if k > 0 {
                    f.finish();
                }
                f.put_from(s, *from, quoted);
            }
        }
    }
}

/// The words of a command as written (its array assignments left out).
fn words_of<'a>(cmd: &'a [&Tok]) -> impl Iterator<Item = String> + 'a {
    cmd.iter().filter_map(|t| match t {
        Tok::Word(w) => Some(w.clone()),
        _ => None,
    })
}

/// The most patterns one `case` arm is read with.
const MAX_PATTERNS: usize = 256;

/// The most steps the glob matching of one script's `case` patterns takes.
const MAX_GLOB_STEPS: usize = 1_000_000;

/// Whether `text` matches a glob of `*` and `?` (no brackets); `None` past a length dpcalc
/// matches or once the script's steps (`room`) are spent, so the work stays bounded.
fn glob_matches(pattern: &str, text: &str, room: &mut usize) -> Option<bool> {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    if p.len() > 256 || t.len() > 4096 {
        return None;
    }
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        *room = room.checked_sub(1)?;
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return Some(false);
        }
    }
    Some(p[i..].iter().all(|&c| c == '*'))
}

/// bash's integer arithmetic (`+ - * / %`, parentheses, unary signs) on 64-bit integers; a
/// name is its variable's value. `None` for anything unknown, unread or overflowing.
struct Arith<'a> {
    t: Vec<String>,
    i: usize,
    vars: &'a HashMap<String, Var>,
    depth: usize,
    /// The defaults of the variables read.
    from: u64,
}

impl<'a> Arith<'a> {
    /// The value, and the defaults of the variables it read.
    fn eval(expr: &str, vars: &'a HashMap<String, Var>) -> Option<(i64, u64)> {
        let mut t = Vec::new();
        let c: Vec<char> = expr.chars().collect();
        let mut i = 0;
        while i < c.len() {
            let x = c[i];
            if x.is_whitespace() {
                i += 1;
            } else if x.is_ascii_alphanumeric() || x == '_' {
                let s = i;
                while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
                t.push(c[s..i].iter().collect());
            } else if "+-*/%()".contains(x) {
                if x == '*' && c.get(i + 1) == Some(&'*') {
                    return None; // ** not read
                }
                t.push(x.to_string());
                i += 1;
            } else {
                return None;
            }
        }
        let mut a = Arith {
            t,
            i: 0,
            vars,
            depth: 0,
            from: 0,
        };
        let v = a.sum()?;
        (a.i == a.t.len()).then_some((v, a.from))
    }

    fn peek(&self) -> Option<&str> {
        self.t.get(self.i).map(String::as_str)
    }

    fn sum(&mut self) -> Option<i64> {
        let mut v = self.product()?;
        while let Some(op @ ("+" | "-")) = self.peek() {
            let plus = op == "+";
            self.i += 1;
            let r = self.product()?;
            v = if plus {
                v.checked_add(r)?
            } else {
                v.checked_sub(r)?
            };
        }
        Some(v)
    }

    fn product(&mut self) -> Option<i64> {
        let mut v = self.unary()?;
        while let Some(op @ ("*" | "/" | "%")) = self.peek() {
            let op = op.to_string();
            self.i += 1;
            let r = self.unary()?;
            v = match op.as_str() {
                "*" => v.checked_mul(r)?,
                "/" => v.checked_div(r)?,
                _ => v.checked_rem(r)?,
            };
        }
        Some(v)
    }

    fn unary(&mut self) -> Option<i64> {
        self.depth += 1;
        if self.depth > MAX_DEPTH * 4 {
            return None;
        }
        let v = match self.peek()? {
            "-" => {
                self.i += 1;
                self.unary()?.checked_neg()?
            }
            "+" => {
                self.i += 1;
                self.unary()?
            }
            "(" => {
                self.i += 1;
                let v = self.sum()?;
                if self.peek()? != ")" {
                    return None;
                }
                self.i += 1;
                v
            }
            tok => {
                let tok = tok.to_string();
                self.i += 1;
                if tok.starts_with(|c: char| c.is_ascii_digit()) {
                    decimal(&tok)?
                } else {
                    let (s, from) = match self.vars.get(&tok)? {
                        Var::Str(v) => v,
                        Var::Arr(a) => a.first()?,
                    };
                    self.from |= from;
                    decimal(s.trim())?
                }
            }
        };
        self.depth -= 1;
        Some(v)
    }
}

/// A decimal integer as bash's arithmetic reads it; a leading `0` (octal) or `0x` is not read.
fn decimal(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(text: &str) -> Vec<String> {
        read(text).command
    }

    #[test]
    fn variables_arrays_and_arithmetic() {
        let s = "N=2\nG=8\nW=$(($G*$N))\nA=(\n  --x $W # c (d)\n  --y \"a b\"\n)\nA+=(\"--z 1\")\ntorchrun ${A[@]} t.py \"${A[@]}\" ${1:-\"d e\"} $2\n";
        assert_eq!(
            cmd(s),
            [
                "torchrun", "--x", "16", "--y", "a", "b", "--z", "1", "t.py", "--x", "16", "--y",
                "a b", "--z 1", "d", "e", "$2"
            ]
        );
    }

    #[test]
    fn conditions_and_unknowns() {
        let s = "T=${3:-MOCK}\nL=()\nif [[ \"$T\" == \"MOCK\" ]] || [[ -z \"$T\" ]]; then\n L+=(--a)\nelse\n L+=(--b)\nfi\nif [ ! -f x ]; then\n exit 1\nelse\n L+=(--c)\nfi\npython t.py ${L[@]} $((X+1)) $(date) ${PWD}/d\n";
        assert_eq!(
            cmd(s),
            ["python", "t.py", "--a", "$((X+1))", "$(date)", "${PWD}/d"]
        );
    }

    #[test]
    fn case_on_a_value_the_script_sets() {
        let s = "M=${M:-7b}\ncase \"$M\" in\n 1b|small) L=16 ;;\n 7b)\n  L=32\n  A=(--x $L)\n  ;;\n *) L=80 ;;\nesac\n\
                 case $1 in\n x) B=1 ;;\nesac\ncase $M in 7*) C=c ;; 7b) C=d ;; esac\n\
                 case $M in [0-9]b) D=d ;; 7b) D=e ;; esac\npython t.py ${A[@]} $L ${B:-u} $C ${D:-none}\n";
        // 7b matches its own arm only; `$1` is unknown, so no arm runs; the first matching
        // glob wins; a bracket pattern is not read, so neither its arm nor a later one runs
        assert_eq!(
            cmd(s),
            ["python", "t.py", "--x", "32", "32", "u", "c", "none"]
        );
        // `;&` runs the next arm's commands too; `;;&` tests the next arms' patterns
        let s = "M=a\ncase $M in a) A=1 ;& b) A=2 ;; c) A=3 ;; esac\n\
                 case $M in a) B=1 ;;& ?) B=2 ;; *) B=3 ;; esac\npython t.py $A $B\n";
        assert_eq!(cmd(s), ["python", "t.py", "2", "2"]);
    }

    #[test]
    fn a_command_behind_a_runner_and_its_defaults() {
        let s = "N=${SLURM_NNODES:-\"1\"}\nW=$((8*N))\nP=()\nV=\"uv run\"\n\
                 $V \"${P[@]}\" python -m torch.distributed.run --nnodes $N --w $W --g ${G:-8} --h ${G:-8} t.py\n";
        let got = read(s);
        assert_eq!(
            got.command,
            [
                "python",
                "-m",
                "torch.distributed.run",
                "--nnodes",
                "1",
                "--w",
                "8",
                "--g",
                "8",
                "--h",
                "8",
                "t.py"
            ]
        );
        let names = |i: usize| -> Vec<String> {
            got.defaults_of(i)
                .map(|d| format!("{}={}>{:?}", d.name, d.value, d.into))
                .collect()
        };
        assert_eq!(names(4), ["SLURM_NNODES=1>Some(\"N\")"]);
        assert_eq!(names(6), ["SLURM_NNODES=1>Some(\"N\")"]);
        assert_eq!(names(8), ["G=8>None"]);
        assert!(names(3).is_empty() && names(0).is_empty());
        // each default once
        assert_eq!(got.defaults.len(), 2);
        // a runner's own words are not the command; an unknown prefix may be a runner
        assert_eq!(
            cmd("srun -N 2 nsys profile -o x torchrun t.py\n")[0],
            "torchrun"
        );
        assert_eq!(cmd("$PREFIX python t.py\n")[0], "python");
        assert!(cmd("echo python t.py\n").is_empty());
    }

    #[test]
    fn hostile_text_is_bounded() {
        let mut s = String::from("A=(x x)\n");
        for _ in 0..40 {
            s.push_str("A=(${A[@]} ${A[@]})\n");
        }
        s.push_str("python t.py ${A[@]}\n");
        let got = read(&s);
        assert!(got.too_large);
        assert!(got.command.len() <= MAX_WORDS);
        let deep = format!("python t.py {}x{}", "${a:-".repeat(5000), "}".repeat(5000));
        assert_eq!(read(&deep).commands, 1);
        assert!(read(&"$((".repeat(3000)).command.is_empty());
        assert!(read("A=( \"unclosed\nB=${").command.is_empty());
        let star = format!(
            "case {} in {}) ;; esac\npython t.py\n",
            "a".repeat(5000),
            "*a".repeat(200)
        );
        assert_eq!(read(&star).commands, 1);
        let mut many = String::from("case x in\n");
        for k in 0..300 {
            many.push_str(&format!("{k}|"));
        }
        many.push_str("x) A=1 ;; esac\npython t.py ${A:-u}\n");
        assert_eq!(cmd(&many)[2], "u");
        // many arms of costly globs: bounded by the steps all patterns share
        let mut costly = format!("S={}\n", "a".repeat(4000));
        for _ in 0..2000 {
            costly.push_str(&format!("case $S in {}b) A=1 ;; esac\n", "*a".repeat(100)));
        }
        costly.push_str("python t.py ${A:-u}\n");
        let start = std::time::Instant::now();
        assert_eq!(cmd(&costly)[2], "u");
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }
}

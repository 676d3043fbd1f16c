#!/usr/bin/env python3
"""Converts the oracle fixtures of the first oracle runs (four layouts: tests/oracle.txt and
tests/axolotl_oracle_boundaries.txt, tests/hf_oracle*.txt, tests/deepspeed_oracle.txt,
tests/megatron_oracle.txt, tests/torchtitan_oracle.txt, tests/nanotron_oracle.txt) into the one
format tests/common/mod.rs reads: tests/fixtures/<framework>.txt. Usage (from the repository root):

    scripts/fixtures_to_common.py            # reads the old files at HEAD~ or in the tree, writes tests/fixtures/
    scripts/fixtures_to_common.py --check    # prints the record and value counts per framework

The old files are read from the work tree when present, otherwise from git (`git show REV:PATH`,
REV = $FIXTURES_REV or the last commit that has them), so the conversion can be re-run after they
are deleted. Nothing is recomputed: every recorded value keeps its text; its Python type is derived
from that text (digits = int; a '.', an exponent, inf or nan = float), with one documented
exception (hf_oracle_third.txt's header: "An interval of exactly 1 stays 1.0 in Python; it is
written 1 here"). Python 3.11, standard library only.
"""
import os
import re
import subprocess
import sys
from urllib.parse import parse_qsl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures")

FORMAT_DOC = """\
# dpcalc oracle fixture (format 1; parsed by tests/common/mod.rs, written by scripts/fixtures_to_common.py).
# One record per line, one line per run of the framework's own code on one input:
#   FRAMEWORK RELEASE COMMAND CASE | LINK | OUTPUTS | OUTCOME [| OUTCOME]...
# FRAMEWORK  dpcalc's framework id; the link must decode to it.
# RELEASE    the release the link decodes to (link.release().id).
# COMMAND    the id of a `# command ID: ...` line of this file: how the values were produced.
# CASE       the oracle's case name, or - when the run did not name it.
# LINK       the dpcalc link (query string) holding the inputs; it must decode without notices.
# OUTPUTS    space-separated NAME=TYPE:REPR, with TYPE int or float and REPR the value as Python printed
#            it (int: digits, compared as an integer; float: compared as a double, and dpcalc's value must
#            be a float too), or NAME=none (no value: dpcalc must show none); - when the run recorded
#            none. A NAME starting with ~ is recorded but is not a dpcalc output (not compared).
# OUTCOME    ok             the framework ran; dpcalc must show no error
#            error          the framework refused (its text was not recorded); dpcalc must show an error
#            error@FIELD    dpcalc must show an error at input FIELD
#            error: TEXT    the framework raised TEXT; one of dpcalc's errors must contain it
#            hint: TEXT     one of dpcalc's hints must contain TEXT (an input the framework needs is missing)
#            unchecked      dpcalc's errors were not compared in this run (only its values)
# Where a test passes stop marks to the runner (deepspeed, nanotron), only dpcalc messages with a mark
# count for ok/error/hint: dpcalc also refuses inputs the oracle's code never reached.
"""


def old_text(name):
    path = os.path.join(ROOT, "tests", name)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    def git(*args):
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)

    rev = os.environ.get("FIXTURES_REV")
    if not rev:
        rev = git("log", "-1", "--format=%H", "--", f"tests/{name}").stdout.strip()
        if git("cat-file", "-e", f"{rev}:tests/{name}").returncode != 0:
            rev += "~"  # the commit that deleted it
    shown = git("show", f"{rev}:tests/{name}")
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def data_lines(text):
    """(line number, line) of every record line: not empty, not a comment."""
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            yield n, line


def header(text):
    return [l[1:].strip() for l in text.splitlines() if l.startswith("#")]


INT = re.compile(r"-?[0-9]+")
FLOAT = re.compile(r"-?(inf|nan|[0-9]+\.[0-9]*(e[-+]?[0-9]+)?|[0-9]+e[-+]?[0-9]+)")


def typed(value):
    """A recorded repr with its Python type; the text itself is never changed."""
    if value == "none":
        return "none"
    if INT.fullmatch(value):
        return f"int:{value}"
    if FLOAT.fullmatch(value):
        return f"float:{value}"
    raise SystemExit(f"cannot tell the Python type of {value!r}")


class Record:
    def __init__(self, framework, release, command, case, link, outputs, outcome, source):
        self.framework, self.release, self.command = framework, release, command
        self.case = case or "-"
        self.link, self.outputs, self.outcome, self.source = link, outputs, outcome, source
        for part in [self.case, self.link, *self.outcome] + [f"{k}={v}" for k, v in outputs]:
            assert " | " not in part and "\n" not in part, part
        assert " " not in self.case and " " not in self.link, (self.case, self.link)

    def line(self):
        outs = " ".join(f"{k}={typed(v)}" for k, v in self.outputs) or "-"
        return " | ".join([f"{self.framework} {self.release} {self.command} {self.case}",
                           self.link, outs, *self.outcome])


def link_param(link, key):
    values = [v for k, v in parse_qsl(link, keep_blank_values=True) if k == key]
    return values[-1] if values else None


# ---- axolotl: tests/oracle.txt, tests/axolotl_oracle_boundaries.txt ----------------------------
# `LINK => k=v ... [error]  # CASE[ @RELEASE]`; no `error` = the old runner compared values only.

def axolotl(name, command):
    out = []
    for n, line in data_lines(old_text(name)):
        q, rest = line.split(" => ")
        want, case = rest.split("  # ") if "  # " in rest else (rest, None)
        case = case.split(" @")[0] if case else None
        release = link_param(q, "version") or "0.19.0"
        outputs, outcome = [], ["unchecked"]
        for item in want.split():
            if item == "error":
                outcome = ["error"]
            else:
                k, v = item.split("=", 1)
                outputs.append((k, v))
        out.append(Record("axolotl", release, command, case, q, outputs, outcome, f"{name}:{n}"))
    return out


# ---- hf: tests/hf_oracle.txt `REL | k=v k=v | outputs-or-error=TEXT` ---------------------------

def hf_first(command):
    out = []
    for n, line in data_lines(old_text("hf_oracle.txt")):
        rel, inputs, want = line.split(" | ", 2)
        link = f"framework=hf&version={rel}&" + "&".join(inputs.split())
        if want.startswith("error="):
            outputs, outcome = [], ["error: " + want[len("error="):]]
        else:
            outputs = [tuple(i.split("=", 1)) for i in want.split()]
            outcome = ["ok"]
        out.append(Record("hf", rel, command, None, link, outputs, outcome, f"hf_oracle.txt:{n}"))
    return out


# ---- hf: tests/hf_oracle_random.txt `LINK | k=v ... | error=FIELD` -------------------------------
# error=FIELD: an error at FIELD and no max_steps (the old runner asserted max_steps is none).

def hf_random(command):
    out = []
    for n, line in data_lines(old_text("hf_oracle_random.txt")):
        q, want = line.split(" | ")
        outputs, outcome = [], ["unchecked"]
        for item in want.split(" "):
            k, v = item.split("=", 1)
            if k == "error":
                outcome = [f"error@{v}"]
                outputs.append(("max_steps", "none"))
            else:
                outputs.append((k, v))
        rel = link_param(q, "version") or "5.23"
        out.append(Record("hf", rel, command, None, q, outputs, outcome, f"hf_oracle_random.txt:{n}"))
    return out


# ---- hf: tests/hf_oracle_third.txt `LINK => k=v ...  # REL CASE` ---------------------------------
INTERVALS = {"eval_steps", "save_steps", "logging_steps"}


def hf_third(command):
    out = []
    for n, line in data_lines(old_text("hf_oracle_third.txt")):
        body, _, tail = line.partition("  #")
        q, want = body.split(" => ")
        q = q.strip()
        rel_case = tail.split()
        rel = link_param(q, "version")
        assert rel_case[0] == rel, line
        outputs = []
        for item in want.split():
            k, v = item.split("=", 1)
            given = link_param(q, k)
            if k in INTERVALS and v == "1" and given is not None and FLOAT.fullmatch(given):
                v = "1.0"  # the header: an interval of exactly 1 stays 1.0 in Python, written 1 there
            outputs.append(("~" + k if k == "len_dataloader" else k, v))
        out.append(Record("hf", rel, command, rel_case[1], q, outputs, ["unchecked"],
                          f"hf_oracle_third.txt:{n}"))
    return out


# ---- deepspeed: `CASE<TAB>LINK<TAB>values<TAB>error` ---------------------------------------------
# On an error the old runner asserted train_batch_size, train_micro_batch_size_per_gpu,
# gradient_accumulation_steps and max_steps are none: written out here as none.

def deepspeed(command):
    out = []
    for n, line in data_lines(old_text("deepspeed_oracle.txt")):
        case, q, values, error = line.split("\t")
        outputs = []
        for item in values.split():
            k, v = item.split("=", 1)
            outputs.append(("batch_check_world_size" if k == "W" else k, v))
        if error:
            assert not outputs, line
            outputs = [(k, "none") for k in ("train_batch_size", "train_micro_batch_size_per_gpu",
                                             "gradient_accumulation_steps", "max_steps")]
            outcome = ["error: " + error]
        else:
            outcome = ["ok"]
        rel = link_param(q, "version") or "0.19.8"
        out.append(Record("deepspeed", rel, command, case, q, outputs, outcome, f"deepspeed_oracle.txt:{n}"))
    return out


# ---- megatron: `REL QUERY => k=v ... [! text]... [! hint:text]  # CASE` ---------------------------

def megatron(command):
    out = []
    for n, line in data_lines(old_text("megatron_oracle.txt")):
        head, rest = line.split(" => ")
        rel, q = head.split(" ", 1)
        body, case = rest.rsplit("  # ", 1)
        parts = body.split(" ! ")
        outputs = [tuple(i.split("=", 1)) for i in parts[0].split()]
        outcome = ["hint: " + e[5:] if e.startswith("hint:") else "error: " + e for e in parts[1:]]
        link = f"framework=megatron&version={rel}&{q}"
        out.append(Record("megatron", rel, command, case, link, outputs, outcome or ["ok"],
                          f"megatron_oracle.txt:{n}"))
    return out


# ---- torchtitan: `LINK => k=v ... [| text]  # CASE` ----------------------------------------------

def torchtitan(command):
    out = []
    for n, line in data_lines(old_text("torchtitan_oracle.txt")):
        q, rest = line.split(" => ")
        rest, case = rest.split("  # ")
        want, _, raised = rest.partition(" | ")
        outputs = [tuple(i.split("=", 1)) for i in want.split()]
        rel = link_param(q, "version") or "0.3.0"
        out.append(Record("torchtitan", rel, command, case, q, outputs,
                          ["error: " + raised] if raised else ["ok"], f"torchtitan_oracle.txt:{n}"))
    return out


# ---- nanotron: `QUERY => k=v ... ; ok | raises TEXT` ------------------------------------------------
# A MissingValueError is a hint in dpcalc (an empty field is never an error).

def nanotron(command):
    out = []
    for n, line in data_lines(old_text("nanotron_oracle.txt")):
        q, rest = line.split(" => ")
        want, outcome = rest.split(" ; ")
        outputs = [tuple(i.split("=", 1)) for i in want.split()]
        if outcome == "ok":
            oc = ["ok"]
        else:
            text = outcome.removeprefix("raises ")
            oc = ["hint: " + text if "MissingValueError" in text else "error: " + text]
        link = f"framework=nanotron&{q}"
        rel = link_param(link, "version") or "0.4"
        out.append(Record("nanotron", rel, command, None, link, outputs, oc, f"nanotron_oracle.txt:{n}"))
    return out


def commands_from(name, cid, prefix):
    """A `# command` line and the old file's header, kept as the record of how it was made."""
    return [f"# command {cid}: {prefix}", *(f"#   | {h}" for h in header(old_text(name)))]


FRAMEWORKS = {
    "axolotl": [
        ("axolotl-1", "oracle.txt",
         "scripts/oracle_to_fixture.py CASES.json RESULTS_19.json RESULTS_14.json RESULTS_18.json "
         "(the first axolotl oracle run; the oracle itself lives outside the repo)", lambda c: axolotl("oracle.txt", c)),
        ("axolotl-boundaries", "axolotl_oracle_boundaries.txt",
         "scripts/oracle_to_fixture.py CASES.json RESULTS_19.json RESULTS_14.json RESULTS_18.json "
         "(cases near the boundaries between the releases)", lambda c: axolotl("axolotl_oracle_boundaries.txt", c)),
    ],
    "hf": [
        ("hf-1", "hf_oracle.txt", "oracle.py, the first HF Trainer oracle run, outside the repository (not kept)", hf_first),
        ("hf-random", "hf_oracle_random.txt", "an oracle script, seeded random cases (second run), outside the repository (not kept)", hf_random),
        ("hf-third", "hf_oracle_third.txt", "a helper's own scripts (third, independent run), outside the repository (not kept)", hf_third),
    ],
    "deepspeed": [("deepspeed-1", "deepspeed_oracle.txt", "oracle.py, run outside the repository (not kept)", deepspeed)],
    "megatron": [("megatron-1", "megatron_oracle.txt",
                  "scripts/megatron_oracle_to_fixture.py RESULTS.jsonl", megatron)],
    "torchtitan": [("torchtitan-1", "torchtitan_oracle.txt",
                    "to_fixture.py over oracle.py's runs, outside the repository (not kept)", torchtitan)],
    "nanotron": [("nanotron-1", "nanotron_oracle.txt", "run_oracle.py, outside the repository (not kept)", nanotron)],
}


NOTES = {
    "deepspeed": ["Stop marks: AssertionError, ZeroDivisionError (what DeepSpeedConfig and the loader raise). On a refusal",
                  "the four batch outputs are none: the old runner asserted that without listing them."],
    "nanotron": ["Stop marks: `nanotron stops with`, `dacite.exceptions`."],
    "hf": ["hf-random's error@FIELD records list max_steps=none: the old runner asserted that without listing it."],
}


def main():
    check = "--check" in sys.argv
    os.makedirs(OUT, exist_ok=True)
    for fw, runs in FRAMEWORKS.items():
        lines = [FORMAT_DOC.rstrip("\n"), "#", "# Converted from the old fixtures by scripts/fixtures_to_common.py; values unchanged."]
        lines += [f"# {n}" for n in NOTES.get(fw, [])]
        records = []
        for cid, name, cmd, read in runs:
            lines += commands_from(name, cid, f"{cmd} -> tests/{name}")
            records += read(cid)
        lines += [r.line() for r in records]
        values = sum(1 for r in records for k, _ in r.outputs)
        types = {}
        for r in records:
            for _, v in r.outputs:
                t = typed(v).split(":")[0]
                types[t] = types.get(t, 0) + 1
        print(f"{fw}: {len(records)} records, {values} values {types}", file=sys.stderr)
        if not check:
            with open(os.path.join(OUT, f"{fw}.txt"), "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

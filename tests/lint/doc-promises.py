#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The promises of the docs that can be checked mechanically, checked.

README.md, docs/*.md, man/* and configs/tcmud.conf name things a reader
relies on; each must exist:

  paths      every path of the tree they name (`daemon/...`, `tests/...`,
             `scripts/...`, ...) exists;
  scenarios  every VM scenario they name (`tcmud-reload`) is a file of
             tests/vm/scenarios/, and every scenario of a CI list exists;
  options    every option of tcmud(8) and tcmudctl(8) is in the program's
             --help and every --help option is in the man page; every
             `--option` the docs name belongs to tcmud, tcmudctl or a
             script of the tree;
  keys       the keys of tcmud.conf documented in docs/admin.md, in
             tcmud.conf(5) and in configs/tcmud.conf are exactly those
             daemon/config/daemon_config.cpp parses;
  defaults   each default of include/tcmud/defaults.h is what tcmud --help
             prints and what admin.md, tcmud.conf(5) and configs/tcmud.conf
             state;
  variables  every TCMUD_* and BENCH_* environment variable they name is
             read somewhere in the tree;
  unit tests README's layout: tests/unit/<part>/ for a part of daemon/,
             handlers/ or tools/, and its tests named *_test.cpp.

    tests/lint/doc-promises.py SRC TCMUD TCMUDCTL

Exit 77 (skip) where SRC is not a git checkout.
"""
import pathlib
import re
import subprocess
import sys

TOP_DIRS = ("daemon", "handlers", "include", "tests", "scripts", "kmod", "tools", "docs",
            "configs", "systemd", "man", "debian", "examples", ".ci")
SCENARIO = re.compile(r"^(tcmud|tcmudctl|kmod|rbd|systemd|fileio|tcmu-runner|targetcli|bench|"
                      r"provoke|smoke|demo)(-[a-z0-9]+)*$")
# Backticked names of that shape that are not scenarios.
NOT_SCENARIOS = {
    "tcmud-dkms",   # the Debian package
    "tcmud-kmod",   # the DKMS module name
    "tcmu-runner",  # the program
    "tcmud",
    "tcmudctl",
}
# Options of programs that are not ours (fio, sg3_utils, targetcli, meson,
# qemu, git, ...) that the docs quote.
FOREIGN_OPTIONS = {
    "--atomic", "--prefix", "--sysconfdir", "--suite", "--list", "--reconfigure", "--now",
    "--print-errorlogs", "--setup", "--buildtype", "--wipe", "--cached", "--kernel-only",
    "--rw", "--bs", "--iodepth", "--numjobs", "--direct", "--ioengine", "--verify",
    "--runtime", "--size", "--filename", "--name", "--time_based", "--output-format",
    "--group_reporting", "--no-rebuild", "--timeout-multiplier", "--man", "--dry-run",
    "--variable", "--force-version-override",
}
# Paths the docs name outside this tree (the kernel's).
FOREIGN_PATHS = {"scripts/get_maintainer.pl", "scripts/checkpatch.pl"}
# Variables the docs name as history (an earlier spelling, or a trial's
# knob that was measured and taken out again).
OLD_VARIABLES = {"BENCH_INSN_SKIP", "TCMUD_RING_POLL_US"}
CONFIG_DOCS_KEYS = ("log_level", "log_dir", "max_in_flight", "uring_entries",
                    "max_transfer_kb", "queue_cpus", "dbus", "control_socket")


class lint:
    def __init__(self):
        self.bad = 0
        self.checked = 0

    def ok(self, cond, what):
        self.checked += 1
        if not cond:
            print(what)
            self.bad += 1


def docs(src):
    return [src / "README.md", *sorted((src / "docs").glob("*.md"))]


def backticked(text):
    return re.findall(r"`([^`\n]+)`", text)


def check_paths(src, out):
    tracked = set(subprocess.run(["git", "-C", str(src), "ls-files"], capture_output=True,
                                 text=True).stdout.split("\n"))
    dirs = {str(pathlib.PurePath(p).parent) for p in tracked}
    dirs |= {str(d) for p in dirs for d in pathlib.PurePath(p).parents}

    def exists(p):
        p = p.rstrip("/")
        if p in tracked or p in dirs or p in FOREIGN_PATHS or p + ".in" in tracked:
            return True
        # A program the build makes: named in its folder's meson.build.
        parent = src / pathlib.PurePath(p).parent / "meson.build"
        if parent.is_file() and f"'{pathlib.PurePath(p).name}'" in parent.read_text():
            return True
        # A prefix: kmod/extra/0003 (a patch by number), a file without .h/.cpp.
        return any(t.startswith(p) for t in tracked)

    for doc in docs(src) + sorted((src / "man").glob("*.[0-9]")):
        text = doc.read_text()
        # Paths in backticks, and bare ones in running text.
        for m in re.finditer(r"(?<![\w./-])((?:%s)/[\w./+-]*[\w/+])" % "|".join(
                re.escape(d) for d in TOP_DIRS), text):
            p = m[1]
            # PATH.h/.cpp, PATH.* and placeholders name several files.
            if re.search(r"[<>*…]|\.\.\.", text[m.start():m.end() + 2]) or \
                    re.search(r"/[A-Z]+(/|$)", p):
                continue
            p = re.sub(r"\.(h|cpp)/\.(h|cpp)$", r".\1", p)
            p = re.sub(r"/\.(h|cpp)$", "", p)
            if p.startswith("tests/vm/scenarios/") and not p.endswith("/") and "." not in p:
                p += ".sh"
            out.ok(exists(p), f"{doc.relative_to(src)}: no path {p} in the tree")


def check_scenarios(src, out):
    have = {p.stem for p in (src / "tests/vm/scenarios").glob("*.sh")}
    # Names that are not scenarios but look like them: meson tests
    # (`kmod-series`) and benchmark variants (`fileio-direct`), defined in
    # the bench scripts and scenarios.
    also = set()
    for f in subprocess.run(["git", "-C", str(src), "ls-files", "*meson.build", "tests/vm/bench",
                             "tests/vm/scenarios/bench-*",
                             "scripts"], capture_output=True, text=True).stdout.split():
        if (src / f).is_file():
            also |= set(re.findall(r"[a-z0-9-]+", (src / f).read_text(errors="replace")))
    for doc in docs(src):
        # A backticked name counts as a scenario's in a paragraph that
        # speaks of scenarios.
        for para in re.split(r"\n\s*\n", doc.read_text()):
            if not re.search(r"scenario", para, re.I):
                continue
            for tok in backticked(para):
                for word in re.split(r"[\s,]+", tok):
                    if SCENARIO.match(word) and "-" in word and word not in NOT_SCENARIOS:
                        out.ok(word in have or word in also,
                               f"{doc.relative_to(src)}: scenario {word} "
                               "does not exist in tests/vm/scenarios/")
    for lst in sorted((src / "tests/vm").glob("*.list")):
        for line in lst.read_text().split("\n"):
            name = line.split("#")[0].strip()
            if name:
                out.ok(name in have, f"{lst.relative_to(src)}: scenario {name} does not exist")


def options_of(text):
    return set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))


def man_options(path):
    return options_of(path.read_text().replace("\\-", "-"))


def check_options(src, tcmud_help, tcmudctl_help, out):
    for prog, helptext in (("tcmud", tcmud_help), ("tcmudctl", tcmudctl_help)):
        man = man_options(src / "man" / f"{prog}.8")
        helped = options_of(helptext)
        for o in sorted(man - helped):
            out.ok(False, f"man/{prog}.8: {o} is not in {prog} --help")
        for o in sorted(helped - man):
            out.ok(False, f"{prog} --help: {o} is not in man/{prog}.8")
        out.ok(bool(helped), f"{prog} --help names no option")
    # Every option the docs name is one of ours: of a program or of a script.
    ours = options_of(tcmud_help) | options_of(tcmudctl_help)
    tracked = subprocess.run(["git", "-C", str(src), "ls-files", "scripts", "tests", "kmod",
                              ".ci"], capture_output=True, text=True).stdout.split()
    for f in tracked:
        p = src / f
        if p.suffix in ("", ".sh", ".py") and p.is_file():
            try:
                ours |= options_of(p.read_text())
            except UnicodeDecodeError:
                pass
    for doc in docs(src):
        for tok in backticked(doc.read_text()):
            for o in options_of(tok):
                if o not in FOREIGN_OPTIONS:
                    out.ok(o in ours, f"{doc.relative_to(src)}: option {o} in `{tok}` belongs "
                           "to no program or script of the tree")


def parsed_keys(src):
    text = (src / "daemon/config/daemon_config.cpp").read_text()
    # The tcmud.conf table: {"key", set_...} entries before the tcmu.conf one.
    table = text[:text.index("set_tcmu_log_level},")]
    return set(re.findall(r'\{"([a-z_]+)", set_[a-z_]+\}', table))


def admin_config_table(src):
    text = (src / "docs/admin.md").read_text()
    section = text[text.index("## Configuration"):]
    section = section[:section.index("\n## ", 1)]
    rows = {}
    for line in section.split("\n"):
        m = re.match(r"^\| `([a-z_]+)` \| ([^|]*) \| ([^|]*) \|", line)
        if m:
            rows[m[1]] = m[3].strip().strip("`")
    return rows


def man_conf_keys(src):
    text = (src / "man/tcmud.conf.5").read_text()
    keys = {}
    for m in re.finditer(r'^\.BR ([a-z_]+) " = "[^\n]*\n(.*?)(?=^\.TP|^\.SH)', text, re.M | re.S):
        d = re.search(r"default \\fI([^\\]+)\\fR|default \\fB([^\\]+)\\fR|default ([0-9]+)", m[2])
        keys[m[1]] = next((g for g in d.groups() if g), None) if d else None
    return keys


def shipped_conf_keys(src):
    text = (src / "configs/tcmud.conf").read_text()
    return dict(re.findall(r"^#([a-z_]+) = (.*)$", text, re.M))


def check_keys(src, out):
    parsed = parsed_keys(src)
    out.ok(len(parsed) >= 5, f"daemon_config.cpp: found only {sorted(parsed)} as keys")
    for where, keys in (("docs/admin.md's table", admin_config_table(src)),
                        ("man/tcmud.conf.5", man_conf_keys(src)),
                        ("configs/tcmud.conf", shipped_conf_keys(src))):
        for k in sorted(set(keys) - parsed):
            out.ok(False, f"{where}: key {k} is not parsed by daemon/config/daemon_config.cpp")
        for k in sorted(parsed - set(keys)):
            out.ok(False, f"{where}: key {k} (parsed by daemon_config.cpp) is not documented")


def defaults(src):
    text = (src / "include/tcmud/defaults.h").read_text()
    found = dict(re.findall(r"\bdefault_(\w+) =\s*\"?([^\";]+)\"?;", text))
    return found


def check_defaults(src, tcmud_help, out):
    d = defaults(src)
    want = {  # key: the default it must state, from defaults.h
        "max_in_flight": d.get("max_in_flight"),
        "uring_entries": d.get("uring_entries"),
        "max_transfer_kb": d.get("max_transfer_kb"),
        "log_dir": d.get("log_dir"),
        "control_socket": d.get("control_socket"),
    }
    for k, v in want.items():
        out.ok(v is not None, f"include/tcmud/defaults.h: no default_{k}")
        if v is None:
            continue
        out.ok(f"default {v}" in tcmud_help, f"tcmud --help does not print {k}'s default {v}")
    for where, keys in (("docs/admin.md's table", admin_config_table(src)),
                        ("man/tcmud.conf.5", man_conf_keys(src)),
                        ("configs/tcmud.conf", shipped_conf_keys(src))):
        for k, v in want.items():
            if v is not None and k in keys:
                out.ok(keys[k] == v, f"{where}: {k}'s default is {keys[k]!r}, "
                       f"include/tcmud/defaults.h says {v!r}")


def check_variables(src, out):
    tracked = subprocess.run(["git", "-C", str(src), "ls-files", "scripts", "tests", "kmod",
                              "daemon", "handlers", "tools", ".ci"], capture_output=True,
                             text=True).stdout.split()
    code = "\n".join((src / f).read_text(errors="replace") for f in tracked
                     if (src / f).is_file() and not f.startswith("tests/fuzz/corpus"))
    known = set(re.findall(r"\b(?:TCMUD|BENCH)_[A-Z0-9_]+", code))
    for doc in docs(src) + sorted((src / "man").glob("*.[0-9]")):
        for v in sorted(set(re.findall(r"\b(?:TCMUD|BENCH)_[A-Z0-9_]+", doc.read_text()))):
            out.ok(v in known or v in OLD_VARIABLES,
                   f"{doc.relative_to(src)}: {v} is read nowhere in the tree")


def check_unit_layout(src, out):
    for d in sorted(p for p in (src / "tests/unit").iterdir() if p.is_dir()):
        parts = [src / top / d.name for top in ("daemon", "handlers", "tools")]
        out.ok(any(p.is_dir() for p in parts), f"tests/unit/{d.name}/ names no part of "
               "daemon/, handlers/ or tools/ (README, Layout)")
        meson = (d / "meson.build").read_text() if (d / "meson.build").is_file() else ""
        for f in sorted(d.glob("*.cpp")):
            # Helpers a test program links (a harness, a fake) are not tests;
            # a test is a source that holds TEST_CASEs.
            if "TEST_CASE" in f.read_text(errors="replace"):
                out.ok(f.name.endswith("_test.cpp"), f"{f.relative_to(src)}: a test file "
                       "not named *_test.cpp (README, Layout)")
            out.ok(f"'{f.name}'" in meson or f.name in meson,
                   f"{f.relative_to(src)}: not built by {d.name}/meson.build")


def main():
    src = pathlib.Path(sys.argv[1])
    # The tree's files come from git; a tarball of it is not checked (skip).
    if subprocess.run(["git", "-C", str(src), "rev-parse", "--is-inside-work-tree"],
                      capture_output=True).returncode != 0:
        print(f"{src} is not a git checkout: skip")
        return 77
    tcmud_help = subprocess.run([sys.argv[2], "--help"], capture_output=True, text=True).stdout
    tcmudctl_help = subprocess.run([sys.argv[3], "--help"], capture_output=True,
                                   text=True).stdout
    out = lint()
    check_paths(src, out)
    check_scenarios(src, out)
    check_options(src, tcmud_help, tcmudctl_help, out)
    check_keys(src, out)
    check_defaults(src, tcmud_help, out)
    check_variables(src, out)
    check_unit_layout(src, out)
    print(f"doc-promises: {out.checked} promises checked, {out.bad} broken")
    return 1 if out.bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""README.md against the tree (ctest readme): every fenced block is checked by its kind, and a
block or line no rule covers fails the test.
  - cpp, c: compiled with this build's compiler and headers. A fragment's lines go inside main()
    (its #include lines above), after the declarations of the names it leaves to the reader, which
    README gives in a comment just before the block: <!-- readme-check: float *a, *b; -->.
  - python: run with this build's module (its spacedepth.torch part where torch is installed).
  - cmake: each line is a call that generators/CMakeLists.txt makes, or (the consumer's snippet,
    with find_package) built and linked by tests/check_install.sh.
  - plain blocks (shell): each command must exist as written: make targets and variables in the
    Makefile, CMake presets, -D variables and --build targets of this build, scripts in the tree,
    and the CLI's subcommands and options (a synopsis line's --options must all be in its --help).
  - its list of the C enums' names is exactly the enumerators spacedepth_c.h declares.
usage: check_readme.py --readme README.md --source SRC --build BUILD --cxx CXX --cc CC --cli CLI
                       --python PY
       check_readme.py --readme README.md --consumer DIR   (tests/check_install.sh)
  writes DIR/CMakeLists.txt, README's CMake consumer snippet around an executable `app`, and
  DIR/app.cpp, README's first C++ example as a program.
"""
import argparse
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

BLOCK = re.compile(r"(?:<!-- readme-check: (?P<prelude>.*?) -->\n)?^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.M | re.S)


def enum_names(header):
    text = header.read_text()
    names = set()
    for body in re.findall(r"typedef enum \w+ \{(.*?)\}", text, re.S):
        body = re.sub(r"/\*.*?\*/|SD_ENUM_RANGE\(\w+\)", "", body, flags=re.S)
        names |= set(re.findall(r"\b(SD_[A-Z0-9_]+)\b", body))
    return names - {"SD_DTYPE_COUNT"}


class Checker:
    def __init__(self, args):
        self.a = args
        self.src = pathlib.Path(args.source)
        self.build = pathlib.Path(args.build)
        self.failures = []
        self.checked = 0
        makefile = (self.src / "Makefile").read_text()
        self.make_targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
        self.make_vars = set(re.findall(r"^(\w+)\s*\??=", makefile, re.M)) | set(re.findall(r"\$\((\w+)\)", makefile))
        presets = json.loads((self.src / "CMakePresets.json").read_text())
        self.presets = {p["name"] for p in presets["configurePresets"]}
        self.cmake_vars = set(re.findall(r"^(\w+)(?::\w+)?=", (self.build / "CMakeCache.txt").read_text(), re.M))
        cmake_text = "\n".join(p.read_text() for p in self.src.rglob("*.cmake")) + "\n".join(
            p.read_text() for p in self.src.rglob("CMakeLists.txt") if "build" not in p.parts)
        self.cmake_vars |= set(re.findall(r"\b(SPACEDEPTH_\w+|CMAKE_\w+)\b", cmake_text))
        ninja = subprocess.run(["ninja", "-C", str(self.build), "-t", "targets", "all"], capture_output=True, text=True)
        self.build_targets = {line.split(":")[0].rsplit("/", 1)[-1] for line in ninja.stdout.splitlines()}
        self.help = {}

    def fail(self, where, what):
        self.failures.append(f"README line {where}: {what}")

    # --- C and C++ ---------------------------------------------------------------------------
    def compile(self, line, lang, prelude, body):
        # A block with #include lines compiles with those alone, as written; a fragment gets the
        # library's header, and the prelude's own #include lines.
        prelude = (prelude or "").splitlines()
        head = [l for l in prelude + body.splitlines() if l.startswith("#include")]
        if not any(l.startswith("#include") for l in body.splitlines()):
            head.insert(0, "#include <spacedepth/spacedepth.h>" if lang == "cpp" else "#include <spacedepth/spacedepth_c.h>")
        lines = [l for l in prelude + body.splitlines() if not l.startswith("#include")]
        source = "\n".join(head) + "\nint main(void) {\n" + "\n".join(lines) + "\nreturn 0;\n}\n"
        compiler = [self.a.cxx, "-std=c++17"] if lang == "cpp" else [self.a.cc, "-std=c11"]
        with tempfile.NamedTemporaryFile("w", suffix="." + lang) as f:
            f.write(source)
            f.flush()
            r = subprocess.run([*compiler, "-fsyntax-only", "-Wall", "-Wno-unused-variable", "-Wno-unused-but-set-variable",
                                f"-I{self.src / 'include'}", f"-I{self.build / 'include'}", f.name],
                               capture_output=True, text=True)
        if r.returncode != 0:
            self.fail(line, f"the {lang} block does not compile:\n{source}\n{r.stderr}")

    # --- Python --------------------------------------------------------------------------------
    def run_python(self, line, body):
        env = dict(os.environ, PYTHONPATH=str(self.build / "python"))
        have_torch = subprocess.run([self.a.python, "-c", "import torch"], capture_output=True).returncode == 0
        if not have_torch:  # the block's torch part needs torch; the rest runs anyway
            body = body.split("import torch")[0]
        r = subprocess.run([self.a.python, "-c", body], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            self.fail(line, f"the python block fails:\n{body}\n{r.stderr[-2000:]}")

    # --- CMake ---------------------------------------------------------------------------------
    def cmake_lines(self, line, body):
        generators = re.sub(r"\s+", " ", (self.src / "generators" / "CMakeLists.txt").read_text())
        if "find_package(SpaceDepth" in body:
            return  # the consumer's snippet: tests/check_install.sh builds it against the install
        for l in body.splitlines():
            call = re.sub(r"\s+", " ", l.split("#")[0].strip())
            if call and call not in generators:
                self.fail(line, f"generators/CMakeLists.txt makes no call `{call}`")

    # --- shell ---------------------------------------------------------------------------------
    def cli_help(self, sub):
        if sub not in self.help:
            r = subprocess.run([self.a.cli, *([sub] if sub else []), "--help"], capture_output=True, text=True)
            self.help[sub] = r.stdout if r.returncode == 0 else None
        return self.help[sub]

    def check_cli(self, line, words):
        sub = words[1] if len(words) > 1 and not words[1].startswith("-") else ""
        text = self.cli_help(sub)
        if text is None:
            self.fail(line, f"the CLI has no subcommand `{sub}`")
            return
        for opt in re.findall(r"(--[\w-]+)", " ".join(words[2:])):
            if not re.search(re.escape(opt) + r"\b", text):
                self.fail(line, f"`spacedepth {sub} --help` has no option {opt}")

    def check_command(self, line, words):
        prog = words[0]
        if prog == "make":
            for w in words[1:]:
                if "=" in w:
                    var = w.split("=")[0]
                    if var not in self.make_vars:
                        self.fail(line, f"the Makefile has no variable {var}")
                elif not w.startswith("-") and w not in self.make_targets:
                    self.fail(line, f"the Makefile has no target `{w}`")
        elif prog.endswith("cmake"):
            for i, w in enumerate(words):
                if w.startswith("-D"):
                    var = w[2:].split("=")[0].split(":")[0]
                    if var not in self.cmake_vars:
                        self.fail(line, f"this build knows no CMake variable {var}")
                if w == "--preset" and words[i + 1] not in self.presets:
                    self.fail(line, f"CMakePresets.json has no preset {words[i + 1]}")
                if w == "--target":
                    for t in words[i + 1:]:
                        if t.startswith("-"):
                            break
                        if t not in self.build_targets:
                            self.fail(line, f"this build has no target {t}")
        elif prog.endswith("/spacedepth") or prog == "spacedepth":
            self.check_cli(line, words)
        elif prog in ("pip", "pip3"):
            if words[1:] != ["install", "."]:
                self.fail(line, f"unchecked pip command {' '.join(words)}")
            # ctest python_wheel and `pip install .` in the note's timings: pyproject.toml builds it
            elif not (self.src / "pyproject.toml").exists():
                self.fail(line, "no pyproject.toml for `pip install .`")
        elif prog == "git" and words[1:2] == ["clone"]:
            pass  # the fresh-clone recipe; the rest of the line is checked as its own commands
        elif prog == "cd":
            pass
        elif (self.src / prog).exists():
            if not os.access(self.src / prog, os.X_OK):
                self.fail(line, f"{prog} is not executable")
        else:
            self.fail(line, f"no rule checks the command `{' '.join(words)}`")

    def shell(self, line, body):
        # Continuation lines join their command; a synopsis line (starting with spaces, no
        # program) belongs to the command above it.
        commands = []
        for l in body.replace("\\\n", " ").splitlines():
            code = l.split("#")[0].rstrip()
            if not code.strip():
                continue
            if l.startswith(" ") and commands:
                commands[-1] += " " + code.strip()
            else:
                commands.append(code.strip())
        for c in commands:
            env_free = re.sub(r"^(\w+=\S+\s+)+", "", c)  # VAR=value prefixes
            for part in re.split(r"\s*(?:&&|\|\||;)\s*", env_free):
                part = re.sub(r"^(\w+=\S+\s+)+", "", part)
                # A synopsis's alternatives (a|b) and optional parts ([...]) are words, not pipes.
                words = shlex.split(part.replace("|", "_").replace("[", "").replace("]", ""))
                if words:
                    self.check_command(line, words)

    def run(self):
        text = pathlib.Path(self.a.readme).read_text()
        listed = re.search(r"^- The C enums' names \(`spacedepth_c.h`\):(.*?)(?=^- |\n\n)", text, re.M | re.S)
        if not listed:
            self.failures.append("README has no list of the C enums' names")
        else:
            in_readme = set(re.findall(r"`(SD_[A-Z0-9_]+)`", listed.group(1)))
            declared = enum_names(self.src / "include" / "spacedepth" / "spacedepth_c.h")
            if in_readme != declared:
                self.failures.append(f"README's C enum names differ from spacedepth_c.h: missing "
                                     f"{sorted(declared - in_readme)}, not declared {sorted(in_readme - declared)}")
        for m in BLOCK.finditer(text):
            line = text.count("\n", 0, m.start("body"))
            lang, body, prelude = m["lang"], m["body"], m["prelude"]
            self.checked += 1
            if lang in ("cpp", "c"):
                self.compile(line, lang, prelude, body)
            elif lang == "python":
                self.run_python(line, body)
            elif lang == "cmake":
                self.cmake_lines(line, body)
            elif lang == "":
                self.shell(line, body)
            else:
                self.fail(line, f"no rule checks a ```{lang} block")
        if self.failures:
            sys.exit("FAIL: " + "\nFAIL: ".join(self.failures))
        print(f"ok: README's {self.checked} code blocks and its C enum list match the tree")


def write_consumer(readme, out):
    blocks = list(BLOCK.finditer(pathlib.Path(readme).read_text()))
    first_cpp = next(m["body"] for m in blocks if m["lang"] == "cpp")
    snippet = next(m["body"] for m in blocks if m["lang"] == "cmake" and "find_package(SpaceDepth" in m["body"])
    head = [l for l in first_cpp.splitlines() if l.startswith("#include")]
    body = [l for l in first_cpp.splitlines() if not l.startswith("#include")]
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # The example's own check: it prints the message and fails where the call fails.
    (out / "app.cpp").write_text("\n".join(head) + "\nint main() {\n" + "\n".join(body) + "\nreturn s.ok() ? 0 : 1;\n}\n")
    cmake = []
    for l in snippet.splitlines():
        if l.startswith("target_link_libraries(app"):
            cmake.append("add_executable(app app.cpp)")
        cmake.append(l)
    (out / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.16)\nproject(readme_app LANGUAGES CXX)\n"
                                        "set(CMAKE_CXX_STANDARD 17)\n" + "\n".join(cmake) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--readme", required=True)
    ap.add_argument("--consumer", help="write README's CMake consumer into this directory and stop")
    for name in ("source", "build", "cxx", "cc", "cli", "python"):
        ap.add_argument(f"--{name}")
    args = ap.parse_args()
    if args.consumer:
        write_consumer(args.readme, args.consumer)
        return
    missing = [n for n in ("source", "build", "cxx", "cc", "cli", "python") if getattr(args, n) is None]
    if missing:
        ap.error("missing " + ", ".join("--" + n for n in missing))
    Checker(args).run()


if __name__ == "__main__":
    main()

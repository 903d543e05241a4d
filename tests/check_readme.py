"""README.md against the tree (ctest readme):
  - its list of the C enums' names is exactly the enumerators spacedepth_c.h declares;
  - its first C++ example, the one a newcomer copies first, compiles as written (its lines
    inside main(), its #include lines above), with the compiler and headers of this build.
usage: check_readme.py README C_HEADER CXX INCLUDE_DIR [INCLUDE_DIR...]
"""
import re
import subprocess
import sys
import tempfile


def enum_names(header):
    text = open(header).read()
    names = set()
    for body in re.findall(r"typedef enum \w+ \{(.*?)\}", text, re.S):
        body = re.sub(r"/\*.*?\*/|SD_ENUM_RANGE\(\w+\)", "", body, flags=re.S)
        names |= set(re.findall(r"\b(SD_[A-Z0-9_]+)\b", body))
    return names - {"SD_DTYPE_COUNT"}


def main():
    readme, header, cxx, includes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    text = open(readme).read()
    failures = []

    listed = re.search(r"^- The C enums' names \(`spacedepth_c.h`\):(.*?)(?=^- |\n\n)", text, re.M | re.S)
    if not listed:
        failures.append("README has no list of the C enums' names")
    else:
        in_readme = set(re.findall(r"`(SD_[A-Z0-9_]+)`", listed.group(1)))
        declared = enum_names(header)
        if in_readme != declared:
            failures.append(f"README's C enum names differ from {header}: missing {sorted(declared - in_readme)}, "
                            f"not declared {sorted(in_readme - declared)}")
        else:
            print(f"ok: README lists the {len(declared)} C enum names")

    first = re.search(r"```cpp\n(.*?)```", text, re.S).group(1)
    head = [line for line in first.splitlines() if line.startswith("#include")]
    body = [line for line in first.splitlines() if not line.startswith("#include")]
    source = "\n".join(head) + "\nint main() {\n" + "\n".join(body) + "\nreturn 0;\n}\n"
    with tempfile.NamedTemporaryFile("w", suffix=".cpp") as f:
        f.write(source)
        f.flush()
        r = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", *(f"-I{d}" for d in includes), f.name],
                           capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"README's first C++ example does not compile:\n{source}\n{r.stderr}")
    else:
        print("ok: README's first C++ example compiles")
    if failures:
        sys.exit("FAIL: " + "\nFAIL: ".join(failures))


if __name__ == "__main__":
    main()
